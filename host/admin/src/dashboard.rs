//! The dashboard's snapshot: one typed value the page renders and the
//! live stream (`/admin/api/events`) pushes.
//!
//! It has a cheap part read from memory and the store (rails, lanes,
//! operator state, routes in flight, webhook backlog, signals, audit) and
//! a chain part read from the chains ([`ChainView`]: the relayer's native
//! balance per chain, float per chain and token with `capNow`), which the
//! caller refreshes on its own period and reuses in between.

use crate::{
    operator::{audit_log, AuditEntry},
    signals::{Signals, SignalsView},
};
use alloy::primitives::{Address, U256};
use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_engine::{floatinfo, health::HealthCache};
use relay_registry::{OperatorState, OperatorStateStore};
use relay_runtime::rails::{RailSet, RailSnapshot};
use relay_store::{DeliveryBacklog, Store};
use relay_types::RouteStatus;
use serde::Serialize;
use serde_json::Value;
use std::{collections::BTreeMap, time::Duration};
use utoipa::ToSchema;

/// How many routes in flight the dashboard lists.
pub const ROUTES_LISTED: u32 = 100;
/// How many of the newest failed routes it looks through for funds in
/// doubt.
pub const FAILURES_SCANNED: u32 = 500;
/// How many audit entries it shows.
pub const AUDIT_LISTED: u32 = 50;
/// The statuses of a route in flight.
pub const IN_FLIGHT: &[RouteStatus] = &[
    RouteStatus::Pending,
    RouteStatus::Bridging,
    RouteStatus::AwaitingDeposit,
];

/// Where the snapshot is read from.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    /// Host configuration.
    pub config: &'a HostConfig,
    /// Installed rails.
    pub rails: &'a RailSet,
    /// The store.
    pub store: &'a Store,
    /// Health readings.
    pub health: &'a HealthCache,
    /// Chain reads.
    pub reader: &'a ChainReader,
    /// The relayer, if the host has one.
    pub relayer: Option<Address>,
    /// The relayer key pool's keys (each needs gas of its own).
    pub pool_keys: &'a [Address],
    /// The edge's signals.
    pub signals: &'a Signals,
}

/// Why the snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The store.
    #[error(transparent)]
    Store(#[from] relay_store::StoreError),
    /// Operator state.
    #[error(transparent)]
    State(#[from] relay_registry::StateError),
    /// The audit log.
    #[error(transparent)]
    Operator(#[from] crate::operator::OperatorError),
}

/// Everything the dashboard shows.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Dashboard {
    /// When it was read, epoch ms.
    pub at_ms: u64,
    /// The relayer's address.
    pub relayer: Option<String>,
    /// Every installed rail, by id.
    pub rails: Vec<RailView>,
    /// Plugins the loader refused, with why.
    pub rejected: Vec<RejectedView>,
    /// Chain reads (balances, float).
    pub chain: ChainView,
    /// Routes in flight.
    pub routes: RoutesView,
    /// The webhook delivery backlog.
    pub webhooks: BacklogView,
    /// Rate-limit hits and recent errors.
    pub signals: SignalsView,
    /// The newest operator changes.
    pub audit: Vec<AuditEntry>,
}

/// One rail id.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RailView {
    /// Rail id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The packaging serving it (`native` or `wasm`).
    pub packaging: String,
    /// Its version.
    pub version: String,
    /// Every installed packaging of it.
    pub packagings: Vec<PackagingView>,
    /// Whether the operator enabled it.
    pub enabled: bool,
    /// Health status (`operational`, `degraded`, `down`, `unknown`).
    pub health: String,
    /// What the health reading said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_detail: Option<String>,
    /// Why the rail is quarantined now, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantined: Option<String>,
    /// Its lanes.
    pub lanes: Vec<LaneView>,
}

/// One installed packaging of a rail.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagingView {
    /// `native` or `wasm`.
    pub packaging: String,
    /// Version.
    pub version: String,
    /// Whether it serves the rail id.
    pub active: bool,
    /// Artifact sha256.
    pub sha256: String,
}

