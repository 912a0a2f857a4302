//! `GET /api/floatlane/info` (spec §4.1): the float lane's tiers, per-chain
//! float, `capNow` and cost floors from live probe quotes, and
//! `vip.registry`, the recognised membership collections
//! ([`relay_engine::floatinfo`]). Answers 200 with `available: false`
//! when no float-lane rail is loaded or the operator disabled it.

use super::{ApiError, AppState, ErrorCode};
use axum::{extract::State, Json};
use relay_engine::floatinfo;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(info))
}

#[utoipa::path(get, path = "/api/floatlane/info", tag = "discovery", summary = "Float-lane tiers, per-chain float, capNow and cost floors", responses((status = 200, description = "OK", body = floatinfo::FloatLaneInfo), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn info(State(s): State<AppState>) -> Result<Json<floatinfo::FloatLaneInfo>, ApiError> {
    let reader = &s.reader;
    use relay_registry::OperatorStateStore;
    let state = s
        .store
        .load_operator_state()
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    let snap = s.rails.snapshot();
    Ok(Json(
        floatinfo::info(&snap, &state, &s.config, reader).await,
    ))
}
