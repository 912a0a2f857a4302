//! Waiting on the upstream (spec §3.1 "BRIDGING (live) → DONE when the
//! underlying bridge reports delivery"): the route's rail reads upstream
//! progress through its `track`; the host polls it every
//! `execution.track_interval_ms`, records stage changes (each with its
//! outbox event), and stops at delivery, failure, the rail's follow-up
//! actions, or `execution.track_timeout_ms` after the route was accepted.
//!
//! A rail that is briefly unloaded or whose upstream errs does not fail the
//! route: the next poll asks again until the timeout.
//!
//! A rail whose upstream has no status API answers
//! [`RailError::no_status_api`](relay_plugin_api::RailError::no_status_api)
//! (contract 1.1): at each such answer the host looks at the destination
//! chain itself ([`super::dest_watch`]) and a payout found finishes the wait
//! as a `DONE` answer would. The route keeps its status meanwhile
//! (`BRIDGING`); a status read shows `upstream {state:
//! "WATCHING_DESTINATION", watch}`.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use super::{
    dest_watch::Target,
    executor::{ExecError, Executor, Held},
    receipt::{UpstreamView, WatchView},
};
use relay_plugin_api::{PlanAction, RailError, TrackRequest, TrackState, TrackStatus};
use relay_runtime::rails::RailSet;
use relay_types::{FailureCode, RouteRecord, RouteStatus};

/// One route's wait on its upstream.
pub(super) struct Upstream<'a> {
    ex: &'a Executor,
}

impl<'a> Upstream<'a> {
    pub(super) fn new(ex: &'a Executor) -> Self {
        Upstream { ex }
    }

    /// Polls until the upstream delivers (sets `destTx`) or hands back
    /// follow-up actions for the host to run.
    pub(super) async fn wait(
        &self,
        h: &mut Held,
        reference: &str,
    ) -> Result<Vec<PlanAction>, ExecError> {
        let cfg = &self.ex.config.execution;
        let deadline = h.r.created_ms.saturating_add(cfg.track_timeout_ms);
        let every = Duration::from_millis(cfg.track_interval_ms.max(10));
        loop {
            match self.ask(h, reference).await {
                Asked::Status(st) => {
                    if let Some(follow) = self.on_answer(h, st).await? {
                        return Ok(follow);
                    }
                }
                Asked::NoStatusApi => {
                    if let Some(tx) = self.watch(h).await {
                        h.r.dest_tx = Some(tx);
                        return Ok(Vec::new());
                    }
                }
                Asked::Nothing => {}
            }
            if !self.ex.claim(&h.r.id).await? {
                return Err(ExecError::Store("lost the route's lease".into()));
            }
            if self.ex.store.clock().now_ms() > deadline {
                return Err(failed(
                    FailureCode::UpstreamTimeout,
                    Some(format!(
                        "no delivery seen within {} ms; the upstream may still deliver, so nothing is refunded automatically: where funds moved, the operator settles it with the upstream",
                        cfg.track_timeout_ms
                    )),
                ));
            }
            tokio::time::sleep(every).await;
        }
    }

    /// What one `track` answer means for the wait: `Some(follow-ups)` when
    /// the wait ends (none on delivery), `None` to go on asking.
    async fn on_answer(
        &self,
        h: &mut Held,
        st: TrackStatus,
    ) -> Result<Option<Vec<PlanAction>>, ExecError> {
        match st.state {
            TrackState::Done => {
                h.r.dest_tx = st.dest_tx.or(h.r.dest_tx.take());
                Ok(Some(Vec::new()))
            }
            TrackState::Failed => Err(failed(FailureCode::UpstreamFailed, st.message)),
            TrackState::Refunded => Err(failed(FailureCode::RefundedByUpstream, st.message)),
            TrackState::Pending | TrackState::Bridging => {
                self.note(h, &st).await?;
                Ok((!st.follow_up.is_empty()).then_some(st.follow_up))
            }
        }
    }

    /// One look at the destination chain for the payout; `Some(destTx)`
    /// once found. A destination that cannot be watched, or a chain or
    /// store that does not answer, finds nothing (the wait goes on to the
    /// track timeout).
    async fn watch(&self, h: &Held) -> Option<String> {
        let found = match Target::of(&self.ex.config, &h.r) {
            Ok(t) => self.ex.watch_destination(&h.r, &t).await,
            Err(e) => Err(e),
        };
        found.unwrap_or_else(|e| {
            tracing::info!(route = %h.r.id, error = %e, "no status API and no payout seen; asking again");
            None
        })
    }

    /// One `track` call.
    async fn ask(&self, h: &Held, reference: &str) -> Asked {
        ask_rail(&self.ex.rails, &h.r, reference).await
    }

    /// Records a change of state or stage.
    async fn note(&self, h: &mut Held, st: &TrackStatus) -> Result<(), ExecError> {
        let status = match (h.r.status, st.state) {
            (RouteStatus::AwaitingDeposit, TrackState::Pending) => RouteStatus::AwaitingDeposit,
            _ => RouteStatus::Bridging,
        };
        let stage = st.stage.clone().or(h.r.stage.clone());
        if status == h.r.status && stage == h.r.stage {
            return Ok(());
        }
        h.r.status = status;
        h.r.stage = stage;
        h.save(&self.ex.store, "status").await
    }
}

