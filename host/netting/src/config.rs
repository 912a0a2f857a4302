//! Custodial netting accounts (`[netting]`, spec §4.7): which chains are
//! covered, how many confirmations a deposit needs, the caps (deliberately
//! small) and the safe share of the relayer's float that liabilities may
//! reach. Amounts are USDC smallest units (6 decimals).

use serde::{Deserialize, Serialize};

use relay_config::ConfigError;

/// Netting settings (`[netting]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NettingConfig {
    /// Serve the netting endpoints (default true; they answer
    /// `NETTING_UNAVAILABLE` without a relayer key).
    pub enabled: bool,
    /// The asset accounts hold, by symbol in each chain's `tokens`
    /// (default `USDC`).
    pub asset: String,
    /// Covered chains (default empty: every configured chain that lists
    /// the asset).
    pub chains: Vec<u64>,
    /// Blocks a deposit's transaction needs, its own included (default 3;
    /// `relay up` uses 1).
    pub confirmations: u64,
    /// The safe share: total liabilities (every account's balance) may not
    /// exceed this fraction of the relayer's USDC across covered chains,
    /// parts per million (default 500000 = 50 %). A deposit that would
    /// push liabilities above it is refused.
    pub safe_share_ppm: u32,
    /// Largest deposit credited, smallest units (default 100000000 = 100 USDC).
    pub max_deposit: u64,
    /// Largest withdrawal, smallest units (default 100000000 = 100 USDC).
    pub max_withdraw: u64,
    /// Largest balance an account may hold, smallest units (default
    /// 250000000 = 250 USDC).
    pub max_balance: u64,
    /// Gas a payout (an ERC-20 `transfer`) is given and priced at (default 80000).
    pub payout_gas: u64,
    /// How long a replica holds a withdrawal it pays; a crashed one's is
    /// finished by the resume job once it lapses, ms (default 60000).
    pub lease_ms: u64,
    /// How often the resume job looks for unfinished payouts, ms (default
    /// 2000; 0 turns it off).
    pub resume_interval_ms: u64,
}

impl Default for NettingConfig {
    fn default() -> Self {
        NettingConfig {
            enabled: true,
            asset: "USDC".into(),
            chains: Vec::new(),
            confirmations: 3,
            safe_share_ppm: 500_000,
            max_deposit: 100_000_000,
            max_withdraw: 100_000_000,
            max_balance: 250_000_000,
            payout_gas: 80_000,
            lease_ms: 60_000,
            resume_interval_ms: 2_000,
        }
    }
}

/// The section's name: `[netting]`.
pub const SECTION: &str = "netting";

/// The host's `[netting]` is valid (the host's start-up check).
pub fn check(config: &relay_config::HostConfig) -> Result<(), ConfigError> {
    NettingConfig::from_host(config).map(drop)
}

/// Parts per million in a whole.
pub const PPM: u32 = 1_000_000;

impl NettingConfig {
    /// The host's `[netting]`, checked.
    pub fn from_host(config: &relay_config::HostConfig) -> Result<Self, ConfigError> {
        let settings: NettingConfig = config.sections.get(SECTION)?;
        settings.check()?;
        Ok(settings)
    }

    /// Refuses a share above 100 %, zero confirmations, or a cap that does
    /// not fit the ledger's signed 64-bit amounts.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.safe_share_ppm > PPM {
            return Err(ConfigError::new(
                "netting.safe_share_ppm must be at most 1000000 (100 %)",
            ));
        }
        if self.confirmations == 0 {
            return Err(ConfigError::new("netting.confirmations must be at least 1"));
        }
        let caps = [
            ("netting.max_deposit", self.max_deposit),
            ("netting.max_withdraw", self.max_withdraw),
            ("netting.max_balance", self.max_balance),
        ];
        match caps.iter().find(|(_, v)| *v > i64::MAX as u64) {
            Some((key, _)) => Err(ConfigError::new(format!(
                "{key} must be at most {}",
                i64::MAX
            ))),
            None => Ok(()),
        }
    }
}
