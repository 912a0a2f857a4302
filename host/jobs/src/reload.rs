//! Plugin reload: every `runtime.reload_interval_ms`, the plugins
//! directory is rescanned; changed, added and removed plugins are swapped
//! in (wasm atomically, native beside the old instance) and the health
//! cache is invalidated so the mesh shows the change at once. An
//! artifact's checksum is remembered between rescans while the file's
//! change stamp is unchanged ([`relay_registry::hashes`]).

use relay_engine::health::HealthCache;
use relay_registry::Hashes;
use relay_runtime::rails::RailSet;
use std::{path::PathBuf, sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Spawns the reload job.
pub fn spawn(
    cancel: CancellationToken,
    rails: Arc<RailSet>,
    health: Arc<HealthCache>,
    dir: PathBuf,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    let hashes = Arc::new(Hashes::default());
    tokio::spawn(crate::every(cancel, every, false, move || {
        let (rails, health, dir) = (rails.clone(), health.clone(), dir.clone());
        let hashes = hashes.clone();
        async move { tick(&rails, &health, dir, hashes).await }
    }))
}

/// One rescan, checksums remembered in `hashes`; swaps in what changed.
pub async fn tick(rails: &RailSet, health: &HealthCache, dir: PathBuf, hashes: Arc<Hashes>) {
    let before = fingerprints(rails);
    let discovery =
        tokio::task::spawn_blocking(move || relay_registry::discover_with(&dir, &hashes))
            .await
            .unwrap_or_default();
    let unchanged = discovery.plugins.len() == before.len()
        && discovery
            .plugins
            .iter()
            .all(|p| before.contains(&(p.key(), p.fingerprint.sha256.clone())));
    if unchanged && discovery.rejected.len() == rails.snapshot().rejected.len() {
        return;
    }
    let snap = rails.apply(discovery).await;
    health.invalidate().await;
    tracing::info!(
        loaded = snap.installed.len(),
        refused = snap.rejected.len(),
        "plugins reloaded"
    );
}

fn fingerprints(rails: &RailSet) -> Vec<(String, String)> {
    rails
        .snapshot()
        .installed
        .iter()
        .map(|i| (i.plugin.key(), i.plugin.fingerprint.sha256.clone()))
        .collect()
}

/// The reload period, or `None` when reload is off (`0`).
pub fn period(ms: u64) -> Option<Duration> {
    (ms > 0).then(|| Duration::from_millis(ms))
}
