//! Retention (`[retention]`, spec §8.2): when counterparty addresses of
//! settled routes turn into keyed tags, and where the tag key comes from.

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// Retention settings (`[retention]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetentionConfig {
    /// Routes settled (terminal) longer ago than this have their
    /// counterparty addresses replaced by keyed tags, days (default 30).
    pub after_days: u32,
    /// How often the retention job runs, ms (default 86400000: daily; it
    /// also runs at start).
    pub interval_ms: u64,
    /// The environment variable holding the tag key (default
    /// `RELAY_RETENTION_SECRET`). Without it the job does not run and says
    /// so at start: addresses are kept until a key is set.
    pub secret_env: String,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        RetentionConfig {
            after_days: 30,
            interval_ms: 86_400_000,
            secret_env: "RELAY_RETENTION_SECRET".into(),
        }
    }
}

impl RetentionConfig {
    /// Refuses zero values, naming the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.after_days == 0 {
            return Err(ConfigError(
                "retention.after_days must be greater than 0".into(),
            ));
        }
        if self.interval_ms == 0 {
            return Err(ConfigError(
                "retention.interval_ms must be greater than 0".into(),
            ));
        }
        Ok(())
    }

    /// The tag key from the environment, when set and not empty.
    pub fn secret(&self) -> Option<String> {
        std::env::var(&self.secret_env)
            .ok()
            .filter(|s| !s.is_empty())
    }
}
