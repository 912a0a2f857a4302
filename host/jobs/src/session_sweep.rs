//! Session sweeps: every `sessions.sweep_interval_ms` the unspent balances
//! of revoked and expired sessions are returned to their `refundTo`
//! ([`SessionService::sweep_due`]). Replicas coordinate through a lease on
//! each session's row, so every replica runs it.

use relay_accounts::sessions::SessionService;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Spawns the sweep job.
pub fn spawn(
    cancel: CancellationToken,
    sessions: Arc<SessionService>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, every, true, move || {
        let s = sessions.clone();
        async move {
            match s.sweep_due().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(sessions = n, "session balances returned"),
                Err(e) => tracing::warn!(error = %e, "session sweep tick failed"),
            }
        }
    }))
}
