//! The price book: the USD price of an asset pair, from the on-chain
//! Chainlink-style feeds of `[[pricefeeds]]` first, configuration second.
//!
//! A background job ([`PriceBook::refresh`], every `quote.feed_refresh_ms`)
//! reads every configured feed (`decimals()`, `latestRoundData()`) into an
//! in-memory snapshot; the fee maths reads that snapshot synchronously.
//! The rules, applied at read time by the host's clock:
//!
//! - an answer ≤ 0 is never used, nor one whose `updatedAt` is older than
//!   the feed's `heartbeat_secs`, nor a feed not read yet;
//! - a pair that has a feed is priced by its feeds only: when none is
//!   usable the pair is unpriced ([`Unpriced::Feed`]), never priced from
//!   configuration;
//! - a pair with no feed configured falls back to `[quote]`
//!   ([`super::prices`]: `native_usd_e6`, `token_usd_e6`, `stablecoins`).
//!
//! With several feeds for one pair (one per chain), a chain's own feed is
//! the price of its native asset on that chain ([`PriceBook::native_usd_e6`]);
//! otherwise the usable feed with the latest `updatedAt` wins.
//!
//! Answers become micro-USD with integer maths only ([`answer_usd_e6`]).

use std::sync::{Arc, RwLock};

use alloy::primitives::{Address, I256, U256};
use relay_chain::{pricefeed::FeedRound, reader::ChainReader};
use relay_config::{HostConfig, PriceFeedConfig};
use relay_plugin_api::{ChainRef, Token};
use relay_types::clock::SharedClock;

use super::{prices, tokens::evm_native_symbol};

/// Why the book has no price for a pair.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unpriced {
    /// No feed and no configured price.
    #[error("no price for {0}: configure a [[pricefeeds]] feed or a [quote] price")]
    NoPrice(String),
    /// The pair has feeds and none is usable (stale, non-positive, not read).
    #[error("price of {pair} unavailable: {reasons}")]
    Feed {
        /// The pair.
        pair: String,
        /// Why each feed was refused.
        reasons: String,
    },
}

/// The last reading of one configured feed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    /// The feed as configured.
    pub feed: PriceFeedConfig,
    /// The last round read, if any.
    pub round: Option<FeedRound>,
    /// Why the last read failed, if it did.
    pub error: Option<String>,
}

/// Whether a reading may be used, now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Usable {
    /// Yes: its value, micro-USD.
    Fresh(u64),
    /// No: why.
    Refused {
        /// Older than its heartbeat.
        stale: bool,
        /// Why, in words.
        reason: String,
    },
}

impl Reading {
    /// Judges this reading at `now` (unix seconds).
    pub fn usable(&self, now: u64) -> Usable {
        let refused = |stale, reason: String| Usable::Refused { stale, reason };
        let Some(r) = &self.round else {
            let why = self.error.as_deref().unwrap_or("not read yet");
            return refused(false, format!("not read: {why}"));
        };
        let age = now.saturating_sub(r.updated_at);
        if age > self.feed.heartbeat_secs {
            let hb = self.feed.heartbeat_secs;
            return refused(
                true,
                format!("stale: updated {age} s ago, heartbeat {hb} s"),
            );
        }
        match answer_usd_e6(r.answer, r.decimals) {
            Some(v) => Usable::Fresh(v),
            None => refused(false, format!("answer {} is not a usable price", r.answer)),
        }
    }

    fn describe(&self) -> String {
        format!("{} on chain {}", self.feed.address, self.feed.chain)
    }
}

/// A feed answer with `decimals` decimals in micro-USD, rounded down;
/// `None` when it is not positive, rounds to zero or does not fit a `u64`.
pub fn answer_usd_e6(answer: I256, decimals: u8) -> Option<u64> {
    if answer <= I256::ZERO {
        return None;
    }
    let raw = answer.into_raw();
    let ten = |d: u8| U256::from(10u8).checked_pow(U256::from(d));
    let v = if decimals <= 6 {
        raw.checked_mul(ten(6 - decimals)?)?
    } else {
        raw / ten(decimals - 6).unwrap_or(U256::MAX)
    };
    u64::try_from(v).ok().filter(|v| *v > 0)
}

