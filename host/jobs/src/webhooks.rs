//! Webhooks: every `notify.poll_interval_ms` the dispatcher arms and sends
//! what is due ([`Dispatcher::tick`]); every `notify.watch_interval_ms`
//! the watcher evaluates event subscriptions ([`Watcher::tick`]). Replicas
//! coordinate through the store (delivery leases, compare-and-set watch
//! state), so every replica runs both.

use relay_notify::{dispatch::Dispatcher, subscribe::Watcher};
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Spawns the delivery job.
pub fn dispatch(
    cancel: CancellationToken,
    dispatcher: Arc<Dispatcher>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, every, true, move || {
        let d = dispatcher.clone();
        async move {
            if let Err(e) = d.tick().await {
                tracing::warn!(error = %e, "webhook dispatch tick failed");
            }
        }
    }))
}

/// Spawns the subscription watcher.
pub fn watch(
    cancel: CancellationToken,
    watcher: Arc<Watcher>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, every, true, move || {
        let w = watcher.clone();
        async move {
            if let Err(e) = w.tick().await {
                tracing::warn!(error = %e, "subscription watch tick failed");
            }
        }
    }))
}
