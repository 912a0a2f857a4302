//! `GET /api/delivery/stats` (spec §4.1): delivery success and latency of
//! the routes this host stored, over a window of creation times
//! ([`relay_engine::delivery`] defines every figure). Optional query
//! `days` (1 to 365, default 30); anything else is 400 `INVALID_FIELD`
//! naming `days`. Sandbox routes are never counted.

use axum::{extract::State, routing::get, Json, Router};
use serde_json::{json, Value};

use super::{
    edge::{self, QueryFields},
    ApiError, AppState, ErrorCode,
};
use relay_engine::delivery;
use relay_types::now_ms;

/// The window when none is asked for, days.
const DEFAULT_DAYS: u64 = 30;
/// The longest window, days.
const MAX_DAYS: u64 = 365;

pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/api/delivery/stats", get(stats))
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

#[tracing::instrument(skip_all)]
async fn stats(State(s): State<AppState>, query: QueryFields) -> Result<Json<Value>, ApiError> {
    let days = window_days(&edge::params(None, query)?)?;
    let to = now_ms();
    let from = to.saturating_sub(days * 86_400_000);
    let store =
        |e: relay_store::StoreError| ApiError::new(ErrorCode::StoreUnavailable, e.to_string());
    let (counts, latencies) = tokio::try_join!(
        s.store.route_counts_since(from),
        s.store.delivery_latencies_ms(from)
    )
    .map_err(store)?;
    let stats = delivery::compute(&counts, &latencies);
    let mut body = serde_json::to_value(&stats).unwrap_or_default();
    body["window"] = json!({"days": days, "from": from, "to": to});
    body["note"] = json!("routes created in the window, by status (PENDING shown as BRIDGING; dry runs left out); successRate = DONE / (DONE + FAILED); latencySec is created-to-DONE, nearest-rank percentiles; sandbox routes are never stored or counted");
    Ok(Json(body))
}
