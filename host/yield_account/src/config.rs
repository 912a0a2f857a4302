//! The non-custodial yield account (`[ncaccount]`, spec §4.6): the ERC-4626
//! vaults the host knows per chain, the spend fee, and how the live APY is
//! measured.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use relay_config::{ConfigError, HostConfig};

/// Yield-account settings (`[ncaccount]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct YieldConfig {
    /// The ERC-4626 vault (the yield-bearing token) by chain id; a chain
    /// without one has no yield account (default none; `relay up` sets
    /// every devnet chain's). Its asset must be the chain's `asset` token.
    pub vaults: BTreeMap<String, String>,
    /// The token the vaults hold and spends deliver, by symbol in the
    /// chain's `tokens` (default `USDC`).
    pub asset: String,
    /// The spend fee, basis points of the amount (default 15 = 0.15 %).
    pub fee_bps: u32,
    /// The smallest spend fee, in the asset's base units (default 10000 =
    /// 0.01 USD of a 6-decimal stablecoin).
    pub min_fee_units: u64,
    /// How far back the APY looks: the share price now against this many
    /// blocks ago (default 50; fewer when the vault is younger).
    pub apy_window_blocks: u64,
    /// How often a replica picks up spends whose holder died (redeemed but
    /// not routed, or routed and not yet settled), ms; 0 turns the job off
    /// (default 2000).
    pub resume_interval_ms: u64,
    /// How long a replica holds a spend it drives before another may take
    /// it over, ms (default 60000).
    pub lease_ms: u64,
}

impl Default for YieldConfig {
    fn default() -> Self {
        YieldConfig {
            vaults: BTreeMap::new(),
            asset: "USDC".into(),
            fee_bps: 15,
            min_fee_units: 10_000,
            apy_window_blocks: 50,
            resume_interval_ms: 2_000,
            lease_ms: 60_000,
        }
    }
}

/// The section's name: `[ncaccount]` (the spec's paths name the yield
/// account so; an operator's existing tables keep working).
pub const SECTION: &str = "ncaccount";

/// The host's `[ncaccount]` is valid (the host's start-up check).
pub fn check(config: &HostConfig) -> Result<(), ConfigError> {
    YieldConfig::from_host(config).map(drop)
}

impl YieldConfig {
    /// The host's `[ncaccount]`, checked.
    pub fn from_host(config: &HostConfig) -> Result<Self, ConfigError> {
        let settings: YieldConfig = config.sections.get(SECTION)?;
        settings.check()?;
        Ok(settings)
    }

    /// Refuses a lease too short to drive a spend under (two replicas could
    /// then drive one spend at once) or a resume pass no shorter than it.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.lease_ms < 1_000 {
            return Err(ConfigError::new("ncaccount.lease_ms must be at least 1000"));
        }
        if self.resume_interval_ms >= self.lease_ms {
            return Err(ConfigError::new(
                "ncaccount.resume_interval_ms must be below ncaccount.lease_ms (0 turns the job off)",
            ));
        }
        Ok(())
    }

    /// The vault on `chain`, if configured.
    pub fn vault(&self, chain: u64) -> Option<&str> {
        self.vaults.get(&chain.to_string()).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_too_short_or_a_resume_slower_than_it_is_refused() {
        assert!(YieldConfig::default().check().is_ok());
        let short = YieldConfig {
            lease_ms: 10,
            resume_interval_ms: 0,
            ..YieldConfig::default()
        };
        assert!(short.check().unwrap_err().to_string().contains("lease_ms"));
        let slow = YieldConfig {
            resume_interval_ms: 60_000,
            ..YieldConfig::default()
        };
        assert!(slow
            .check()
            .unwrap_err()
            .to_string()
            .contains("resume_interval_ms"));
    }
}