/// The host's USD prices: feed readings and configured fallbacks.
#[derive(Debug)]
pub struct PriceBook {
    config: Arc<HostConfig>,
    reader: Arc<ChainReader>,
    clock: SharedClock,
    readings: RwLock<Vec<Reading>>,
}

impl PriceBook {
    /// A book over `config`'s feeds, read through `reader`; none read yet.
    pub fn new(config: Arc<HostConfig>, reader: Arc<ChainReader>, clock: SharedClock) -> Self {
        let readings = config
            .pricefeeds
            .iter()
            .map(|f| Reading {
                feed: f.clone(),
                round: None,
                error: None,
            })
            .collect();
        PriceBook {
            config,
            reader,
            clock,
            readings: RwLock::new(readings),
        }
    }

    /// Reads every feed once, concurrently; a failed read keeps the last
    /// round (it goes stale by its heartbeat) and records why. Returns how
    /// many were read.
    #[tracing::instrument(skip_all, fields(feeds = self.config.pricefeeds.len()))]
    pub async fn refresh(&self) -> usize {
        let reader = &self.reader;
        let reads = self.config.pricefeeds.iter().map(|f| async move {
            let address: Address = f.address.parse().map_err(|_| "bad address".to_string())?;
            reader
                .feed_round(f.chain, address)
                .await
                .map_err(|e| e.to_string())
        });
        let rounds = futures::future::join_all(reads).await;
        let mut readings = self.readings.write().unwrap_or_else(|e| e.into_inner());
        let mut ok = 0;
        for (reading, round) in readings.iter_mut().zip(rounds) {
            match round {
                Ok(r) => {
                    ok += 1;
                    reading.round = Some(r);
                    reading.error = None;
                }
                Err(e) => {
                    tracing::warn!(pair = %reading.feed.pair, chain = reading.feed.chain, error = %e, "price feed not read");
                    reading.error = Some(e);
                }
            }
        }
        ok
    }

