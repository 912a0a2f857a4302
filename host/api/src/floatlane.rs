//! `GET /api/floatlane/info` (spec §4.1): the float lane's tiers, per-chain
//! float, `capNow` and cost floors from live probe quotes, and
//! `vip.registry`, the recognised membership collections
//! ([`relay_engine::floatinfo`]). Answers 200 with `available: false`
//! when no float-lane rail is loaded or the operator disabled it.

use super::{ApiError, AppState, ErrorCode};
use axum::{extract::State, routing::get, Json, Router};
use relay_chain::reader::ChainReader;
use relay_engine::floatinfo;
use serde_json::Value;
use std::sync::Arc;

pub(super) fn routes(reader: Arc<ChainReader>) -> Router<AppState> {
    Router::new().route(
        "/api/floatlane/info",
        get(move |State(s): State<AppState>| async move { info(s, &reader).await }),
    )
}

#[tracing::instrument(skip_all)]
async fn info(s: AppState, reader: &ChainReader) -> Result<Json<Value>, ApiError> {
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
