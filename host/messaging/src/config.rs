//! Sealed messaging's table (`[messaging]`, spec §4.10, §8.2): whether the
//! host serves it, the cover traffic it adds, how long rows are kept, how
//! far a mailbox publication's `ts` may be from the host's clock, and the
//! witness log's name, the free send ceiling and the Plus pass issuer
//! (`[messaging.passes]`). The release grid, the buckets and the chunk bound
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
    /// Sends per client IP per minute without a Plus pass (a send with a
    /// pass does not count here: [`crate::passes`]).
    pub free_sends_per_minute: u32,
    /// Plus passes (`[messaging.passes]`).
    pub passes: PassesConfig,
    /// How paid names and name sales are paid (`[messaging.names]`).
    pub names: NamesConfig,
}

/// `[messaging.names]`: how paid names and name sales are paid — x402, an
/// EIP-3009 authorization of a USD stablecoin taken at par
/// ([`crate::sales`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NamesConfig {
    /// The chain names are paid on (0, the default: this host takes no
    /// payment for names, so a paid name or a sale answers
    /// `NAME_PAYMENT_UNAVAILABLE`; `relay up` sets a devnet chain).
    pub payment_chain: u64,
    /// The asset, by symbol in that chain's `tokens` (default `USDC`; it
    /// must support EIP-3009).
    pub asset: String,
    /// The asset's EIP-712 domain name (default `USD Coin`, Circle's).
    pub asset_name: String,
    /// The asset's EIP-712 domain version (default `2`).
    pub asset_version: String,
    /// Who is paid (default: the relayer, which settles, pays sellers out
    /// and refunds). Left out when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pay_to: Option<String>,
    /// How long an invoice's payment may take, seconds (default 300).
    pub max_timeout_secs: u64,
    /// How long a replica holds an order it drives, ms (default 30000).
    pub lease_ms: u64,
    /// How often the resume job looks for orders to finish, ms (default
    /// 1000; 0 turns it off).
    pub resume_interval_ms: u64,
    /// x402 network names by chain id (default the well-known ones).
    pub networks: std::collections::BTreeMap<String, String>,
}

impl Default for NamesConfig {
    fn default() -> Self {
        NamesConfig {
            payment_chain: 0,
            asset: "USDC".into(),
            asset_name: "USD Coin".into(),
            asset_version: "2".into(),
            pay_to: None,
            max_timeout_secs: 300,
            lease_ms: 30_000,
            resume_interval_ms: 1_000,
            networks: Default::default(),
        }
    }
}

/// `[messaging.passes]`: the Plus pass issuer ([`crate::passes`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PassesConfig {
    /// Issue and accept passes (default true; off: a pass is refused as
    /// `PASS_INVALID` and the claim answers `PASSES_DISABLED`).
    pub enabled: bool,
    /// The issuer name in every token challenge (RFC 9577 §2.1).
    pub issuer_name: String,
    /// Passes one client IP may claim per day (spec §8.2: 20).
    pub free_per_day: u32,
    /// Claim requests one client IP may make per day (spec §8.2: 5).
    pub claims_per_day: u32,
    /// How long one issuer key signs, days; a pass is accepted while its
    /// key is the current one or the one before.
    pub epoch_days: u32,
}

impl Default for PassesConfig {
    fn default() -> Self {
        PassesConfig {
            enabled: true,
            issuer_name: "relay.local".into(),
            free_per_day: 20,
            claims_per_day: 5,
            epoch_days: 7,
        }
    }
}

impl Default for MessagingConfig {
    fn default() -> Self {
        MessagingConfig {
            enabled: true,
            decoys_per_minute: 2.0,
            retention_days: 30,
            max_skew_ms: 300_000,
            witness_origin: "relay.local/messages/v2/witness".into(),
            free_sends_per_minute: 120,
            passes: PassesConfig::default(),
            names: NamesConfig::default(),
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
        let p = &c.passes;
        if p.issuer_name.is_empty() || p.issuer_name.len() > 255 || !p.issuer_name.is_ascii() {
            return bad("passes.issuer_name", "must be 1 to 255 ASCII characters");
        }
        if p.epoch_days == 0 || p.epoch_days > 365 {
            return bad("passes.epoch_days", "must be between 1 and 365");
        }
        if p.free_per_day > crate::passes::MAX_PER_CLAIM as u32 * p.claims_per_day {
            return bad(
                "passes.free_per_day",
                "more than claims_per_day claims of 100 could ever take",
            );
        }
        let n = &c.names;
        let chain = config.chains.get(&n.payment_chain.to_string());
        if n.payment_chain != 0 && !chain.is_some_and(|ch| ch.tokens.contains_key(&n.asset)) {
            return bad(
                "names.payment_chain",
                "must be a chain of [chains] whose tokens list names.asset (or 0)",
            );
        }
        let pay_to = n
            .pay_to
            .as_deref()
            .map(str::parse::<alloy::primitives::Address>);
        if pay_to.is_some_and(|a| a.is_err()) {
            return bad("names.pay_to", "must be an address");
        }
        if n.lease_ms < 1_000 {
            return bad("names.lease_ms", "must be at least 1000");
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