    /// Every configured feed's last reading, in configuration order.
    pub fn readings(&self) -> Vec<Reading> {
        self.readings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Unix seconds by the host's clock.
    pub fn now_secs(&self) -> u64 {
        self.clock.now_secs()
    }

    /// The host's clock the book reads by.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// The configuration the book falls back to.
    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    /// **The USD price of `pair`** (`ETH/USD`, any case), micro-USD: the
    /// freshest usable feed of the pair when it has feeds, else the
    /// configured price (see the module docs).
    pub fn usd_e6(&self, pair: &str) -> Result<u64, Unpriced> {
        let pair = normalise(pair);
        let asset = asset_of(&pair);
        let hit = self.feed_price(&pair, None).or_else(|| {
            let underlying = wrapped_underlying(asset)?;
            self.feed_price(&format!("{underlying}/USD"), None)
        });
        match hit {
            Some(r) => r,
            None => {
                prices::configured_pair_usd_e6(&self.config, asset).ok_or(Unpriced::NoPrice(pair))
            }
        }
    }

    /// The USD price of `chain`'s native asset, micro-USD: the chain's own
    /// feed of its pair, else any feed of the pair, else
    /// `quote.native_usd_e6`.
    pub fn native_usd_e6(&self, chain: u64) -> Result<u64, Unpriced> {
        let pair = format!("{}/USD", evm_native_symbol(chain));
        self.feed_price(&pair, Some(chain))
            .or_else(|| self.feed_price(&pair, None))
            .unwrap_or(Ok(self.config.quote.native_usd_e6(chain)))
    }

    /// The USD price of `token` on `chain`, micro-USD: a chain's native
    /// asset as [`Self::native_usd_e6`]; a token by its `<SYMBOL>/USD`
    /// feed, or (a wrapped `W…` token with no feed of its own) the
    /// underlying's; else the configured price.
    pub fn token_usd_e6(&self, chain: ChainRef, token: &Token) -> Result<u64, Unpriced> {
        if let (ChainRef::Evm(id), None) = (chain, &token.address) {
            return self.native_usd_e6(id);
        }
        let symbol = token.symbol.trim().to_ascii_uppercase();
        let own = format!("{symbol}/USD");
        let underlying = wrapped_underlying(&symbol).map(|s| format!("{s}/USD"));
        let local = chain.evm_id();
        for pair in std::iter::once(own.clone()).chain(underlying) {
            let hit = local
                .and_then(|c| self.feed_price(&pair, Some(c)))
                .or_else(|| self.feed_price(&pair, None));
            if let Some(r) = hit {
                return r;
            }
        }
        prices::configured_usd_e6(&self.config.quote, chain, token).ok_or(Unpriced::NoPrice(own))
    }

    /// The feeds of `pair` (on `chain` only, when given): `None` when it
    /// has none, else the freshest usable one or why none is.
    fn feed_price(&self, pair: &str, chain: Option<u64>) -> Option<Result<u64, Unpriced>> {
        let now = self.clock.now_secs();
        let readings = self.readings.read().unwrap_or_else(|e| e.into_inner());
        let feeds: Vec<&Reading> = readings
            .iter()
            .filter(|r| r.feed.pair.trim().eq_ignore_ascii_case(pair))
            .filter(|r| chain.is_none_or(|c| r.feed.chain == c))
            .collect();
        if feeds.is_empty() {
            return None;
        }
        let mut best: Option<(u64, u64)> = None;
        let mut reasons = Vec::new();
        for r in feeds {
            match r.usable(now) {
                Usable::Fresh(v) => {
                    let at = r.round.map_or(0, |x| x.updated_at);
                    if best.is_none_or(|(b, _)| at > b) {
                        best = Some((at, v));
                    }
                }
                Usable::Refused { reason, .. } => {
                    reasons.push(format!("feed {}: {reason}", r.describe()))
                }
            }
        }
        Some(best.map(|(_, v)| v).ok_or_else(|| Unpriced::Feed {
            pair: pair.to_string(),
            reasons: reasons.join("; "),
        }))
    }
}

/// `eth/usd ` → `ETH/USD`.
fn normalise(pair: &str) -> String {
    pair.trim().to_ascii_uppercase()
}

/// `BTC` of `WBTC`: a wrapped token with no feed of its own reads the
/// underlying's.
pub fn wrapped_underlying(symbol: &str) -> Option<&str> {
    symbol.strip_prefix('W').filter(|s| s.len() > 1)
}

fn asset_of(pair: &str) -> &str {
    pair.split('/').next().unwrap_or(pair)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_types::clock::ManualClock;

    const NOW: u64 = 1_800_000_000;

    fn round(answer: i64, decimals: u8, updated_at: u64) -> FeedRound {
        FeedRound {
            decimals,
            round_id: 1,
            answer: I256::unchecked_from(answer),
            updated_at,
        }
    }

    fn book(feeds: &[(&str, u64, Option<FeedRound>)]) -> PriceBook {
        let c = HostConfig {
            pricefeeds: feeds
                .iter()
                .map(|(pair, chain, _)| PriceFeedConfig {
                    pair: (*pair).into(),
                    chain: *chain,
                    address: format!("0x{chain:040x}"),
                    heartbeat_secs: 60,
                })
                .collect(),
            ..HostConfig::default()
        };
        let reader = Arc::new(ChainReader::new(&c));
        let b = PriceBook::new(Arc::new(c), reader, ManualClock::at(NOW * 1000));
        for (r, (_, _, round)) in b.readings.write().unwrap().iter_mut().zip(feeds) {
            r.round = *round;
        }
        b
    }

    #[test]
    fn answers_become_micro_usd_with_integers_only() {
        let a = |v: i64| I256::unchecked_from(v);
        assert_eq!(answer_usd_e6(a(300_000_000_000), 8), Some(3_000_000_000));
        assert_eq!(
            answer_usd_e6(a(123_456_789), 8),
            Some(1_234_567),
            "rounds down"
        );
        assert_eq!(answer_usd_e6(a(3_000), 0), Some(3_000_000_000));
        assert_eq!(
            answer_usd_e6(a(2_500_000_000_000_000_000), 18),
            Some(2_500_000)
        );
        assert_eq!(answer_usd_e6(a(0), 8), None);
        assert_eq!(answer_usd_e6(a(-5), 8), None);
        assert_eq!(answer_usd_e6(a(1), 8), None, "rounds to zero");
        assert_eq!(answer_usd_e6(I256::MAX, 0), None, "does not fit");
        assert_eq!(answer_usd_e6(I256::MAX, 255), None);
    }

    #[test]
    fn a_fresh_feed_wins_over_configuration() {
        let b = book(&[("ETH/USD", 8453, Some(round(200_000_000_000, 8, NOW - 5)))]);
        assert_eq!(b.usd_e6("eth/usd"), Ok(2_000_000_000));
        assert_eq!(b.native_usd_e6(8453), Ok(2_000_000_000));
        assert_eq!(b.native_usd_e6(1), Ok(2_000_000_000), "any chain's feed");
        assert_eq!(b.usd_e6("BTC/USD"), Ok(60_000_000_000), "no feed: config");
        assert!(matches!(b.usd_e6("PEPE/USD"), Err(Unpriced::NoPrice(_))));
    }

    #[test]
    fn stale_non_positive_and_unread_feeds_are_never_used() {
        for (r, why) in [
            (Some(round(200_000_000_000, 8, NOW - 61)), "stale"),
            (Some(round(0, 8, NOW)), "not a usable price"),
            (Some(round(-1, 8, NOW)), "not a usable price"),
            (None, "not read"),
        ] {
            let b = book(&[("ETH/USD", 8453, r)]);
            let e = b.native_usd_e6(8453).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("ETH/USD"), "{e}");
            assert!(b.usd_e6("ETH/USD").is_err(), "no fallback to config");
        }
    }

