//! The privacy lane's table (`[privacy]`, spec §4.11, §8.2): whether the
//! host serves it, how often the gateway's keys rotate and how long its
//! replay window is. The fixed sizes are the spec's and not settings.

use relay_config::{ConfigError, HostConfig};
use serde::{Deserialize, Serialize};

/// `[privacy]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PrivacyConfig {
    /// Serve the lane (default true; off: every path answers
    /// `PRIVACY_DISABLED`).
    pub enabled: bool,
    /// How long one set of gateway keys is served, hours (default 24); a
    /// request made with the previous set still opens for one more.
    pub key_epoch_hours: u64,
    /// How long an encapsulated key is remembered, ms (default 600000); an
    /// inner request's Date must be within half of it of the gateway's
    /// clock, so a replay outlives neither.
    pub replay_window_ms: u64,
    /// Days between logging a loosened promise and its taking effect
    /// (default 30; [`crate::policy`]).
    pub notice_days: u32,
    /// The cover proof's window, hours (default 24;
    /// [`crate::coverproof`]).
    pub cover_window_hours: u64,
}

impl Default for PrivacyConfig {
    fn default() -> Self {
        PrivacyConfig {
            enabled: true,
            key_epoch_hours: 24,
            replay_window_ms: 600_000,
            notice_days: 30,
            cover_window_hours: 24,
        }
    }
}

/// The table's name.
pub const SECTION: &str = "privacy";

/// The host's check of the table.
pub fn check(config: &HostConfig) -> Result<(), ConfigError> {
    PrivacyConfig::from_host(config).map(drop)
}

impl PrivacyConfig {
    /// The host's `[privacy]` (defaults for absent keys), checked.
    pub fn from_host(config: &HostConfig) -> Result<Self, ConfigError> {
        let c: PrivacyConfig = config.sections.get(SECTION)?;
        let bad = |key: &str, why: &str| Err(ConfigError::new(format!("privacy.{key}: {why}")));
        if c.key_epoch_hours == 0 || c.key_epoch_hours > 24 * 90 {
            return bad("key_epoch_hours", "must be between 1 and 2160");
        }
        if !(10_000..=3_600_000).contains(&c.replay_window_ms) {
            return bad("replay_window_ms", "must be between 10000 and 3600000");
        }
        if c.notice_days > 3_650 {
            return bad("notice_days", "must be at most 3650");
        }
        if c.cover_window_hours == 0 || c.cover_window_hours > 24 * 90 {
            return bad("cover_window_hours", "must be between 1 and 2160");
        }
        Ok(c)
    }

    /// The key epoch, ms.
    pub fn epoch_ms(&self) -> u64 {
        self.key_epoch_hours * 3_600_000
    }
}
