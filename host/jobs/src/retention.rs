//! Retention (spec §8.2): every `retention.interval_ms` (daily), and at
//! start, the counterparty addresses of routes settled more than
//! `retention.after_days` ago become keyed tags
//! ([`relay_analysis::retention::sweep`]). Each route is rewritten under
//! its version, so replicas may run it side by side. The same tick passes
//! over pending erasure requests ([`relay_analysis::erasure::tick`]):
//! erasing routes that settled since, completing requests that are due.
//! Without a tag key in the environment the job does not start.

use relay_analysis::retention::{sweep, Tagger};
use relay_store::Store;
use relay_types::clock::SharedClock;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Spawns the retention job.
pub fn spawn(
    cancel: CancellationToken,
    store: Store,
    tagger: Tagger,
    clock: SharedClock,
    (every, after): (Duration, Duration),
) -> tokio::task::JoinHandle<()> {
    let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
    tokio::spawn(crate::every(cancel, every, true, move || {
        let (store, tagger, clock) = (store.clone(), tagger.clone(), clock.clone());
        async move {
            let now = clock.now_ms();
            match sweep(&store, &tagger, now, after_ms).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(routes = n, "counterparty addresses turned into tags"),
                Err(e) => tracing::warn!(error = %e, "retention tick failed"),
            }
            match relay_analysis::erasure::tick(&store, &tagger, now).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(routes = n, "routes erased on request"),
                Err(e) => tracing::warn!(error = %e, "erasure tick failed"),
            }
        }
    }))
}
