//! `GET /api/route/why` (spec §4.3): what the winner beat and by how much
//! ([`relay_analysis::why`]). With `id`, the ranking the live route was
//! chosen from (kept at execute); otherwise, like `GET /api/route/compare`,
//! the RouteRequest in the query and a fresh (or 12 s cached) comparison.

use axum::{extract::State, Json};
use relay_analysis::why::{self, WhyAnswer};
use relay_engine::answer::CompareResult;
use relay_types::route::RouteRecord;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    compare::compared,
    edge::{self, QueryFields},
    quote::Quoting,
    ApiError, ErrorCode,
};

pub(super) fn routes(q: Quoting) -> OpenApiRouter<super::AppState> {
    OpenApiRouter::new()
        .routes(routes!(route_why))
        .with_state(q)
}

/// The RouteRequest of a stored route (to compare it afresh).
pub(super) fn request_of(r: &RouteRecord) -> Value {
    json!({
        "fromChain": r.from_chain.to_string(), "toChain": r.to_chain.to_string(),
        "fromToken": r.from_token, "toToken": r.to_token,
        "amount": r.amount.to_string(), "toAddress": r.recipient,
    })
}

/// A store failure, as the API answers it.
pub(crate) fn store_err(e: relay_store::StoreError) -> ApiError {
    ApiError::new(ErrorCode::StoreUnavailable, e.to_string())
}

/// The stored route `id`, or 404 `UNKNOWN_ROUTE`.
pub(crate) async fn stored_route(s: &super::AppState, id: &str) -> Result<RouteRecord, ApiError> {
    let found = s.store.get_route(id).await.map_err(store_err)?;
    let (route, _) =
        found.ok_or_else(|| ApiError::new(ErrorCode::UnknownRoute, "unknown route id"))?;
    Ok(route)
}

async fn for_route(q: &Quoting, id: &str) -> Result<WhyAnswer, ApiError> {
    let s = &q.app;
    let route = stored_route(s, id).await?;
    let kept = s.store.decision(id).await.map_err(store_err)?;
    let kept =
        kept.and_then(|(body, at)| Some((serde_json::from_str::<CompareResult>(&body).ok()?, at)));
    let mut answer = match kept {
        Some((cmp, at)) => {
            why::explain(&cmp, Some(&route.rail), &route.passed_over, ("execute", at))
        }
        None => {
            let (cmp, _) = compared(q, &request_of(&route)).await?;
            why::explain(
                &cmp,
                Some(&route.rail),
                &route.passed_over,
                ("now", q.app.clock.now_ms()),
            )
        }
    };
    answer.id = Some(route.id);
    Ok(answer)
}

#[utoipa::path(get, path = "/api/route/why", tag = "analysis", summary = "What the winner beat and by how much, per rail (net output, fees, ETA; rails that did not answer listed apart)", params(("id" = Option<String>, Query, description = "a live route's id: explains the ranking it was chosen from"), ("fromChain" = Option<String>, Query, description = "without id: the RouteRequest, as for GET /api/route/compare", example = "8453"), ("toChain" = Option<String>, Query, description = "destination node", example = "42161"), ("amount" = Option<String>, Query, description = "source smallest units", example = "5000000"), ("fromToken" = Option<String>, Query, description = "symbol or address"), ("toToken" = Option<String>, Query, description = "symbol or address"), ("toAddress" = Option<String>, Query, description = "recipient")), responses((status = 200, description = "OK", body = WhyAnswer), (status = "default", description = "A typed error (404 UNKNOWN_ROUTE; the compare errors for a RouteRequest)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(lane))]
async fn route_why(
    State(q): State<Quoting>,
    query: QueryFields,
) -> Result<Json<WhyAnswer>, ApiError> {
    let fields = edge::params(None, query)?;
    if let Some(id) = fields.get("id").and_then(Value::as_str) {
        return for_route(&q, id).await.map(Json);
    }
    let mut request: BTreeMap<String, Value> = serde_json::from_value(fields).unwrap_or_default();
    request.remove("id");
    let (cmp, _) = compared(&q, &serde_json::to_value(request).unwrap_or_default()).await?;
    Ok(Json(why::explain(
        &cmp,
        None,
        &[],
        ("now", q.app.clock.now_ms()),
    )))
}