/// One lane of a rail.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LaneView {
    /// Lane id (`evm->evm`).
    pub lane: String,
    /// Source chains.
    pub from: Vec<String>,
    /// Destination chains.
    pub to: Vec<String>,
    /// Assets.
    pub assets: Vec<String>,
    /// Whether the manifest says it executes (else quote-only).
    pub executable: bool,
    /// The operator's switch.
    pub execute_ready: bool,
    /// Why it is quote-only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_only_reason: Option<String>,
}

/// A refused plugin.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RejectedView {
    /// Rail id, when readable.
    pub id: Option<String>,
    /// Its manifest.
    pub manifest: String,
    /// Why.
    pub reason: String,
}

/// What was read from the chains.
#[derive(Clone, Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChainView {
    /// When, epoch ms.
    pub read_ms: u64,
    /// The native balance per configured chain of the relayer, then of
    /// each relayer pool key.
    pub balances: Vec<BalanceView>,
    /// The float lane rail, when one is loaded.
    pub float_rail: Option<String>,
    /// Float per destination chain and token.
    pub float: Vec<FloatView>,
}

/// The native balance of the relayer or one of its pool keys on one chain.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BalanceView {
    /// Chain id.
    pub chain: u64,
    /// Whose: the relayer key's address, or a pool key's (`None` without
    /// a relayer key).
    pub key: Option<String>,
    /// Whether `key` is a relayer pool key.
    pub pool: bool,
    /// Chain name.
    pub name: String,
    /// Balance, wei.
    pub wei: Option<String>,
    /// Balance in whole coins, 6 decimals.
    pub native: Option<String>,
    /// The configured low-balance threshold, wei.
    pub low_below_wei: String,
    /// Whether the balance is below it.
    pub low: bool,
    /// Why the read failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Float of one token on one chain.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FloatView {
    /// Chain id.
    pub chain: String,
    /// Chain name.
    pub name: String,
    /// Asset symbol.
    pub asset: String,
    /// Token decimals.
    pub decimals: u8,
    /// The relayer's float, smallest units.
    pub float: Option<String>,
    /// 25 % of it: the most one transfer may take now.
    #[schema(value_type = Option<String>)]
    pub cap_now: Option<Value>,
    /// Why the read failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Routes in flight.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoutesView {
    /// How many per status (every in-flight status listed).
    pub by_status: BTreeMap<String, u64>,
    /// The newest ones.
    pub in_flight: Vec<RouteView>,
    /// The newest finished ones (`DONE`, `FAILED`, `REFUNDED`), newest
    /// first, at most [`ROUTES_LISTED`] among the newest routes (the page
    /// filters them by status and by id, address, rail or chain).
    pub recent: Vec<RouteView>,
    /// Failed routes whose funds moved and were not refunded (a
    /// transaction of unknown fate, an upstream silent past the track
    /// timeout): the operator settles each with the upstream. Among the
    /// newest [`FAILURES_SCANNED`] failures, newest first.
    pub funds_in_doubt: Vec<DoubtView>,
}

/// A failed route whose funds are in doubt.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DoubtView {
    /// The route.
    #[serde(flatten)]
    pub route: RouteView,
    /// Its `failure.code` (`UPSTREAM_TIMEOUT`, `EXECUTION_FAILED`).
    pub code: String,
    /// Its `failure.message`.
    pub message: String,
}

/// One route in flight.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteView {
    /// Route id.
    pub id: String,
    /// Status.
    pub status: String,
    /// Stage.
    pub stage: Option<String>,
    /// Rail.
    pub rail: String,
    /// Lane.
    pub lane: String,
    /// Source chain.
    pub from_chain: String,
    /// Destination chain.
    pub to_chain: String,
    /// Token.
    pub from_token: String,
    /// Amount, smallest units.
    pub amount: String,
    /// Created, epoch ms.
    pub created_ms: u64,
    /// Who signed it (the source address).
    pub sender: String,
    /// Who it pays (the destination address).
    pub recipient: String,
    /// Its source transaction, once sent.
    pub src_tx: Option<String>,
    /// Its destination transaction, once seen.
    pub dest_tx: Option<String>,
    /// Its receipt.
    pub receipt: String,
}

