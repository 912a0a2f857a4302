//! On-chain price feeds (`[[pricefeeds]]`): Chainlink-style
//! `AggregatorV3Interface` contracts the host reads (`latestRoundData`,
//! `decimals`) for the USD price of an asset. A pair with a feed is priced
//! by its feed only (a stale or non-positive answer leaves it unpriced);
//! `[quote]` prices are the fallback for pairs with no feed.
//!
//! ```toml
//! [[pricefeeds]]
//! pair = "ETH/USD"
//! chain = 8453
//! address = "0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70"
//! heartbeat_secs = 3600
//! ```

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// One feed the host reads (`[[pricefeeds]]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriceFeedConfig {
    /// `<ASSET>/USD` (`ETH/USD`, `BTC/USD`, `USDC/USD`).
    pub pair: String,
    /// The EVM chain the feed lives on (one of `[chains]`: read over its RPC).
    pub chain: u64,
    /// The aggregator (or proxy) contract.
    pub address: String,
    /// An answer whose `updatedAt` is older than this (by the host's clock)
    /// is stale and never used, seconds (default 3600; set the feed's own
    /// heartbeat).
    #[serde(default = "default_heartbeat")]
    pub heartbeat_secs: u64,
}

fn default_heartbeat() -> u64 {
    3_600
}

impl PriceFeedConfig {
    /// The pair's asset (`ETH` of `ETH/USD`), upper case.
    pub fn asset(&self) -> String {
        let asset = self.pair.split('/').next().unwrap_or_default();
        asset.trim().to_ascii_uppercase()
    }

    /// Refuses a pair that is not `<ASSET>/USD`, a zero heartbeat, a bad
    /// address or a chain that is not configured, naming the key.
    pub fn check(&self, i: usize, chains: &[u64]) -> Result<(), ConfigError> {
        let key = |k: &str| format!("pricefeeds[{i}].{k}");
        let bad = |k: &str, why: String| Err(ConfigError(format!("{}: {why}", key(k))));
        let quote = self.pair.split_once('/').map(|(a, q)| (a.trim(), q.trim()));
        if !matches!(quote, Some((a, q)) if !a.is_empty() && q.eq_ignore_ascii_case("USD")) {
            return bad("pair", format!("{:?} is not <ASSET>/USD", self.pair));
        }
        if self.heartbeat_secs == 0 {
            return bad("heartbeat_secs", "must be greater than 0".into());
        }
        if !crate::is_address(&self.address) {
            return bad(
                "address",
                format!(
                    "{:?} is not a 0x-prefixed 20-byte hex address",
                    self.address
                ),
            );
        }
        if !chains.contains(&self.chain) {
            return bad(
                "chain",
                format!("chain {} is not configured in [chains]", self.chain),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(pair: &str, heartbeat: u64, address: &str) -> PriceFeedConfig {
        PriceFeedConfig {
            pair: pair.into(),
            chain: 8453,
            address: address.into(),
            heartbeat_secs: heartbeat,
        }
    }

    #[test]
    fn bad_feeds_are_refused_with_their_key() {
        let ok = "0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70";
        assert!(feed("eth/usd", 60, ok).check(0, &[8453]).is_ok());
        assert_eq!(feed("eth/usd", 60, ok).asset(), "ETH");
        for (f, chains, key) in [
            (feed("ETH", 60, ok), vec![8453], "pricefeeds[3].pair"),
            (feed("ETH/EUR", 60, ok), vec![8453], "pricefeeds[3].pair"),
            (
                feed("ETH/USD", 0, ok),
                vec![8453],
                "pricefeeds[3].heartbeat_secs",
            ),
            (
                feed("ETH/USD", 60, "0x1"),
                vec![8453],
                "pricefeeds[3].address",
            ),
            (feed("ETH/USD", 60, ok), vec![1], "pricefeeds[3].chain"),
        ] {
            let e = f.check(3, &chains).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }
}
