//! Route primitives (`[primitives]`, spec §4.4): how often the watcher
//! ticks, how long a replica holds a record it claimed, how long a
//! conditional stays armed, and the live gate.

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// Primitive settings (`[primitives]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PrimitivesConfig {
    /// How often each replica's watcher looks for due schedules and armed
    /// conditionals, ms (default 1000).
    pub tick_interval_ms: u64,
    /// How long a replica holds a record it claimed for one run; a run
    /// whose replica died is picked up once it lapses, ms (default 60000).
    pub lease_ms: u64,
    /// How long a conditional stays armed when the request gives no
    /// `expiresAt`, seconds (default 2592000 = 30 days).
    pub conditional_ttl_secs: u64,
    /// The execution gate (spec §4.4): runs of `live:true` records move
    /// funds only when this is on. `PRIMITIVES_LIVE=1` in the host's
    /// environment turns it on (default false: every run is simulated).
    pub live: bool,
}

impl Default for PrimitivesConfig {
    fn default() -> Self {
        PrimitivesConfig {
            tick_interval_ms: 1_000,
            lease_ms: 60_000,
            conditional_ttl_secs: 30 * 24 * 3_600,
            live: false,
        }
    }
}

impl PrimitivesConfig {
    /// Refuses zero values, naming the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let keys = [
            ("primitives.tick_interval_ms", self.tick_interval_ms),
            ("primitives.lease_ms", self.lease_ms),
            ("primitives.conditional_ttl_secs", self.conditional_ttl_secs),
        ];
        match keys.iter().find(|(_, v)| *v == 0) {
            Some((key, _)) => Err(ConfigError(format!("{key} must be greater than 0"))),
            None => Ok(()),
        }
    }
}
