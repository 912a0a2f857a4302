//! Health probe: every [`PROBE_EVERY`], a fresh health reading of every
//! chain RPC and loaded rail is taken and its verdict stored as one uptime
//! sample (`GET /api/uptime`) — one per 30 s slot, whichever replica takes
//! it first, kept [`KEEP_DAYS`] days — at a steady rate whatever the
//! client traffic. The reading is not put in the status cache.

use std::sync::Arc;

use relay_config::HostConfig;
use relay_engine::{
    health::HealthCache,
    uptime::{utc_date, Verdict, KEEP_DAYS, PROBE_EVERY},
};
use relay_runtime::rails::RailSet;
use relay_store::{Store, UptimeSample};
use tokio_util::sync::CancellationToken;

/// Spawns the probe job.
pub fn spawn(
    cancel: CancellationToken,
    health: Arc<HealthCache>,
    rails: Arc<RailSet>,
    config: Arc<HostConfig>,
    store: Store,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, PROBE_EVERY, true, move || {
        let (health, rails, config, store) =
            (health.clone(), rails.clone(), config.clone(), store.clone());
        async move {
            let report = health.probe(&rails.snapshot(), &config).await;
            if let Some(v) = Verdict::of(&report) {
                store_sample(&store, report.ts_ms, v).await;
            }
        }
    }))
}

async fn store_sample(store: &Store, ts_ms: u64, v: Verdict) {
    let period = PROBE_EVERY.as_millis() as u64;
    let slot = i64::try_from(ts_ms / period).unwrap_or(i64::MAX);
    let kept_slots = (KEEP_DAYS as u64 * 86_400_000 / period) as i64;
    let day = utc_date(ts_ms);
    let sample = UptimeSample {
        slot,
        ts_ms,
        day: &day,
        verdict: v.as_str(),
    };
    if let Err(e) = store.record_uptime(&sample, slot - kept_slots).await {
        tracing::warn!(error = %e, "uptime sample not stored");
    }
}
