//! `GET /api/pricefeeds` (spec §4.1, §2.12): the USD price inputs the host
//! converts with, as `<ASSET>/USD` feeds. They are configuration, not
//! on-chain oracles, and say so ([`crate::engine::pricefeeds`]).

use axum::{extract::State, routing::get, Json, Router};
use serde_json::Value;

use super::AppState;
use crate::engine::pricefeeds;

pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/api/pricefeeds", get(feeds))
}

#[tracing::instrument(skip_all)]
async fn feeds(State(s): State<AppState>) -> Json<Value> {
    Json(pricefeeds::feeds(&s.config))
}
