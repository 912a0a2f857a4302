//! The primitives watcher (spec §4.4): every `primitives.tick_interval_ms`
//! it runs the due schedules and armed conditionals
//! ([`Watcher::tick`]). Replicas coordinate through a lease on each
//! record's row, so every replica runs it and each due run happens once.

use relay_primitives::watcher::Watcher;
use relay_types::clock::SharedClock;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Spawns the watcher job, ticking at `clock`'s time.
pub fn spawn(
    cancel: CancellationToken,
    watcher: Arc<Watcher>,
    clock: SharedClock,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tracing::info!(
        live_gate = watcher.live_gate(),
        "primitives watcher started"
    );
    tokio::spawn(crate::every(cancel, every, true, move || {
        let (w, now_ms) = (watcher.clone(), clock.now_ms());
        async move {
            match w.tick(now_ms).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(runs = n, "primitive runs"),
                Err(e) => tracing::warn!(error = %e, "primitives tick failed"),
            }
        }
    }))
}
