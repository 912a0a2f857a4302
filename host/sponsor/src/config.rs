//! Sponsored EIP-7702 transactions (`[sponsor]`, spec §4.8): the batch
//! executor each chain knows, what the relayer charges and how it is paid
//! (x402, EIP-3009 in the chain's USDC), and whether a chain-agnostic
//! authorization (chain id 0) is accepted. The table is read from the
//! host's feature sections ([`relay_config::Sections`]); its name and
//! every key are what operators' files have always said.

use std::collections::BTreeMap;

use relay_config::{ConfigError, HostConfig};
use serde::{Deserialize, Serialize};

/// Sponsorship settings (`[sponsor]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SponsorConfig {
    /// The EIP-7702 batch executor (`RelayDelegate`) by chain id; a chain
    /// without one is not sponsored (default none; `relay up` sets every
    /// devnet chain's).
    pub delegates: BTreeMap<String, String>,
    /// The token x402 payments are made in, by symbol in the chain's
    /// `tokens` (default `USDC`; it must support EIP-3009).
    pub asset: String,
    /// The token's EIP-712 domain name (default `USD Coin`, Circle's).
    pub asset_name: String,
    /// The token's EIP-712 domain version (default `2`, Circle's).
    pub asset_version: String,
    /// Who is paid (default: the relayer, which can then refund). Left
    /// out when unset: TOML has no null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pay_to: Option<String>,
    /// How long an invoice's payment may take, seconds (x402
    /// `maxTimeoutSeconds`; default 300).
    pub max_timeout_secs: u64,
    /// Accept authorizations with chain id 0, valid on every chain
    /// (default false: a tuple replayable anywhere is refused).
    pub allow_any_chain: bool,
    /// Gas added to the estimate, per mille (default 200 = 20 %).
    pub gas_margin_per_mille: u64,
    /// How long a replica holds a sponsorship it drives; a crashed one's
    /// is resumed once it lapses, ms (default 30000).
    pub lease_ms: u64,
    /// How often the resume job looks for sponsorships to finish, ms
    /// (default 1000; 0 turns it off).
    pub resume_interval_ms: u64,
    /// x402 network names by chain id (default the well-known ones:
    /// 8453 `base`, 84532 `base-sepolia`, 1 `ethereum`, …); other chains
    /// are named `eip155:<id>`.
    pub networks: BTreeMap<String, String>,
}

impl Default for SponsorConfig {
    fn default() -> Self {
        SponsorConfig {
            delegates: BTreeMap::new(),
            asset: "USDC".into(),
            asset_name: "USD Coin".into(),
            asset_version: "2".into(),
            pay_to: None,
            max_timeout_secs: 300,
            allow_any_chain: false,
            gas_margin_per_mille: 200,
            lease_ms: 30_000,
            resume_interval_ms: 1_000,
            networks: BTreeMap::new(),
        }
    }
}

/// The section's name: `[sponsor]`.
pub const SECTION: &str = "sponsor";

/// The host's `[sponsor]` is valid (the host's start-up check).
pub fn check(config: &HostConfig) -> Result<(), ConfigError> {
    SponsorConfig::from_host(config).map(drop)
}

impl SponsorConfig {
    /// The host's `[sponsor]` (its defaults when the table is absent).
    pub fn from_host(config: &HostConfig) -> Result<Self, ConfigError> {
        config.sections.get(SECTION)
    }

    /// The delegate on `chain`, if configured.
    pub fn delegate(&self, chain: u64) -> Option<&str> {
        self.delegates.get(&chain.to_string()).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sponsor_table_reads_as_before_and_a_wrong_type_is_refused() {
        let mut config = HostConfig::default();
        assert_eq!(
            SponsorConfig::from_host(&config).unwrap(),
            SponsorConfig::default()
        );
        config
            .sections
            .edit(SECTION, |s: &mut SponsorConfig| {
                s.delegates.insert("8453".into(), "0xabc".into());
                s.lease_ms = 5_000;
            })
            .unwrap();
        let read = SponsorConfig::from_host(&config).unwrap();
        assert_eq!((read.delegate(8453), read.lease_ms), (Some("0xabc"), 5_000));
        assert_eq!(
            read.asset_name, "USD Coin",
            "an absent key keeps its default"
        );
        check(&config).unwrap();
        let back: HostConfig = toml::from_str(&toml::to_string(&config).unwrap()).unwrap();
        assert_eq!(
            SponsorConfig::from_host(&back).unwrap(),
            read,
            "written out and read back"
        );
        let bad = serde_json::json!({ "lease_ms": "soon" });
        config.sections.set(SECTION, &bad);
        let err = check(&config).unwrap_err().to_string();
        assert!(err.contains("[sponsor]"), "{err}");
    }
}
