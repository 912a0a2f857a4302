//! Health probe: every [`PROBE_EVERY`], a fresh health reading of every
//! chain RPC and loaded rail is taken and recorded as one uptime sample
//! (`GET /api/uptime`), at a steady rate whatever the client traffic. The
//! reading is not put in the status cache.

use std::sync::Arc;

use relay_config::HostConfig;
use relay_engine::{health::HealthCache, uptime::PROBE_EVERY};
use relay_runtime::rails::RailSet;
use tokio_util::sync::CancellationToken;

/// Spawns the probe job.
pub fn spawn(
    cancel: CancellationToken,
    health: Arc<HealthCache>,
    rails: Arc<RailSet>,
    config: Arc<HostConfig>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, PROBE_EVERY, true, move || {
        let (health, rails, config) = (health.clone(), rails.clone(), config.clone());
        async move {
            health.probe(&rails.snapshot(), &config).await;
        }
    }))
}
