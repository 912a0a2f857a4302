//! The operator's dashboard (`[admin]`): when a relayer balance counts as
//! low, how often balances are re-read for the live view, and how long a
//! dashboard login lasts.

use serde::{Deserialize, Serialize};

/// Dashboard settings (`[admin]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AdminConfig {
    /// A relayer native balance below this many wei (on any chain) is
    /// flagged low (default `10000000000000000`, 0.01 of the native coin).
    pub low_balance_wei: String,
    /// Per chain id, a threshold that replaces `low_balance_wei` there.
    pub low_balance_wei_by_chain: std::collections::BTreeMap<String, String>,
    /// How often the live view re-reads chain balances and float when
    /// nothing else changed, ms (default 15000).
    pub refresh_ms: u64,
    /// How long a dashboard login lasts, seconds (default 43200 = 12 h;
    /// at most 86400: the server refuses an older cookie whatever it
    /// claims).
    pub session_ttl_secs: u64,
}

impl Default for AdminConfig {
    fn default() -> Self {
        AdminConfig {
            low_balance_wei: "10000000000000000".into(),
            low_balance_wei_by_chain: Default::default(),
            refresh_ms: 15_000,
            session_ttl_secs: 12 * 3_600,
        }
    }
}

impl AdminConfig {
    /// The low-balance threshold of `chain`, wei (a value that does not
    /// parse counts as 0: never low).
    pub fn low_balance_wei(&self, chain: u64) -> u128 {
        self.low_balance_wei_by_chain
            .get(&chain.to_string())
            .unwrap_or(&self.low_balance_wei)
            .trim()
            .parse()
            .unwrap_or(0)
    }
}
