//! The warm quote book and the hedged cold fan-out (`[quote_book]`; the
//! engine's `quotebook`, `budget` and `latency` modules describe the
//! behaviour).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// Quote book and hedging settings (`[quote_book]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct QuoteBookConfig {
    /// Whether warm lanes answer from the book (default true). Off: every
    /// quote is a live fan-out.
    pub enabled: bool,
    /// Lanes kept warm, least recently quoted dropped first (default 256).
    pub lanes: usize,
    /// A book answer older than this is never served, ms (default 12000,
    /// the spec's compare window).
    pub stale_ms: u64,
    /// A book answer older than this is refreshed in the background, ms
    /// (default 4000).
    pub refresh_ms: u64,
    /// A lane nobody quoted for this long stops being refreshed and is
    /// dropped, ms (default 120000).
    pub idle_ms: u64,
    /// How often the refresher looks for answers to renew, ms (default 250).
    pub tick_ms: u64,
    /// Upstream requests per minute a rail may spend (the book's refreshes
    /// and live quotes together; default 60). The book never exceeds it.
    pub default_rpm: u32,
    /// Per-rail budget overrides, requests per minute, by rail id.
    pub rail_rpm: BTreeMap<String, u32>,
    /// First back-off after an upstream error (429, 5xx, timeout), ms
    /// (default 1000); doubles per consecutive error.
    pub backoff_base_ms: u64,
    /// Longest back-off, ms (default 60000).
    pub backoff_max_ms: u64,
    /// Cold fan-out soft deadline: this percentage of the slowest p90 among
    /// the faster half of the rails (default 150; 0: off, every rail is
    /// awaited up to the hard deadline).
    pub hedge_factor_pct: u32,
    /// The soft deadline is never below this, ms (default 250).
    pub hedge_min_ms: u64,
    /// Latency samples a rail needs before it counts for the soft deadline
    /// (default 3); with fewer the fan-out waits for every rail.
    pub hedge_min_samples: usize,
}

impl Default for QuoteBookConfig {
    fn default() -> Self {
        QuoteBookConfig {
            enabled: true,
            lanes: 256,
            stale_ms: 12_000,
            refresh_ms: 4_000,
            idle_ms: 120_000,
            tick_ms: 250,
            default_rpm: 60,
            rail_rpm: BTreeMap::new(),
            backoff_base_ms: 1_000,
            backoff_max_ms: 60_000,
            hedge_factor_pct: 150,
            hedge_min_ms: 250,
            hedge_min_samples: 3,
        }
    }
}

impl QuoteBookConfig {
    /// The request budget of `rail`, per minute.
    pub fn rpm(&self, rail: &str) -> u32 {
        self.rail_rpm.get(rail).copied().unwrap_or(self.default_rpm)
    }

    /// Refuses values that cannot work, naming the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let bad = |k: &str, why: &str| Err(ConfigError(format!("quote_book.{k} {why}")));
        if self.lanes == 0 {
            return bad("lanes", "must be greater than 0");
        }
        if self.stale_ms == 0 || self.tick_ms == 0 {
            return bad("stale_ms and tick_ms", "must be greater than 0");
        }
        if self.refresh_ms >= self.stale_ms {
            return bad("refresh_ms", "must be below stale_ms");
        }
        if self.hedge_factor_pct != 0 && self.hedge_factor_pct < 100 {
            return bad("hedge_factor_pct", "must be 0 (off) or at least 100");
        }
        Ok(())
    }
}
