//! `GET /api/pricefeeds` (spec §4.1, §2.12): the USD price inputs the host
//! converts with, as `<ASSET>/USD` feeds. They are configuration, not
//! on-chain oracles, and say so ([`relay_engine::pricefeeds`]).

use super::AppState;
use axum::{extract::State, routing::get, Json, Router};
use relay_engine::pricefeeds;
use serde_json::Value;

pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/api/pricefeeds", get(feeds))
}

#[tracing::instrument(skip_all)]
async fn feeds(State(s): State<AppState>) -> Json<Value> {
    Json(pricefeeds::feeds(&s.config))
}
