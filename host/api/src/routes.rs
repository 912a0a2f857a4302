//! `GET /api/route/chains` (spec §2.3): the mesh.

use super::{ApiError, AppState};
use axum::{extract::State, routing::get, Json, Router};
use relay_engine::mesh;
use serde_json::Value;

pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/api/route/chains", get(chains))
}

#[tracing::instrument(skip_all)]
async fn chains(State(s): State<AppState>) -> Result<Json<Value>, ApiError> {
    super::with_mesh(&s, mesh::route_chains).await.map(Json)
}
