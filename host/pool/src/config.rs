//! The privacy pool's settings (`[pool]`, spec §4.11, §8.2): which pool
//! this host relays for, the relayer's flat fee, the window a held
//! withdrawal waits in, and how many may wait at once. The denomination
//! and the cap are the contract's (0.00002 ETH, 250 notes): the host
//! reads them and refuses to serve a pool with other figures.

use alloy::primitives::{Address, U256};
use relay_config::{ConfigError, HostConfig};
use serde::{Deserialize, Serialize};

/// The section's name: `[pool]`.
pub const SECTION: &str = "pool";

/// The spec's note: 0.00002 ETH, in wei.
pub const DENOMINATION_WEI: u64 = 20_000_000_000_000;
/// The spec's hard cap of notes.
pub const CAP: u64 = 250;
/// The prover's tree depth (semaphore-rs `depth_20`).
pub const DEPTH: usize = 20;

/// `[pool]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolConfig {
    /// The chain the pool lives on (0, the default: no pool is served).
    pub chain_id: u64,
    /// The `PrivacyPool` contract.
    pub address: String,
    /// The relayer's fee, wei, taken from every note (default 2000000000000
    /// = 0.000002 ETH, a tenth of a note). One flat fee for everyone: a fee
    /// that varied would tell withdrawals apart. Where gas costs more, the
    /// operator pays the difference.
    pub fee_wei: String,
    /// The shortest wait of a held withdrawal, ms (default 600000: 10 min).
    pub hold_min_ms: u64,
    /// The longest wait of a held withdrawal, ms (default 21600000: 6 h).
    /// The host draws each held withdrawal's time uniformly in the window.
    pub hold_max_ms: u64,
    /// The most withdrawals held or in flight at once (default 1000); more
    /// are refused with `POOL_HOLD_FULL` until some are sent.
    pub max_open: u64,
    /// Gas of a withdrawal (default 600000; it uses about 330000).
    pub withdraw_gas: u64,
    /// How long a replica holds a withdrawal it sends; a crashed one's is
    /// resumed once it lapses, ms (default 30000).
    pub lease_ms: u64,
    /// How often the job looks for due and interrupted withdrawals, ms
    /// (default 1000; 0 turns it off).
    pub resume_interval_ms: u64,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            chain_id: 0,
            address: String::new(),
            fee_wei: (DENOMINATION_WEI / 10).to_string(),
            hold_min_ms: 600_000,
            hold_max_ms: 21_600_000,
            max_open: 1_000,
            withdraw_gas: 600_000,
            lease_ms: 30_000,
            resume_interval_ms: 1_000,
        }
    }
}

/// The host's `[pool]` is valid (the host's start-up check).
pub fn check(config: &HostConfig) -> Result<(), ConfigError> {
    let c = PoolConfig::from_host(config)?;
    if c.chain_id != 0 {
        c.pool()
            .map_err(|m| ConfigError::new(format!("pool.{m}")))?;
    }
    Ok(())
}

impl PoolConfig {
    /// The host's `[pool]` (its defaults when the table is absent).
    pub fn from_host(config: &HostConfig) -> Result<Self, ConfigError> {
        config.sections.get(SECTION)
    }

    /// The pool's address and the fee, checked: the address parses, the fee
    /// is below a note, and the hold window is ordered.
    pub fn pool(&self) -> Result<(Address, U256), String> {
        let address: Address = self
            .address
            .parse()
            .map_err(|_| format!("address {:?} is not an address", self.address))?;
        let fee: U256 = self
            .fee_wei
            .parse()
            .map_err(|_| format!("fee_wei {:?} is not an integer", self.fee_wei))?;
        if fee >= U256::from(DENOMINATION_WEI) {
            return Err(format!("fee_wei {fee} is not below a note"));
        }
        if self.hold_min_ms > self.hold_max_ms {
            return Err("hold_min_ms is above hold_max_ms".into());
        }
        Ok((address, fee))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_defaults_to_no_pool_and_checks_what_it_names() {
        let mut config = HostConfig::default();
        assert_eq!(
            PoolConfig::from_host(&config).unwrap(),
            PoolConfig::default()
        );
        check(&config).unwrap();
        let set = |c: &mut PoolConfig| {
            c.chain_id = 8453;
            c.address = "0x0000000000000000000000000000000000000001".into();
        };
        config.sections.edit(SECTION, set).unwrap();
        check(&config).unwrap();
        let pricey = |c: &mut PoolConfig| c.fee_wei = DENOMINATION_WEI.to_string();
        config.sections.edit(SECTION, pricey).unwrap();
        let err = check(&config).unwrap_err().to_string();
        assert!(err.contains("fee_wei"), "{err}");
    }
}
