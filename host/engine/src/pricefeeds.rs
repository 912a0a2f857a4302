//! The price inputs the host uses (spec §4.1 `GET /api/pricefeeds`), as
//! feeds named by pair `<ASSET>/USD`, each saying where it comes from:
//!
//! - `source: "chain"`: an on-chain Chainlink-style feed of `[[pricefeeds]]`
//!   as the price book last read it ([`super::oracle`]): its chain,
//!   address, raw `answer` with `answerDecimals`, `roundId`, `updatedAt`,
//!   `heartbeatSecs`, `stale`, and `inUse` (fresh and positive: the fee
//!   maths and conditionals use it);
//! - `source: "config"`: the configured fallbacks (`[quote]`), used only
//!   for pairs that have no feed (`inUse: false` when a feed supersedes
//!   them): a chain's native asset (`quote.native_usd_e6.<chainId>`, else
//!   the built-in default for that chain), `quote.token_usd_e6.<SYMBOL>`,
//!   and `quote.stablecoins` pegged at exactly 1 USD.
//!
//! `value` is a decimal string of micro-USD (`decimals: 6`), the unit the
//! fee maths uses; `usd` is the same value written as a decimal.

use super::{
    oracle::{answer_usd_e6, wrapped_underlying, PriceBook, Reading, Usable},
    prices::ONE_USD_E6,
    tokens::evm_native_symbol,
};
use relay_config::HostConfig;
use serde::Serialize;
use utoipa::ToSchema;

/// One price feed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Feed {
    /// `<ASSET>/USD`.
    pub pair: String,
    /// The asset.
    pub asset: String,
    /// `native`, `token` or `stablecoin`.
    pub kind: String,
    /// The chain, for a native asset.
    pub chain_id: Option<u64>,
    /// Micro-USD, decimal string.
    pub value: String,
    /// Decimals of `value` (6).
    pub decimals: u8,
    /// The same as a decimal USD string.
    pub usd: String,
    /// Where it comes from: `chain` (an on-chain feed) or `config`.
    pub source: String,
    /// The configuration key.
    pub origin: String,
    /// Whether read from an on-chain feed.
    pub on_chain: bool,
    /// Whether the host prices with it now (a fresh, positive feed; a
    /// configured price whose pair has no feed).
    pub in_use: bool,
    /// The on-chain feed's contract.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Its raw answer, integer string (may be zero or negative).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Decimals of `answer` (the feed's `decimals()`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_decimals: Option<u8>,
    /// Its round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_id: Option<String>,
    /// When the answer was written, unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<u64>,
    /// Older than this (by the host's clock) is stale, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heartbeat_secs: Option<u64>,
    /// Whether `updatedAt` is older than the heartbeat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// Why an on-chain feed is not in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `GET /api/pricefeeds`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PriceFeeds {
    /// Every feed.
    pub feeds: Vec<Feed>,
    /// How many.
    pub count: usize,
    /// How many are on chain.
    pub on_chain_feeds: usize,
    /// About the sources.
    pub note: String,
}

/// One configured feed.
fn feed(asset: &str, usd_e6: u64, kind: &str, origin: String, chain: Option<u64>) -> Feed {
    Feed {
        pair: format!("{}/USD", asset.to_ascii_uppercase()),
        asset: asset.to_ascii_uppercase(),
        kind: kind.into(),
        chain_id: chain,
        value: usd_e6.to_string(),
        decimals: 6,
        usd: format!("{}.{:06}", usd_e6 / ONE_USD_E6, usd_e6 % ONE_USD_E6),
        source: "config".into(),
        origin,
        on_chain: false,
        in_use: true,
        address: None,
        answer: None,
        answer_decimals: None,
        round_id: None,
        updated_at: None,
        heartbeat_secs: None,
        stale: None,
        reason: None,
    }
}

/// One on-chain feed as last read, judged at `now`.
fn chain_feed(r: &Reading, now: u64) -> Feed {
    let f = &r.feed;
    let usable = r.usable(now);
    let usd_e6 = r
        .round
        .and_then(|x| answer_usd_e6(x.answer, x.decimals))
        .unwrap_or(0);
    let (in_use, stale, reason) = match usable {
        Usable::Fresh(_) => (true, false, None),
        Usable::Refused { stale, reason } => (false, stale, Some(reason)),
    };
    Feed {
        source: "chain".into(),
        origin: format!("pricefeeds: {} on chain {}", f.address, f.chain),
        on_chain: true,
        in_use,
        address: Some(f.address.clone()),
        answer: r.round.map(|x| x.answer.to_string()),
        answer_decimals: r.round.map(|x| x.decimals),
        round_id: r.round.map(|x| x.round_id.to_string()),
        updated_at: r.round.map(|x| x.updated_at),
        heartbeat_secs: Some(f.heartbeat_secs),
        stale: Some(stale),
        reason,
        ..feed(&f.asset(), usd_e6, "feed", String::new(), Some(f.chain))
    }
}

