//! Policy-gated agent sessions (`[sessions]`, spec §2.13, §4.5): how long
//! a session may live and how often unspent balances of revoked and
//! expired sessions are returned.

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// Session settings (`[sessions]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionsConfig {
    /// The longest a session may live: `policy.expiresAt` at most this far
    /// ahead, seconds (default 2592000 = 30 days).
    pub max_ttl_secs: u64,
    /// How often each replica looks for revoked or expired sessions whose
    /// unspent balance is still to be returned, ms (default 30000).
    pub sweep_interval_ms: u64,
    /// How long a replica holds a session's sweep; a sweep whose replica
    /// died (or that failed) is retried once it lapses, ms (default 60000).
    pub sweep_lease_ms: u64,
}

impl Default for SessionsConfig {
    fn default() -> Self {
        SessionsConfig {
            max_ttl_secs: 30 * 24 * 3_600,
            sweep_interval_ms: 30_000,
            sweep_lease_ms: 60_000,
        }
    }
}

impl SessionsConfig {
    /// Refuses zero values, naming the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let keys = [
            ("sessions.max_ttl_secs", self.max_ttl_secs),
            ("sessions.sweep_interval_ms", self.sweep_interval_ms),
            ("sessions.sweep_lease_ms", self.sweep_lease_ms),
        ];
        match keys.iter().find(|(_, v)| *v == 0) {
            Some((key, _)) => Err(ConfigError(format!("{key} must be greater than 0"))),
            None => Ok(()),
        }
    }
}
