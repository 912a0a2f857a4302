//! `GET /api/status` (spec §2.2).

use super::{ApiError, AppState};
use axum::{extract::State, Json};
use relay_engine::mesh;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(errors))
}

#[utoipa::path(get, path = "/api/errors", tag = "discovery", summary = "The catalogue of every errorCode, blocker, warning and failure code", responses((status = 200, description = "OK", body = super::error::Catalogue), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
async fn errors() -> Json<super::error::Catalogue> {
    Json(super::error::catalogue())
}

#[utoipa::path(get, path = "/api/status", tag = "discovery", summary = "Service health: nodes, rails, endpoints (30 s cache)", responses((status = 200, description = "OK", body = mesh::Status), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn status(State(s): State<AppState>) -> Result<Json<mesh::Status>, ApiError> {
    super::with_mesh(&s, mesh::status).await.map(Json)
}
