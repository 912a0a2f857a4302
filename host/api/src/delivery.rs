//! `GET /api/delivery/stats` (spec §4.1): delivery success and latency of
//! the routes this host stored, over a window of creation times
//! ([`relay_engine::delivery`] defines every figure). Optional query
//! `days` (1 to 365, default 30); anything else is 400 `INVALID_FIELD`
//! naming `days`. Sandbox routes are never counted.

use axum::{extract::State, Json};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::{self, QueryFields},
    ApiError, AppState, ErrorCode,
};
use relay_engine::delivery;

/// The window when none is asked for, days.
const DEFAULT_DAYS: u64 = 30;
/// The longest window, days.
const MAX_DAYS: u64 = 365;

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(stats))
}

fn window_days(fields: &Value) -> Result<u64, ApiError> {
    let Some(raw) = fields.get("days").and_then(Value::as_str) else {
        return Ok(DEFAULT_DAYS);
    };
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|d| (1..=MAX_DAYS).contains(d))
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidField,
                format!("days: {raw:?} is not a whole number from 1 to {MAX_DAYS}"),
            )
            .field("days")
        })
}

#[utoipa::path(get, path = "/api/delivery/stats", tag = "discovery", summary = "Delivery success and latency distribution", params(("days" = Option<u64>, Query, description = "window, 1 to 365 days (default 30)")), responses((status = 200, description = "OK", body = delivery::DeliveryReport), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn stats(
    State(s): State<AppState>,
    query: QueryFields,
) -> Result<Json<delivery::DeliveryReport>, ApiError> {
    let days = window_days(&edge::params(None, query)?)?;
    let to = s.clock.now_ms();
    let from = to.saturating_sub(days * 86_400_000);
    let store =
        |e: relay_store::StoreError| ApiError::new(ErrorCode::StoreUnavailable, e.to_string());
    let (counts, latencies) = tokio::try_join!(
        s.store.route_counts_since(from),
        s.store.delivery_latencies_ms(from)
    )
    .map_err(store)?;
    let stats = delivery::compute(&counts, &latencies);
    let window = delivery::Window { days, from, to };
    Ok(Json(delivery::DeliveryReport::new(stats, window)))
}
