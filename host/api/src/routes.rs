//! `GET /api/route/chains` (spec §2.3): the mesh.

use super::{ApiError, AppState};
use axum::{extract::State, Json};
use relay_engine::mesh;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(chains))
}

#[utoipa::path(get, path = "/api/route/chains", tag = "discovery", summary = "The mesh, derived from the loaded rails and live health", responses((status = 200, description = "OK", body = mesh::Mesh), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(crate) async fn chains(State(s): State<AppState>) -> Result<Json<mesh::Mesh>, ApiError> {
    let mut m = super::with_mesh(&s, mesh::route_chains).await?;
    // Settlement verified on chain (spec §2.3 `settlementProven`); a store
    // that cannot answer leaves every node unproven.
    m.mark_proven(&s.store.proven_nodes().await.unwrap_or_default());
    Ok(Json(m))
}
