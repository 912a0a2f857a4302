//! Nonce gaps: every `execution.gap_check_interval_ms`, each relayer
//! sender looks for nonces missing on chain and fills them. A nonce counts
//! as missing only on two checks in a row, so one another replica has just
//! taken and is about to broadcast is left alone.

use relay_execution::relayer::Relayer;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Spawns the gap job.
pub fn spawn(
    cancel: CancellationToken,
    relayer: Arc<Relayer>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, every, false, move || {
        let relayer = relayer.clone();
        async move { tick(&relayer, every).await }
    }))
}

/// One pass over every chain's sender.
pub async fn tick(relayer: &Relayer, grace: Duration) {
    for sender in relayer.senders() {
        match sender.repair_gaps(grace).await {
            Ok(r) if !r.missing.is_empty() => {
                tracing::warn!(missing = ?r.missing, "relayer nonce gap filled")
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "gap check failed"),
        }
    }
}
