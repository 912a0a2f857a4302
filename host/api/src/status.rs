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
pub(crate) async fn errors() -> Json<super::error::Catalogue> {
    Json(super::error::catalogue(&crate::error_codes()))
}

#[utoipa::path(get, path = "/api/status", tag = "discovery", summary = "Service health: nodes, rails, endpoints (30 s cache)", responses((status = 200, description = "OK", body = StatusAnswer), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(crate) async fn status(State(s): State<AppState>) -> Result<Json<StatusAnswer>, ApiError> {
    let mut status = super::with_mesh(&s, mesh::status).await?;
    status.endpoints = endpoints(&s).await;
    let limits = &s.config.limits;
    let shared = limits.backend == relay_config::LimitsBackend::Store;
    let store_up = status.endpoints.iter().any(|e| e.name == "store" && e.up);
    Ok(Json(StatusAnswer {
        status,
        mcp_url: MCP_PATH,
        limits: LimitsState {
            backend: if shared { "store" } else { "memory" },
            up: !shared || store_up,
            on_backend_failure: match limits.on_backend_failure {
                relay_config::FailMode::Open => "open",
                relay_config::FailMode::Closed => "closed",
            },
        },
    }))
}

/// `endpoints[]` from probes: the API (answering this), the hosted MCP
/// endpoint (served by this process), the store (a trivial query now),
/// each chain's RPC (`rpc:<chain id>`: answered with the right chain id in
/// the health reading) and each loaded rail's upstream (`upstream:<rail>`:
/// the rail's own health call, which probes its upstream).
async fn endpoints(s: &AppState) -> Vec<mesh::NamedUp> {
    let named = |name: String, up: bool| mesh::NamedUp { name, up };
    let health = s.health.get(&s.rails.snapshot(), &s.config).await;
    let mut out = vec![
        named("api".into(), true),
        named("mcp".into(), true),
        named("store".into(), s.store.ping().await),
    ];
    out.extend(
        health
            .chains
            .iter()
            .map(|(id, up)| named(format!("rpc:{id}"), *up)),
    );
    out.extend(
        health
            .rails
            .keys()
            .map(|id| named(format!("upstream:{id}"), health.rail_up(id))),
    );
    out
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
    /// Where the rate limits count.
    limits: LimitsState,
}

/// Where the rate limits count, and whether that works now.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LimitsState {
    /// `memory` (this process) or `store` (the database, shared by every
    /// replica on it).
    #[schema(example = "memory")]
    backend: &'static str,
    /// Whether the counts reach their backend now (the store answers;
    /// always true in memory). While false: `onBackendFailure`.
    up: bool,
    /// What a request meets while they do not: `open` (served uncounted)
    /// or `closed` (503 `RATE_LIMITS_UNAVAILABLE`).
    #[schema(example = "open")]
    on_backend_failure: &'static str,
}