    #[test]
    fn a_chains_own_feed_prices_its_native_asset_else_the_freshest() {
        let b = book(&[
            ("ETH/USD", 1, Some(round(300_000_000_000, 8, NOW - 10))),
            ("ETH/USD", 8453, Some(round(310_000_000_000, 8, NOW - 1))),
            ("BTC/USD", 1, Some(round(7_000_000_000_000, 8, NOW))),
            ("USDC/USD", 1, Some(round(99_000_000, 8, NOW - 70))),
        ]);
        assert_eq!(b.native_usd_e6(1), Ok(3_000_000_000));
        assert_eq!(b.usd_e6("ETH/USD"), Ok(3_100_000_000), "latest updatedAt");
        assert_eq!(b.usd_e6("WBTC/USD"), Ok(70_000_000_000));
        let wbtc = Token {
            symbol: "WBTC".into(),
            address: Some("0x2".into()),
            decimals: 8,
        };
        let usdc = Token {
            symbol: "USDC".into(),
            ..wbtc.clone()
        };
        assert_eq!(
            b.token_usd_e6(ChainRef::Evm(8453), &wbtc),
            Ok(70_000_000_000),
            "wrapped: the underlying's feed"
        );
        assert!(
            b.token_usd_e6(ChainRef::Evm(8453), &usdc).is_err(),
            "a stale stablecoin feed is not replaced by the peg"
        );
    }
}