/// Every price input of `book`: its on-chain feeds, then the configured
/// fallbacks (`inUse: false` where a feed supersedes them).
pub fn view(book: &PriceBook) -> PriceFeeds {
    let now = book.now_secs();
    let readings = book.readings();
    let has_feed = |pair: &str| {
        readings
            .iter()
            .any(|r| r.feed.pair.eq_ignore_ascii_case(pair))
    };
    let mut out: Vec<Feed> = readings.iter().map(|r| chain_feed(r, now)).collect();
    let on_chain = out.len();
    let configured = feeds(book.config()).feeds.into_iter().map(|mut f| {
        let underlying = wrapped_underlying(&f.asset);
        let superseded = has_feed(&f.pair)
            || (f.kind != "native" && underlying.is_some_and(|u| has_feed(&format!("{u}/USD"))));
        f.in_use = !superseded;
        f
    });
    out.extend(configured);
    PriceFeeds {
        count: out.len(),
        feeds: out,
        on_chain_feeds: on_chain,
        note: "source chain: an on-chain Chainlink-style feed the host reads (answer ≤ 0 or updatedAt older than heartbeatSecs is never used); source config: a configured fallback, used only for pairs with no feed (inUse). value is micro-USD as a decimal string".into(),
    }
}

/// The configured price inputs (`[quote]`), as if no feed were configured.
pub fn feeds(config: &HostConfig) -> PriceFeeds {
    let q = &config.quote;
    let mut out: Vec<Feed> = config
        .chain_ids()
        .into_iter()
        .map(|id| {
            let origin = match q.native_usd_e6.contains_key(&id.to_string()) {
                true => format!("quote.native_usd_e6.{id}"),
                false => format!("built-in default for chain {id} (set quote.native_usd_e6.{id})"),
            };
            feed(
                evm_native_symbol(id),
                q.native_usd_e6(id),
                "native",
                origin,
                Some(id),
            )
        })
        .collect();
    out.extend(q.token_usd_e6.iter().map(|(symbol, usd_e6)| {
        let origin = format!("quote.token_usd_e6.{symbol}");
        feed(symbol, *usd_e6, "token", origin, None)
    }));
    out.extend(q.stablecoins.iter().map(|symbol| {
        let origin = "quote.stablecoins (pegged at par)".to_string();
        feed(symbol, ONE_USD_E6, "stablecoin", origin, None)
    }));
    PriceFeeds {
        count: out.len(),
        feeds: out,
        on_chain_feeds: 0,
        note: "configured inputs only ([quote] native_usd_e6, token_usd_e6, stablecoins); value is micro-USD as a decimal string".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_config::ChainConfig;

    #[test]
    fn natives_tokens_and_stablecoins_are_named_by_pair_with_their_origin() {
        let mut c = HostConfig::default();
        for id in ["8453", "56"] {
            c.chains.insert(id.into(), ChainConfig::default());
        }
        c.quote.native_usd_e6.insert("8453".into(), 2_500_123_456);
        let v = serde_json::to_value(feeds(&c)).unwrap();
        let f = v["feeds"].as_array().unwrap();
        assert_eq!(f[0]["pair"], "BNB/USD");
        assert_eq!(f[0]["value"], "600000000");
        assert!(f[0]["origin"].as_str().unwrap().starts_with("built-in"));
        assert_eq!(f[1]["pair"], "ETH/USD");
        assert_eq!(f[1]["usd"], "2500.123456");
        assert_eq!(f[1]["origin"], "quote.native_usd_e6.8453");
        let pairs: Vec<&str> = f.iter().map(|x| x["pair"].as_str().unwrap()).collect();
        assert!(
            pairs.contains(&"WBTC/USD") && pairs.contains(&"USDC/USD"),
            "{pairs:?}"
        );
        assert!(f
            .iter()
            .all(|x| x["source"] == "config" && x["onChain"] == false));
    }
}
