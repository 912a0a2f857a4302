//! The price inputs the host uses (spec §4.1 `GET /api/pricefeeds`), as
//! feeds named by pair `<ASSET>/USD`.
//!
//! Honestly labelled: every price here comes from configuration
//! (`[quote]`), not from an on-chain oracle — the devnet has no price feed
//! contracts, and the fee maths ([`super::prices`]) reads exactly these
//! values. Each feed says where its value comes from:
//!
//! - a chain's native asset: `quote.native_usd_e6.<chainId>`, else the
//!   built-in default for that chain (one feed per configured chain, since
//!   two chains may price the same symbol differently);
//! - `quote.token_usd_e6.<SYMBOL>`: tokens that are not stablecoins;
//! - `quote.stablecoins`: pegged at exactly 1 USD.
//!
//! `value` is a decimal string of micro-USD (`decimals: 6`), the unit the
//! fee maths uses; `usd` is the same value written as a decimal.

use super::{prices::ONE_USD_E6, tokens::evm_native_symbol};
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
    /// Where it comes from (`config`).
    pub source: String,
    /// The configuration key.
    pub origin: String,
    /// Whether read from an on-chain feed.
    pub on_chain: bool,
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

/// One feed.
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
    }
}

/// Every price input in force.
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
        note: "every price is a configured input ([quote] native_usd_e6, token_usd_e6, stablecoins), not an on-chain oracle: the devnet deploys no price feeds. These are the exact values the fee maths converts relayer gas with; value is micro-USD as a decimal string".into(),
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
