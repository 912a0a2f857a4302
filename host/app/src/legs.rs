//! The yield account's delivery legs ([`relay_yield_account::leg`])
//! over routing: a leg is quoted by the same fan-out as
//! `POST /api/route/quote` and started by the same execute service as
//! `POST /api/route/execute`, as a live `mode: self` route (the relayer
//! already holds the redeemed assets) under the id the spend derives, with
//! the agent as its sender of record.

use std::sync::Arc;

use relay_engine::{request::ExecuteAsk, route::RouteAsk};
use relay_errors::{no_route, ApiError, ErrorCode};
use relay_execution::execute::{ExecuteRequest, Executed};
use relay_wire::{ExecuteFields, Loose, Node, RouteRequest};
use relay_yield_account::leg::{Leg, LegError, LegQuote, LegRouter};

use crate::Routing;

/// The engine's legs over the host's routing.
pub struct EngineLegs {
    routing: Arc<Routing>,
}

impl EngineLegs {
    /// Legs over `routing`.
    pub fn new(routing: Arc<Routing>) -> Self {
        EngineLegs { routing }
    }

    /// The route a client would ask for `leg`: the asset from the source
    /// chain to the destination, the agent its sender of record.
    fn route(leg: &Leg) -> RouteRequest {
        RouteRequest {
            from_chain: Some(Loose::Typed(Node::Id(leg.src_chain))),
            to_chain: Some(Loose::Typed(Node::Id(leg.to_chain))),
            amount: Some(Loose::Typed(leg.amount.to_string())),
            from_token: Some(leg.symbol.clone()),
            to_token: Some(leg.symbol.clone()),
            from_address: Some(leg.agent.to_string()),
            to_address: Some(leg.to_address.to_string()),
            ..RouteRequest::default()
        }
    }

    /// The execute a client would send for `leg`: live, the operator's
    /// own funds (the relayer holds the redeemed assets).
    fn execute(leg: &Leg) -> relay_wire::ExecuteRequest {
        relay_wire::ExecuteRequest {
            route: Self::route(leg),
            execute: ExecuteFields {
                mode: Some("self".into()),
                live: Some(true),
                ..ExecuteFields::default()
            },
        }
    }
}

fn leg_error(e: impl Into<ApiError>) -> LegError {
    let e = e.into();
    LegError {
        code: e.code.as_str().to_string(),
        message: e.message,
    }
}

#[async_trait::async_trait]
impl LegRouter for EngineLegs {
    #[tracing::instrument(skip_all, fields(lane = %format!("{}->{}", leg.src_chain, leg.to_chain)))]
    async fn quote(&self, leg: &Leg) -> Result<LegQuote, LegError> {
        let config = &self.routing.deps().config;
        let ask = RouteAsk::from_request(&Self::route(leg), config).map_err(leg_error)?;
        let outcome = self.routing.quote(&ask).await.map_err(leg_error)?;
        match outcome.best() {
            Some((r, p)) => Ok(LegQuote {
                rail: r.rail.clone(),
                lane: r.lane.clone(),
                estimated: p.net.estimated.0,
                min_out: p.net.min.0,
            }),
            None => Err(leg_error(no_route(outcome.no_route()))),
        }
    }

    #[tracing::instrument(skip_all, fields(route = %leg.route_id))]
    async fn start(&self, leg: &Leg) -> Result<(), LegError> {
        let d = self.routing.deps();
        let found = d
            .store
            .get_route(&leg.route_id)
            .await
            .map_err(|e| LegError {
                code: ErrorCode::StoreUnavailable.as_str().into(),
                message: e.to_string(),
            })?;
        if found.is_some() {
            return Ok(());
        }
        let ask = ExecuteAsk::from_request(&Self::execute(leg), &d.config).map_err(leg_error)?;
        let req = ExecuteRequest {
            ask,
            sandbox: false,
            idempotency_key: None,
            operator: true,
            rehearse: false,
        };
        let id = Some(leg.route_id.clone());
        let service = self.routing.execute();
        match service.execute_as(self.routing.as_ref(), req, id).await {
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
            Err(e) => Err(leg_error(e)),
        }
    }
}
