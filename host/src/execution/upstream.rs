//! Waiting on the upstream (spec §3.1 "BRIDGING (live) → DONE when the
//! underlying bridge reports delivery"): the route's rail reads upstream
//! progress through its `track`; the host polls it every
//! `execution.track_interval_ms`, records stage changes (each with its
//! outbox event), and stops at delivery, failure, the rail's follow-up
//! actions, or `execution.track_timeout_ms` after the route was accepted.
//!
//! A rail that is briefly unloaded or whose upstream errs does not fail the
//! route: the next poll asks again until the timeout.

use std::time::Duration;

use relay_plugin_api::{PlanAction, TrackRequest, TrackState, TrackStatus};

use super::{
    executor::{ExecError, Executor, Held},
    model::{FailureCode, RouteStatus},
};
use crate::capabilities::now_ms;

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
        let rail = self.ex.rails.snapshot().get(&h.r.rail).cloned();
        let Some(rail) = rail else {
            tracing::warn!(rail = %h.r.rail, "rail not loaded; waiting for it");
            return None;
        };
        let reference =
            h.r.track_ref
                .clone()
                .or_else(|| Some(reference.to_string()).filter(|r| !r.is_empty()));
        let req = TrackRequest {
            route_id: h.r.id.clone(),
            reference,
            from_chain: h.r.from_chain,
            to_chain: h.r.to_chain,
            src_tx: h.r.src_tx.clone(),
        };
        match rail.track(req).await {
            Ok(st) => Some(st),
            Err(e) => {
                tracing::info!(rail = %h.r.rail, error = %e, "track failed; asking again");
                None
            }
        }
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
