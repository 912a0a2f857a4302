//! Waiting on the upstream (spec §3.1 "BRIDGING (live) → DONE when the
//! underlying bridge reports delivery"): the route's rail reads upstream
//! progress through its `track`; the host polls it every
//! `execution.track_interval_ms`, records stage changes (each with its
//! outbox event), and stops at delivery, failure, the rail's follow-up
//! actions, or `execution.track_timeout_ms` after the route was accepted.
//!
//! A rail that is briefly unloaded or whose upstream errs does not fail the
//! route: the next poll asks again until the timeout.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use super::executor::{ExecError, Executor, Held};
use relay_plugin_api::{PlanAction, TrackRequest, TrackState, TrackStatus};
use relay_runtime::rails::RailSet;
use relay_types::now_ms;
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
            if let Some(st) = self.ask(h, reference).await {
                match st.state {
                    TrackState::Done => {
                        h.r.dest_tx = st.dest_tx.or(h.r.dest_tx.take());
                        return Ok(Vec::new());
                    }
                    TrackState::Failed => {
                        return Err(failed(FailureCode::UpstreamFailed, st.message))
                    }
                    TrackState::Refunded => {
                        return Err(failed(FailureCode::RefundedByUpstream, st.message))
                    }
                    TrackState::Pending | TrackState::Bridging => {
                        if !st.follow_up.is_empty() {
                            self.note(h, &st).await?;
                            return Ok(st.follow_up);
                        }
                        self.note(h, &st).await?;
                    }
                }
            }
            if !self.ex.claim(&h.r.id).await? {
                return Err(ExecError::Store("lost the route's lease".into()));
            }
            if now_ms() > deadline {
                return Err(failed(
                    FailureCode::UpstreamTimeout,
                    Some(format!("no delivery within {} ms", cfg.track_timeout_ms)),
                ));
            }
            tokio::time::sleep(every).await;
        }
    }

    /// One `track` call; `None` when the rail is not loaded or errs.
    async fn ask(&self, h: &Held, reference: &str) -> Option<TrackStatus> {
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

/// One `track` call for `r` waiting on `reference` (its AwaitUpstream
/// step); `None` when the rail is not loaded or errs.
async fn ask_rail(rails: &RailSet, r: &RouteRecord, reference: &str) -> Option<TrackStatus> {
    let Some(rail) = rails.snapshot().get(&r.rail).cloned() else {
        tracing::warn!(rail = %r.rail, "rail not loaded; waiting for it");
        return None;
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
        Ok(st) => Some(st),
        Err(e) => {
            tracing::info!(rail = %r.rail, error = %e, "track failed; asking again");
            None
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
pub(super) struct RecheckCache(std::sync::Mutex<HashMap<String, (Instant, TrackStatus)>>);

impl RecheckCache {
    fn fresh(&self, id: &str) -> Option<TrackStatus> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (at, st) = map.get(id)?;
        (at.elapsed() < RECHECK_REUSE).then(|| st.clone())
    }

    fn put(&self, id: &str, st: &TrackStatus) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, (at, _)| at.elapsed() < RECHECK_REUSE);
        map.insert(id.to_string(), (Instant::now(), st.clone()));
    }
}

impl Executor {
    /// Spec §4.2 "live ids are re-checked against the underlying bridge on
    /// each read": the rail's view of a route that waits on its upstream,
    /// read-only (the route's runner records it on its next poll). `None`
    /// when the route waits on nothing, or the rail does not answer within
    /// [`RECHECK_TIMEOUT`]. An answer serves reads of the same route for
    /// [`RECHECK_REUSE`].
    pub async fn recheck(&self, r: &RouteRecord) -> Option<TrackStatus> {
        if !matches!(
            r.status,
            RouteStatus::Bridging | RouteStatus::AwaitingDeposit
        ) {
            return None;
        }
        let Some(PlanAction::AwaitUpstream { reference }) = r.plan.steps.get(r.next_step) else {
            return None;
        };
        if let Some(st) = self.rechecks.fresh(&r.id) {
            return Some(st);
        }
        let st = tokio::time::timeout(RECHECK_TIMEOUT, ask_rail(&self.rails, r, reference))
            .await
            .ok()
            .flatten()?;
        self.rechecks.put(&r.id, &st);
        Some(st)
    }
}
