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
use relay_types::clock::SharedClock;
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

/// A health cache with a time-to-live. Only the first reading is waited
/// for (concurrent first readers share it); once there is one, a reading
/// older than the ttl is still served while one background reading
/// replaces it, so a rail whose health call hangs (its upstream does)
/// never delays a quote or a status read: it delays only its own next
/// reading, by at most its call deadline.
#[derive(Debug)]
pub struct HealthCache {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    ttl: Duration,
    reader: Arc<ChainReader>,
    /// Stamps each reading.
    clock: SharedClock,
    slot: std::sync::Mutex<Slot>,
    /// Held while the first reading is taken.
    first: Mutex<()>,
}

/// The kept reading.
#[derive(Debug, Default)]
struct Slot {
    kept: Option<(Instant, Arc<HealthReport>)>,
    /// Whether a background reading is out.
    refreshing: bool,
    /// Bumped when the reading is forgotten, so a background reading
    /// taken before that is not kept.
    generation: u64,
}

impl HealthCache {
    /// A cache whose readings live `ttl`; chains are asked through
    /// `reader`, readings stamped by `clock`.
    pub fn new(ttl: Duration, reader: Arc<ChainReader>, clock: SharedClock) -> Self {
        HealthCache {
            shared: Arc::new(Shared {
                ttl,
                reader,
                clock,
                slot: std::sync::Mutex::default(),
                first: Mutex::new(()),
            }),
        }
    }

    /// The kept reading; one older than the ttl is served while a
    /// background reading replaces it, and only when there is none yet is
    /// a reading taken inline.
    pub async fn get(&self, snap: &RailSnapshot, config: &HostConfig) -> Arc<HealthReport> {
        if let Some(kept) = self.kept_or_refresh(snap, config) {
            return kept;
        }
        let _first = self.shared.first.lock().await;
        let generation = {
            let slot = self.shared.slot();
            if let Some((_, r)) = &slot.kept {
                return r.clone();
            }
            slot.generation
        };
        let report = Arc::new(self.shared.measure(snap, config).await);
        self.shared.keep(generation, report.clone());
        report
    }

    /// The kept reading, if any, starting the one background reading when
    /// it is older than the ttl.
    fn kept_or_refresh(
        &self,
        snap: &RailSnapshot,
        config: &HostConfig,
    ) -> Option<Arc<HealthReport>> {
        let mut slot = self.shared.slot();
        let (at, report) = slot.kept.as_ref()?;
        let report = report.clone();
        if at.elapsed() >= self.shared.ttl && !slot.refreshing {
            slot.refreshing = true;
            let (shared, generation) = (self.shared.clone(), slot.generation);
            let (snap, config) = (snap.clone(), config.clone());
            tokio::spawn(async move {
                let fresh = Arc::new(shared.measure(&snap, &config).await);
                shared.keep(generation, fresh);
            });
        }
        Some(report)
    }

    /// Takes a fresh reading now (the uptime probe job stores its verdict
    /// as one sample). The reading is not put in the cache, so what status
    /// and quoting see is exactly as without the probe.
    pub async fn probe(&self, snap: &RailSnapshot, config: &HostConfig) -> HealthReport {
        self.shared.measure(snap, config).await
    }

    /// Forgets the cached reading: the next read takes a fresh one (a
    /// reload changed the rails).
    pub async fn invalidate(&self) {
        let mut slot = self.shared.slot();
        slot.kept = None;
        slot.refreshing = false;
        slot.generation += 1;
    }
}

impl Shared {
    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `report` unless the reading was forgotten since it was begun.
    fn keep(&self, generation: u64, report: Arc<HealthReport>) {
        let mut slot = self.slot();
        if slot.generation == generation {
            slot.kept = Some((Instant::now(), report));
            slot.refreshing = false;
        }
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
            ts_ms: self.clock.now_ms(),
            rails: rails.into_iter().collect(),
            chains: chains.into_iter().collect(),
        }
    }
}
