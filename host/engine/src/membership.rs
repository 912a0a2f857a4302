//! Membership (spec §2.5 `fromAddress`, §4.1 `vip.registry`, §8.2 tiers):
//! a sender holding at least one token of any recognised ERC-721
//! collection (`balanceOf(fromAddress) > 0`) pays the member tier. Every
//! collection is read concurrently; a collection whose chain does not
//! answer cannot make anyone a member, and the miss is reported.

use alloy::primitives::{Address, U256};
use relay_chain::reader::ChainReader;
use relay_config::VipCollection;

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
