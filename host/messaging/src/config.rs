//! Sealed messaging's table (`[messaging]`, spec §4.10, §8.2): whether the
//! host serves it, the cover traffic it adds, how long rows are kept, how
//! far a mailbox publication's `ts` may be from the host's clock, and the
//! witness log's name. The release grid, the buckets and the chunk bound
//! are the spec's and not settings.

use relay_config::{ConfigError, HostConfig};
use serde::{Deserialize, Serialize};

/// `[messaging]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MessagingConfig {
    /// Serve `/api/messages/v2/…` (default true; off: every path answers
    /// `MESSAGING_DISABLED`).
    pub enabled: bool,
    /// Cover decoys the host adds, on average, per minute of the grid (a
    /// Poisson process; 0 turns cover traffic off).
    pub decoys_per_minute: f64,
    /// Released rows are kept this many days, then dropped from the feed.
    pub retention_days: u32,
    /// How far a publication's `ts` may be from the host's clock, ms.
    pub max_skew_ms: u64,
    /// The witness log's origin line (a C2SP checkpoint's first line).
    pub witness_origin: String,
}

impl Default for MessagingConfig {
    fn default() -> Self {
        MessagingConfig {
            enabled: true,
            decoys_per_minute: 2.0,
            retention_days: 30,
            max_skew_ms: 300_000,
            witness_origin: "relay.local/messages/v2/witness".into(),
        }
    }
}

/// The table's name.
pub const SECTION: &str = "messaging";

/// The host's check of the table.
pub fn check(config: &HostConfig) -> Result<(), ConfigError> {
    MessagingConfig::from_host(config).map(drop)
}

impl MessagingConfig {
    /// The host's `[messaging]` (defaults for absent keys), checked.
    pub fn from_host(config: &HostConfig) -> Result<Self, ConfigError> {
        let c: MessagingConfig = config.sections.get(SECTION)?;
        let bad = |key: &str, why: &str| Err(ConfigError::new(format!("messaging.{key}: {why}")));
        if !(c.decoys_per_minute.is_finite() && (0.0..=600.0).contains(&c.decoys_per_minute)) {
            return bad("decoys_per_minute", "must be between 0 and 600");
        }
        if c.retention_days == 0 {
            return bad("retention_days", "must be at least 1");
        }
        if c.witness_origin.is_empty() || c.witness_origin.contains(char::is_whitespace) {
            return bad("witness_origin", "must be one word without spaces");
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_read_back_and_nonsense_is_refused() {
        let mut config = HostConfig::default();
        assert_eq!(
            MessagingConfig::from_host(&config).unwrap(),
            MessagingConfig::default()
        );
        config
            .sections
            .edit(SECTION, |m: &mut MessagingConfig| {
                m.decoys_per_minute = -1.0
            })
            .unwrap();
        let e = check(&config).unwrap_err().to_string();
        assert!(e.contains("decoys_per_minute"), "{e}");
        config
            .sections
            .edit(SECTION, |m: &mut MessagingConfig| {
                m.decoys_per_minute = 0.5;
                m.witness_origin = "two words".into();
            })
            .unwrap();
        assert!(check(&config)
            .unwrap_err()
            .to_string()
            .contains("witness_origin"));
    }
}
