//! `GET /api/capability/snapshot` (spec §4.1): what this host can do now,
//! timestamped and signed by the relayer ([`relay_engine::snapshot`]
//! defines the canonical form and the scheme).
//!
//! Response: `snapshot` (the signed object: `ts`, chains, nodes, rails with
//! lanes, versions), `message` (its canonical JSON, the exact bytes
//! signed), `scheme`, `signer`, `signature` (65-byte EIP-191 personal
//! signature, 0x-hex), `ts`, and `note` saying how to verify. A host
//! without a relayer key answers with `signature: null` and says so.

use super::{changelog, ApiError, AppState, ErrorCode};
use axum::{extract::State, Json};
use relay_engine::snapshot;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(capability_snapshot))
}

#[utoipa::path(get, path = "/api/capability/snapshot", tag = "discovery", summary = "Signed, timestamped capability snapshot", responses((status = 200, description = "OK", body = snapshot::CapabilitySnapshot), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn capability_snapshot(
    State(s): State<AppState>,
) -> Result<Json<snapshot::CapabilitySnapshot>, ApiError> {
    let ts = s.clock.now_ms();
    let versions = serde_json::to_value(changelog::running()).unwrap_or_default();
    let summary = super::with_mesh(&s, |i| snapshot::summary(i, ts, versions)).await?;
    let signer = s.relayer.as_ref().map(|r| r.signer());
    snapshot::capability_snapshot(summary, signer)
        .map(Json)
        .map_err(|e| ApiError::new(ErrorCode::RelayerUnavailable, e.to_string()))
}
