//! Sponsorship resume: every `sponsor.resume_interval_ms`, the paid
//! sponsorships whose holder died (a crash between settling the payment
//! and sending the type-4 transaction, say) are finished by this replica
//! — the journaled transactions completed, never repeated; a failed
//! sponsorship refunded ([`relay_sponsor::run`]).

use relay_sponsor::SponsorService;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Spawns the resume job (it runs at once: a restarted host finishes what
/// its predecessor left as soon as the lease lapses).
pub fn spawn(
    cancel: CancellationToken,
    service: Arc<SponsorService>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, every, true, move || {
        let s = service.clone();
        async move {
            let n = s.resume().await;
            if n > 0 {
                tracing::info!(n, "sponsorships resumed");
            }
        }
    }))
}
