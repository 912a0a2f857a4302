//! The privacy pool's HTTP adapter (spec §4.11): `GET /api/pool/tree`,
//! `POST /api/pool/withdraw` and `GET /api/pool/hold?ticket=`. Thin over
//! [`PoolService`]: parse, call, shape the answer. A withdrawal honours
//! `x-idempotency-key` through the edge's one guard.

use axum::{
    body::Bytes,
    extract::{Query, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::{edge::JsonObject, Feature, HasHandles, Limit, Section};
use relay_store::durable::{IdemKey, Idempotency};
use serde::Deserialize;
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    errors,
    tree::PoolTree,
    withdraw::{PoolWithdrawRequest, PoolWithdrawal},
    PoolError, PoolService,
};

/// The handle the handlers take from the host's state: the service, or
/// `None` when no pool is served (every call answers `POOL_NOT_SERVED`).
#[derive(Clone)]
pub struct PoolHandle(pub Option<Arc<PoolService>>);

/// The tree like a read, a withdrawal like a fund-moving call, a ticket
/// like a status read; the spec shows no limits.
pub(crate) const LIMITS: &[Limit] = &[
    Limit::get("pool-tree", "/api/pool/tree", 60),
    Limit::post("pool-withdraw", "/api/pool/withdraw", 20),
    Limit::get("pool-hold", "/api/pool/hold", 120),
];

/// The privacy pool (spec §4.11), as the host registers it.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "pool",
        home: "host/pool",
        spec: "§4.11",
        section: Some(Section {
            name: crate::SECTION,
            check: crate::config::check,
        }),
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(crate::start),
    }
}

fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    let pool = PoolHandle(s.handles().get::<Option<Arc<PoolService>>>().flatten());
    OpenApiRouter::new()
        .routes(routes!(tree))
        .routes(routes!(withdraw))
        .routes(routes!(hold))
        .with_state(pool)
}

fn service(s: &PoolHandle) -> Result<&Arc<PoolService>, ApiError> {
    s.0.as_ref().ok_or_else(|| {
        ApiError::new(
            errors::PoolNotServed,
            "this host relays for no privacy pool",
        )
    })
}

/// The API error of a refusal.
fn refused(e: PoolError) -> ApiError {
    match e {
        PoolError::Invalid { field, message } => {
            ApiError::new(ErrorCode::InvalidField, format!("{field}: {message}")).field(field)
        }
        PoolError::Refused(code, m) => ApiError::new(code, m),
        PoolError::Chain(m) => ApiError::new(errors::PoolChainUnavailable, m),
        PoolError::Store(e) => ApiError::new(ErrorCode::StoreUnavailable, e.to_string()),
    }
}

#[utoipa::path(get, path = "/api/pool/tree", tag = "pool", summary = "BETA AND UNAUDITED: the privacy pool's whole tree (every commitment and the root, checked against the contract and logged in the witness log) and what a withdrawal's proof must name",
    responses((status = 200, description = "OK", body = PoolTree), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn tree(State(s): State<PoolHandle>) -> Result<Json<PoolTree>, ApiError> {
    service(&s)?.tree().await.map(Json).map_err(refused)
}

#[utoipa::path(post, path = "/api/pool/withdraw", tag = "pool", summary = "BETA AND UNAUDITED: withdraw a note with a zero-knowledge proof; the relayer verifies it, simulates and sends (now, or held: `hold: {}`)",
    request_body = PoolWithdrawRequest,
    params(("x-idempotency-key" = Option<String>, Header, description = "a repeat replays the first answer; a note is withdrawn once regardless")),
    responses(
        (status = 200, description = "Sent now: state SENT with txHash (or FAILED with the reason)", body = PoolWithdrawal),
        (status = 202, description = "Held: state HELD with its ticket and sendAfterMs", body = PoolWithdrawal),
        (status = "default", description = "A typed error; nothing was sent", body = ErrorBody),
    ))]
#[tracing::instrument(skip_all)]
async fn withdraw(State(s): State<PoolHandle>, headers: HeaderMap, body: Bytes) -> Response {
    let svc = match service(&s) {
        Ok(svc) => svc,
        Err(e) => return e.into_response(),
    };
    let Some(key) = relay_feature::edge::idempotency_key(&headers) else {
        return run_withdraw(svc, &body)
            .await
            .unwrap_or_else(IntoResponse::into_response);
    };
    let stale = svc.parts.config.execution.idempotency_stale_ms;
    let guard = Idempotency::new(svc.parts.store.clone(), stale);
    let run = || run_withdraw(svc, &body);
    let key = IdemKey::scoped("pool-withdraw", "", &key);
    relay_feature::once::idempotent(&guard, &key, &body, run, IntoResponse::into_response)
        .await
        .unwrap_or_else(|_| relay_feature::once::in_flight())
}

async fn run_withdraw(svc: &PoolService, body: &Bytes) -> Result<Response, ApiError> {
    let req: PoolWithdrawRequest = JsonObject::parse(body)?.decode()?;
    let done = svc.withdraw(&req).await.map_err(refused)?;
    let status = match done.state.as_str() {
        crate::store::HELD => StatusCode::ACCEPTED,
        _ => StatusCode::OK,
    };
    Ok((status, Json(done)).into_response())
}

/// `GET /api/pool/hold` query.
#[derive(Debug, Deserialize, IntoParams, ToSchema)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PoolHoldQuery {
    /// The ticket a withdrawal answered (`pt_…`).
    pub ticket: String,
}

#[utoipa::path(get, path = "/api/pool/hold", tag = "pool", summary = "A withdrawal's state by its ticket: HELD, SENDING, SENT or FAILED, with every state it was in",
    params(PoolHoldQuery),
    responses((status = 200, description = "OK", body = PoolWithdrawal), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn hold(
    State(s): State<PoolHandle>,
    q: Result<Query<PoolHoldQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<PoolWithdrawal>, ApiError> {
    let Query(q) = q.map_err(|e| {
        ApiError::new(ErrorCode::InvalidField, format!("ticket: {e}")).field("ticket")
    })?;
    service(&s)?
        .hold(&q.ticket)
        .await
        .map(Json)
        .map_err(refused)
}