/// The webhook delivery backlog.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BacklogView {
    /// Waiting for an attempt.
    pub pending: u64,
    /// Of those, failed at least once.
    pub retrying: u64,
    /// Age of the oldest pending one, ms.
    pub oldest_pending_age_ms: Option<u64>,
    /// Gave up.
    pub failed: u64,
}

impl BacklogView {
    fn of(b: DeliveryBacklog, now_ms: u64) -> Self {
        BacklogView {
            pending: b.pending,
            retrying: b.retrying,
            oldest_pending_age_ms: b.oldest_pending_ms.map(|t| now_ms.saturating_sub(t)),
            failed: b.failed,
        }
    }
}

/// The cheap part, with `chain` as last read.
pub async fn snapshot(s: Sources<'_>, chain: ChainView) -> Result<Dashboard, SnapshotError> {
    let snap = s.rails.snapshot();
    let state = s.store.load_operator_state().await?;
    let health = s.health.get(&snap, s.config).await;
    let now = s.store.clock().now_ms();
    Ok(Dashboard {
        at_ms: now,
        relayer: s.relayer.map(|a| a.to_checksum(None)),
        rails: rails(&snap, &state, &health),
        rejected: snap
            .rejected
            .iter()
            .map(|r| RejectedView {
                id: r.id.clone(),
                manifest: r.manifest_path.display().to_string(),
                reason: r.reason.clone(),
            })
            .collect(),
        chain,
        routes: routes(s.store).await?,
        webhooks: BacklogView::of(s.store.delivery_backlog().await?, now),
        signals: s.signals.view(),
        audit: audit_log(s.store, AUDIT_LISTED).await?,
    })
}

