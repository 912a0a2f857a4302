//! `GET /api/status` (spec §2.2), with `mcpUrl`: where the hosted MCP
//! tool endpoint (spec §4.11 `{mcp_url}`) is served, relative to the base
//! URL like every API path.

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

#[utoipa::path(get, path = "/api/status", tag = "discovery", summary = "Service health: nodes, rails, endpoints (30 s cache)", responses((status = 200, description = "OK", body = StatusAnswer), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn status(State(s): State<AppState>) -> Result<Json<StatusAnswer>, ApiError> {
    let mut status = super::with_mesh(&s, mesh::status).await?;
    status.endpoints.push(mesh::NamedUp {
        name: "mcp".into(),
        up: true,
    });
    Ok(Json(StatusAnswer {
        status,
        mcp_url: MCP_PATH,
    }))
}

/// Where the hosted MCP tool endpoint is served (spec §4.11 `{mcp_url}`).
pub const MCP_PATH: &str = "/mcp";

/// `GET /api/status`: the engine's status and the tool endpoint.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusAnswer {
    /// The health reading.
    #[serde(flatten)]
    status: mesh::Status,
    /// The hosted MCP tool endpoint (streamable HTTP, public, read-only),
    /// relative to the base URL.
    #[schema(example = "/mcp")]
    mcp_url: &'static str,
}
