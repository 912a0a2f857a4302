//! `GET /api/routes/recent?limit=` (spec §2.11, §4.3, §8.2): the
//! anonymised feed of the newest routes — coarse strings only, never an
//! address, hash, route id or exact amount ([`relay_engine::recent`]
//! defines every field). `limit` defaults to 25; above 100 is clamped to
//! 100; anything but a positive integer is a 400 naming `limit`. Sandbox
//! routes are never persisted, so they never appear.
//!
//! Response: `{routes: [{lane, asset, rail, status, when, size, sandbox}],
//! count, limit, note}`.

use axum::{extract::State, Json};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::{self, QueryFields},
    ApiError, AppState, ErrorCode,
};
use relay_engine::{recent, tokens};
use relay_types::route::RouteRecord;

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(recent_routes))
}

#[utoipa::path(get, path = "/api/routes/recent", tag = "routing", summary = "Recent routes, coarse: no addresses, hashes or amounts", params(("limit" = Option<u32>, Query, description = "1 to 100 (default 25)")), responses((status = 200, description = "OK", body = recent::RecentRoutes), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(limit))]
pub(crate) async fn recent_routes(
    State(s): State<AppState>,
    query: QueryFields,
) -> Result<Json<recent::RecentRoutes>, ApiError> {
    let fields = edge::params(None, query)?;
    let limit =
        recent::parse_limit(fields.get("limit").and_then(Value::as_str)).map_err(|why| {
            ApiError::new(ErrorCode::InvalidField, format!("limit: {why}"))
                .field("limit")
                .suggest("send limit as an integer from 1 to 100 (default 25)")
        })?;
    tracing::Span::current().record("limit", limit);
    let rows = s
        .store
        .recent_routes(limit)
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    let now = s.clock.now_ms();
    let routes = rows.iter().map(|r| coarse(&s, r, now)).collect();
    Ok(Json(recent::RecentRoutes::new(routes, limit)))
}

/// What the public may see of `r` at `now`: the feed's coarse entry.
pub(crate) fn coarse(s: &AppState, r: &RouteRecord, now: u64) -> recent::RecentRoute {
    let decimals = tokens::resolve(&s.config, r.from_chain, Some(&r.from_token))
        .ok()
        .map(|t| t.decimals);
    recent::entry(r, decimals, now)
}