fn rails(
    snap: &RailSnapshot,
    state: &OperatorState,
    health: &relay_engine::health::HealthReport,
) -> Vec<RailView> {
    let mut out: BTreeMap<String, RailView> = BTreeMap::new();
    for i in &snap.installed {
        let m = i.rail.manifest();
        let p = PackagingView {
            packaging: i.rail.packaging().as_str().into(),
            version: m.version.to_string(),
            active: i.active,
            sha256: i.plugin.fingerprint.sha256.clone(),
        };
        let view = out.entry(m.id.clone()).or_insert_with(|| RailView {
            id: m.id.clone(),
            name: m.name.clone(),
            packaging: String::new(),
            version: String::new(),
            packagings: Vec::new(),
            enabled: state.rail_enabled(&m.id),
            health: "unknown".into(),
            health_detail: None,
            quarantined: None,
            lanes: Vec::new(),
        });
        view.packagings.push(p);
        if !i.active {
            continue;
        }
        view.packaging = i.rail.packaging().as_str().into();
        view.version = m.version.to_string();
        view.quarantined = i.rail.quarantined();
        if let Some(h) = health.rails.get(&m.id) {
            view.health = serde_json::to_value(h.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            view.health_detail = h.detail.clone();
        }
        view.lanes = m
            .coverage
            .iter()
            .map(|l| LaneView {
                lane: l.lane.clone(),
                from: l.from.iter().map(ToString::to_string).collect(),
                to: l.to.iter().map(ToString::to_string).collect(),
                assets: l.assets.clone(),
                executable: l.executable,
                execute_ready: l.executable
                    && state.lane_execute_ready(&m.id, &l.lane, l.executable),
                quote_only_reason: l.quote_only_reason.clone(),
            })
            .collect();
    }
    out.into_values().collect()
}

async fn routes(store: &Store) -> Result<RoutesView, SnapshotError> {
    let mut by_status = BTreeMap::new();
    for st in IN_FLIGHT {
        let n = store.count_routes(*st).await?;
        by_status.insert(st.as_str().to_string(), u64::try_from(n).unwrap_or(0));
    }
    let in_flight = store
        .routes_in_flight(ROUTES_LISTED)
        .await?
        .into_iter()
        .map(RouteView::of)
        .collect();
    let funds_in_doubt = store
        .recent_failed_routes(FAILURES_SCANNED)
        .await?
        .into_iter()
        .filter_map(|mut r| {
            let f = r.failure.take()?;
            (f.funds_moved && f.refund_tx.is_none()).then(|| DoubtView {
                route: RouteView::of(r),
                code: f.code,
                message: f.message,
            })
        })
        .collect();
    let recent = store
        .recent_routes(ROUTES_LISTED)
        .await?
        .into_iter()
        .filter(|r| r.status.is_terminal())
        .map(RouteView::of)
        .collect();
    Ok(RoutesView {
        by_status,
        in_flight,
        recent,
        funds_in_doubt,
    })
}

impl RouteView {
    /// The operator's view of `r` (the dashboard's tables, the explorer).
    pub fn of(r: relay_types::RouteRecord) -> Self {
        RouteView {
            receipt: format!("/api/route/status?id={}", r.id),
            id: r.id,
            status: r.status.as_str().into(),
            stage: r.stage,
            rail: r.rail,
            lane: r.lane,
            from_chain: r.from_chain.to_string(),
            to_chain: r.to_chain.to_string(),
            from_token: r.from_token,
            amount: r.amount.to_string(),
            created_ms: r.created_ms,
            sender: r.sender,
            recipient: r.recipient,
            src_tx: r.src_tx,
            dest_tx: r.dest_tx,
        }
    }
}

/// Reads the chain part: balances (each bounded by `timeout`) and float.
pub async fn read_chains(s: Sources<'_>, timeout: Duration) -> ChainView {
    let snap = s.rails.snapshot();
    let state = s.store.load_operator_state().await.unwrap_or_default();
    let (balances, float) = tokio::join!(
        balances(s, timeout),
        floatinfo::info(&snap, &state, s.config, s.reader)
    );
    let mut rows = Vec::new();
    for (chain, c) in &float.chains {
        for (asset, cell) in &c.assets {
            rows.push(FloatView {
                chain: chain.clone(),
                name: c.name.clone(),
                asset: asset.clone(),
                decimals: cell.decimals,
                float: cell.float.clone(),
                cap_now: cell.cap_now.clone(),
                error: cell.float_error.clone(),
            });
        }
    }
    ChainView {
        read_ms: s.store.clock().now_ms(),
        balances,
        float_rail: float.rail.map(|r| r.id),
        float: rows,
    }
}

async fn balances(s: Sources<'_>, timeout: Duration) -> Vec<BalanceView> {
    let keys =
        std::iter::once((s.relayer, false)).chain(s.pool_keys.iter().map(|k| (Some(*k), true)));
    let wanted: Vec<(u64, Option<Address>, bool)> = keys
        .flat_map(|(who, pool)| {
            s.config
                .chain_ids()
                .into_iter()
                .map(move |c| (c, who, pool))
        })
        .collect();
    let reads = wanted.into_iter().map(|(chain, who, pool)| async move {
        let threshold = s.config.admin.low_balance_wei(chain);
        let read = match who {
            None => Err("this host has no relayer key".to_string()),
            Some(who) => {
                match tokio::time::timeout(timeout, s.reader.native_balance(chain, who)).await {
                    Ok(Ok(wei)) => Ok(wei),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
                }
            }
        };
        let (wei, error) = match read {
            Ok(w) => (Some(w), None),
            Err(e) => (None, Some(e)),
        };
        BalanceView {
            chain,
            key: who.map(|a| a.to_checksum(None)),
            pool,
            name: s.config.chain_name(chain),
            wei: wei.map(|w| w.to_string()),
            native: wei.map(whole),
            low_below_wei: threshold.to_string(),
            low: wei.is_some_and(|w| w < U256::from(threshold)),
            error,
        }
    });
    futures::future::join_all(reads).await
}

/// `wei` in whole coins with 6 decimals (rounded down).
fn whole(wei: U256) -> String {
    let micro = wei / U256::from(1_000_000_000_000u64);
    let unit = U256::from(1_000_000u64);
    format!("{}.{:06}", micro / unit, (micro % unit).to::<u64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wei_show_as_whole_coins() {
        assert_eq!(whole(U256::from(10u128.pow(18))), "1.000000");
        assert_eq!(whole(U256::from(1_234_567_890_000_000u128)), "0.001234");
        assert_eq!(whole(U256::ZERO), "0.000000");
    }
}
