//! The engine as the yield account's delivery leg
//! ([`relay_accounts::yield_account::leg`]): a leg is quoted by the same
//! fan-out as `POST /api/route/quote` and started by the same execute
//! service as `POST /api/route/execute`, as a live `mode: self` route
//! (the relayer already holds the redeemed assets) under the id the spend
//! derives, with the agent as its sender of record.

use std::sync::Arc;

use relay_accounts::yield_account::leg::{Leg, LegError, LegQuote, LegRouter};
use relay_engine::{request::parse_execute, route::parse_route};
use relay_execution::execute::{ExecuteRequest, Executed};
use serde_json::{json, Value};

use super::{quote::Quoting, ApiError, AppState, ErrorCode};

/// The engine's legs over the host's quote fan-out and execute service.
pub struct EngineLegs {
    q: Quoting,
}

/// The delivery legs of `state`'s yield account.
pub fn legs(state: &AppState) -> Arc<dyn LegRouter> {
    Arc::new(EngineLegs {
        q: Quoting::of(state),
    })
}

impl EngineLegs {
    pub(super) fn new(q: Quoting) -> Self {
        EngineLegs { q }
    }

    /// The execute body a client would send for `leg`.
    fn body(leg: &Leg) -> Value {
        json!({
            "fromChain": leg.src_chain, "toChain": leg.to_chain,
            "fromToken": leg.symbol, "toToken": leg.symbol,
            "amount": leg.amount.to_string(),
            "fromAddress": leg.agent.to_string(), "toAddress": leg.to_address.to_string(),
            "mode": "self", "live": true,
        })
    }
}

fn leg_error(e: ApiError) -> LegError {
    LegError {
        code: e.code.as_str().to_string(),
        message: e.message,
    }
}

#[async_trait::async_trait]
impl LegRouter for EngineLegs {
    #[tracing::instrument(skip_all, fields(lane = %format!("{}->{}", leg.src_chain, leg.to_chain)))]
    async fn quote(&self, leg: &Leg) -> Result<LegQuote, LegError> {
        let ask =
            parse_route(&Self::body(leg), &self.q.app.config).map_err(|e| leg_error(e.into()))?;
        let outcome = self.q.run(&ask).await.map_err(leg_error)?;
        match outcome.best() {
            Some((r, p)) => Ok(LegQuote {
                rail: r.rail.clone(),
                lane: r.lane.clone(),
                estimated: p.net.estimated.0,
                min_out: p.net.min.0,
            }),
            None => Err(leg_error(super::quote::no_route(outcome.no_route()))),
        }
    }

    #[tracing::instrument(skip_all, fields(route = %leg.route_id))]
    async fn start(&self, leg: &Leg) -> Result<(), LegError> {
        let store = &self.q.app.store;
        let found = store.get_route(&leg.route_id).await.map_err(|e| LegError {
            code: ErrorCode::StoreUnavailable.as_str().into(),
            message: e.to_string(),
        })?;
        if found.is_some() {
            return Ok(());
        }
        let ask =
            parse_execute(&Self::body(leg), &self.q.app.config).map_err(|e| leg_error(e.into()))?;
        let req = ExecuteRequest {
            ask,
            sandbox: false,
            idempotency_key: None,
            operator: true,
            rehearse: false,
        };
        let id = Some(leg.route_id.clone());
        match self.q.service.execute_as(&self.q, req, id).await {
            Ok(Executed::Live(_)) => Ok(()),
            Ok(Executed::FundsRequired { note, .. }) => Err(LegError {
                code: relay_types::RouteStatus::FundsRequired.public().into(),
                message: note,
            }),
            Ok(other) => Err(LegError {
                code: relay_types::FailureCode::ExecutionFailed.as_str().into(),
                message: format!(
                    "the delivery was not run live ({})",
                    other.record().status.public()
                ),
            }),
            Err(e) => Err(leg_error(e.into())),
        }
    }
}
