//! The non-custodial yield account (`[ncaccount]`, spec §4.6): the ERC-4626
//! vaults the host knows per chain, the spend fee, and how the live APY is
//! measured.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Yield-account settings (`[ncaccount]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NcAccountConfig {
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

impl Default for NcAccountConfig {
    fn default() -> Self {
        NcAccountConfig {
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

impl NcAccountConfig {
    /// The vault on `chain`, if configured.
    pub fn vault(&self, chain: u64) -> Option<&str> {
        self.vaults.get(&chain.to_string()).map(String::as_str)
    }
}