fn failed(code: FailureCode, message: Option<String>) -> ExecError {
    ExecError::Upstream {
        code,
        message: message.unwrap_or_else(|| "the upstream reported failure".into()),
    }
}

/// What one `track` call said.
enum Asked {
    /// An answer.
    Status(TrackStatus),
    /// The upstream has no status API: the host watches the destination.
    NoStatusApi,
    /// The rail is not loaded, or erred: ask again later.
    Nothing,
}

/// One `track` call for `r` waiting on `reference` (its AwaitUpstream
/// step).
async fn ask_rail(rails: &RailSet, r: &RouteRecord, reference: &str) -> Asked {
    let Some(rail) = rails.snapshot().get(&r.rail).cloned() else {
        tracing::warn!(rail = %r.rail, "rail not loaded; waiting for it");
        return Asked::Nothing;
    };
    let reference = r
        .track_ref
        .clone()
        .or_else(|| Some(reference.to_string()).filter(|r| !r.is_empty()));
    let req = TrackRequest {
        route_id: r.id.clone(),
        reference,
        from_chain: r.from_chain,
        to_chain: r.to_chain,
        src_tx: r.src_tx.clone(),
    };
    match rail.track(req).await {
        Ok(st) => Asked::Status(st),
        Err(relay_runtime::CallError::Rail(e)) if RailError::is_no_status_api(&e) => {
            Asked::NoStatusApi
        }
        Err(e) => {
            tracing::info!(rail = %r.rail, error = %e, "track failed; asking again");
            Asked::Nothing
        }
    }
}

/// How long a status read waits for the rail's answer before it reports
/// the stored state alone.
const RECHECK_TIMEOUT: Duration = Duration::from_secs(3);

/// How long one re-checked answer serves further reads of the same route,
/// so clients polling fast do not each cost an upstream request.
const RECHECK_REUSE: Duration = Duration::from_secs(1);

/// The latest re-checked answer per route, kept [`RECHECK_REUSE`].
#[derive(Debug, Default)]
pub(super) struct RecheckCache(std::sync::Mutex<HashMap<String, (Instant, UpstreamView)>>);

impl RecheckCache {
    fn fresh(&self, id: &str) -> Option<UpstreamView> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (at, st) = map.get(id)?;
        (at.elapsed() < RECHECK_REUSE).then(|| st.clone())
    }

    fn put(&self, id: &str, st: &UpstreamView) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, (at, _)| at.elapsed() < RECHECK_REUSE);
        map.insert(id.to_string(), (Instant::now(), st.clone()));
    }
}

impl Executor {
    /// Spec §4.2 "live ids are re-checked against the underlying bridge on
    /// each read": the rail's view of a route that waits on its upstream,
    /// read-only (the route's runner records it on its next poll). When the
    /// upstream has no status API, the host's watch of the destination
    /// chain instead ([`UpstreamView`]). `None` when the route waits on
    /// nothing, or the rail does not answer within `RECHECK_TIMEOUT` (3 s). An
    /// answer serves reads of the same route for `RECHECK_REUSE` (1 s).
    pub async fn recheck(&self, r: &RouteRecord) -> Option<UpstreamView> {
        if !matches!(
            r.status,
            RouteStatus::Bridging | RouteStatus::AwaitingDeposit
        ) {
            return None;
        }
        let Some(PlanAction::AwaitUpstream { reference }) = r.plan.steps.get(r.next_step) else {
            return None;
        };
        if let Some(view) = self.rechecks.fresh(&r.id) {
            return Some(view);
        }
        let asked = tokio::time::timeout(RECHECK_TIMEOUT, ask_rail(&self.rails, r, reference))
            .await
            .ok()?;
        let view = match asked {
            Asked::Status(st) => UpstreamView::of(&st, self.store.clock().now_ms()),
            Asked::NoStatusApi => self.watching(r).await,
            Asked::Nothing => return None,
        };
        self.rechecks.put(&r.id, &view);
        Some(view)
    }

    /// The view of a route whose upstream has no status API.
    async fn watching(&self, r: &RouteRecord) -> UpstreamView {
        let (state, message) = match Target::of(&self.config, r) {
            Ok(_) => (
                "WATCHING_DESTINATION",
                "the upstream has no status API: the host watches the destination chain for a \
                 transfer of the destination token to the recipient of at least minOut"
                    .to_string(),
            ),
            Err(e) => (
                "NO_STATUS_API",
                format!("the upstream has no status API and the host {e}; the route waits until the track timeout"),
            ),
        };
        let watch = self.store.dest_watch(&r.id).await.ok().flatten();
        UpstreamView {
            state: state.into(),
            stage: r.stage.clone(),
            dest_tx: None,
            message: Some(message),
            checked_ms: self.store.clock().now_ms(),
            watch: watch.as_ref().map(WatchView::from),
        }
    }
}
