//! Live health of rails and chains, cached (spec §8.2: status about 30 s),
//! and the readings the `health-probe` job (relay-jobs) takes outside the
//! cache as the uptime samples of `/api/uptime` ([`super::uptime`]).

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_plugin_api::{HealthStatus, RailHealth};
use relay_runtime::rails::RailSnapshot;
use relay_types::now_ms;
use tokio::sync::Mutex;

/// One health reading of everything.
#[derive(Clone, Debug)]
pub struct HealthReport {
    /// When it was taken, epoch ms.
    pub ts_ms: u64,
    /// By rail id.
    pub rails: BTreeMap<String, RailHealth>,
    /// EVM chain id → whether its RPC answered with the right chain id.
    pub chains: BTreeMap<u64, bool>,
}

impl HealthReport {
    /// Whether a rail is serving.
    pub fn rail_up(&self, id: &str) -> bool {
        self.rails
            .get(id)
            .is_some_and(|h| matches!(h.status, HealthStatus::Operational | HealthStatus::Degraded))
    }
}

/// A health cache with a time-to-live; concurrent readers share one refresh.
#[derive(Debug)]
pub struct HealthCache {
    ttl: Duration,
    reader: Arc<ChainReader>,
    slot: Mutex<Option<(Instant, Arc<HealthReport>)>>,
}

impl HealthCache {
    /// A cache whose readings live `ttl`; chains are asked through `reader`.
    pub fn new(ttl: Duration, reader: Arc<ChainReader>) -> Self {
        HealthCache {
            ttl,
            reader,
            slot: Mutex::new(None),
        }
    }

    /// The cached reading, refreshed when older than the ttl.
    pub async fn get(&self, snap: &RailSnapshot, config: &HostConfig) -> Arc<HealthReport> {
        let mut slot = self.slot.lock().await;
        if let Some((at, r)) = slot.as_ref() {
            if at.elapsed() < self.ttl {
                return r.clone();
            }
        }
        let report = Arc::new(self.measure(snap, config).await);
        *slot = Some((Instant::now(), report.clone()));
        report
    }

    /// Takes a fresh reading now (the uptime probe job stores its verdict
    /// as one sample). The reading is not put in the cache, so what status
    /// and quoting see is exactly as without the probe.
    pub async fn probe(&self, snap: &RailSnapshot, config: &HostConfig) -> HealthReport {
        self.measure(snap, config).await
    }

    /// Forgets the cached reading.
    pub async fn invalidate(&self) {
        *self.slot.lock().await = None;
    }

    async fn measure(&self, snap: &RailSnapshot, config: &HostConfig) -> HealthReport {
        let rails = futures::future::join_all(snap.active().map(|r| {
            let r = r.clone();
            async move { (r.id().to_string(), r.health().await) }
        }));
        let chains = futures::future::join_all(
            config
                .chain_ids()
                .into_iter()
                .map(|id| async move { (id, self.reader.chain_id(id).await.ok() == Some(id)) }),
        );
        let (rails, chains) = tokio::join!(rails, chains);
        HealthReport {
            ts_ms: now_ms(),
            rails: rails.into_iter().collect(),
            chains: chains.into_iter().collect(),
        }
    }
}
