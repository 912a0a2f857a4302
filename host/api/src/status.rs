//! `GET /api/status` (spec §2.2).

use super::{ApiError, AppState};
use axum::{extract::State, routing::get, Json, Router};
use relay_engine::mesh;
use serde_json::Value;

pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/api/status", get(status)).route(
        "/api/errors",
        get(|| async { Json(super::error::catalogue()) }),
    )
}

#[tracing::instrument(skip_all)]
async fn status(State(s): State<AppState>) -> Result<Json<Value>, ApiError> {
    super::with_mesh(&s, mesh::status).await.map(Json)
}
