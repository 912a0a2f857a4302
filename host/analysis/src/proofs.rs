//! Settlement proofs (spec §2.3 `settlementProven`): a node counts as
//! proven once the host has verified on chain ([`crate::outcome`]) the
//! delivery of a route that settles through it — a same-chain swap for
//! `sameChainSwaps`, a route from or to a non-EVM node for that node.
//! Proofs are recorded whenever a verification says `verified`
//! (`/api/outcome/verify`, evidence bundles) and by the proofs job
//! ([`sweep`]), which verifies recent delivered routes of unproven nodes.

use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_plugin_api::ChainRef;
use relay_store::{Store, StoreError};
use relay_types::route::{RouteRecord, RouteStatus};

use crate::{
    evidence::{OutcomeEvidence, Verdict},
    outcome::{self, Sides},
};

/// The node key of same-chain swaps.
pub const SAME_CHAIN: &str = "same-chain";

/// The node a delivered `r` proves, if any.
pub fn node_of(r: &RouteRecord) -> Option<String> {
    if r.from_chain == r.to_chain {
        return Some(SAME_CHAIN.into());
    }
    [r.to_chain, r.from_chain]
        .into_iter()
        .find_map(|c| match c {
            ChainRef::NonEvm(n) => Some(n.as_str().to_string()),
            ChainRef::Evm(_) => None,
        })
}

/// Records `r`'s node as proven when `o` verified it.
pub async fn record(
    store: &Store,
    r: &RouteRecord,
    o: &OutcomeEvidence,
    now_ms: u64,
) -> Result<bool, StoreError> {
    match (o.verdict, node_of(r)) {
        (Verdict::Verified, Some(node)) => {
            store.record_settlement_proof(&node, &r.id, now_ms).await?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Routes looked at per sweep.
const RECENT: u32 = 100;

/// Verifies the recent delivered routes of nodes without a proof and
/// records the first that verifies per node. Returns the nodes proven.
pub async fn sweep(
    store: &Store,
    reader: &ChainReader,
    config: &HostConfig,
    now_ms: u64,
) -> Result<Vec<String>, StoreError> {
    let mut proven = store.proven_nodes().await?;
    let mut new = Vec::new();
    for r in store.recent_routes(RECENT).await? {
        let Some(node) = node_of(&r).filter(|n| !proven.contains(n)) else {
            continue;
        };
        if r.status != RouteStatus::Done {
            continue;
        }
        let journal = store.journal_of(&r.id).await?;
        let txs = outcome::collect(&r, &journal, reader).await;
        let o = outcome::judge(&r, Sides::of(config, &r), &txs);
        if record(store, &r, &o, now_ms).await? {
            proven.insert(node.clone());
            new.push(node);
        }
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::NonEvmNode;

    #[test]
    fn a_route_proves_the_non_evm_node_it_touches_or_same_chain() {
        let mut r = crate::outcome::tests_support::route();
        assert_eq!(node_of(&r), None);
        r.to_chain = ChainRef::NonEvm(NonEvmNode::Stellar);
        assert_eq!(node_of(&r).as_deref(), Some("stellar"));
        r.to_chain = r.from_chain;
        assert_eq!(node_of(&r).as_deref(), Some(SAME_CHAIN));
    }
}
