//! Membership (spec §2.5 `fromAddress`, §4.1 `vip.registry`, §8.2 tiers):
//! a sender holding at least one token of any recognised ERC-721
//! collection (`balanceOf(fromAddress) > 0`) pays the member tier. Every
//! collection is read concurrently; a collection whose chain does not
//! answer cannot make anyone a member, and the miss is reported.

use alloy::primitives::{Address, U256};
use relay_chain::reader::ChainReader;
use relay_config::{HostConfig, VipCollection};
use serde::Serialize;
use utoipa::ToSchema;

/// The outcome of a membership check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Membership {
    /// Whether the sender is a member.
    pub member: bool,
    /// The collection that made them one.
    pub via: Option<VipCollection>,
    /// Collections that could not be read (chain, reason).
    pub unread: Vec<String>,
}

/// Checks `who` (an EVM address; anything else is not a member) against
/// every collection of `registry`.
pub async fn check(
    reader: &ChainReader,
    registry: &[VipCollection],
    who: Option<&str>,
) -> Membership {
    let Some(owner) = who.and_then(|w| w.parse::<Address>().ok()) else {
        return Membership::default();
    };
    let reads = registry.iter().map(|c| async move {
        let collection = c
            .address
            .parse::<Address>()
            .map_err(|_| format!("{}: not an address", c.address))?;
        reader
            .nft_balance(c.chain, collection, owner)
            .await
            .map(|b| (c, b))
            .map_err(|e| e.to_string())
    });
    let mut out = Membership::default();
    for r in futures::future::join_all(reads).await {
        match r {
            Ok((c, balance)) if balance > U256::ZERO && !out.member => {
                out.member = true;
                out.via = Some(c.clone());
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "membership collection unreadable");
                out.unread.push(e);
            }
        }
    }
    out
}

/// What a member gets (spec §4.1 membership `benefits`).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Benefits {
    /// Route fee, bps.
    pub route_fee_bps: u32,
    /// Gas markup, bps.
    pub gas_markup_bps: u32,
    /// The float-lane tier for micro transfers.
    pub floatlane_fee: super::floatinfo::Tier,
}

/// `GET /api/membership/status`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct MembershipStatus {
    /// The address asked about.
    pub address: String,
    /// `member` or `standard`.
    pub tier: String,
    /// Whether a member.
    pub member: bool,
    /// The collection that made them one (`{chain, address, name}`).
    #[schema(value_type = Option<Object>)]
    pub via: Option<VipCollection>,
    /// What the tier gets.
    pub benefits: Benefits,
    /// How many collections are recognised.
    pub registry: usize,
    /// Collections that could not be read.
    pub unread: Vec<String>,
    /// How to read it.
    pub note: String,
}

/// The membership status of `address` under `config`'s registry and fees.
pub async fn status(
    reader: &ChainReader,
    config: &HostConfig,
    address: Address,
) -> MembershipStatus {
    let who = address.to_string();
    let m = check(reader, &config.vip.registry, Some(&who)).await;
    let tier = super::fees::FeeSchedule::from_config(&config.quote).tier(m.member);
    let float_tier = super::floatinfo::tiers()[if m.member { 0 } else { 1 }].clone();
    let note = match (m.member, m.unread.is_empty()) {
        (true, _) => "member: holds a recognised collection (see via)",
        (false, true) => "standard: holds none of the recognised collections",
        (false, false) => {
            "standard as far as could be read: some collections did not answer (see unread)"
        }
    };
    MembershipStatus {
        address: who,
        tier: if m.member { "member" } else { "standard" }.into(),
        member: m.member,
        via: m.via,
        benefits: Benefits {
            route_fee_bps: tier.route_fee_bps,
            gas_markup_bps: tier.gas_markup_bps,
            floatlane_fee: float_tier,
        },
        registry: config.vip.registry.len(),
        unread: m.unread,
        note: note.into(),
    }
}
