//! Settlement proofs (spec §2.3 `settlementProven`): every
//! [`PROOFS_EVERY`], and at start, the recent delivered routes of nodes
//! without a proof are verified on chain and the first that verifies per
//! node is recorded ([`relay_analysis::proofs::sweep`]).

use std::{sync::Arc, time::Duration};

use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_store::Store;
use relay_types::clock::SharedClock;
use tokio_util::sync::CancellationToken;

/// How often unproven nodes are looked at.
pub const PROOFS_EVERY: Duration = Duration::from_secs(60);

/// Spawns the proofs job, ticking every `every`.
pub fn spawn(
    cancel: CancellationToken,
    (store, reader, config): (Store, Arc<ChainReader>, Arc<HostConfig>),
    clock: SharedClock,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, every, true, move || {
        let (store, reader, config, clock) =
            (store.clone(), reader.clone(), config.clone(), clock.clone());
        async move {
            match relay_analysis::proofs::sweep(&store, &reader, &config, clock.now_ms()).await {
                Ok(n) if n.is_empty() => {}
                Ok(nodes) => tracing::info!(?nodes, "settlement verified on chain"),
                Err(e) => tracing::warn!(error = %e, "settlement proofs tick failed"),
            }
        }
    }))
}
