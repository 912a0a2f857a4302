//! `GET /api/uptime` (spec §4.1): per-day availability.
//!
//! The prober is the hosts' own probe loop (the `health-probe` job, outside
//! the request path): every 30 s it takes a fresh health reading of every
//! chain RPC and loaded rail and stores one sample per 30 s slot, whichever
//! replica takes it ([`relay_engine::uptime`], `uptime_samples`).
//! Each day (UTC), newest first: `date`, `samples`, `upPct` (share of
//! samples in which the service answered: operational or degraded),
//! `operationalPct` (everything up) and the raw counts, for 90 days. The
//! samples are in the store, so a restart keeps them and every replica
//! reports the same; `note` says the prober is the hosts' own, not an
//! independent observer.

use super::{ApiError, AppState, ErrorCode};
use axum::{extract::State, Json};
use relay_engine::uptime::{UptimeReport, UptimeTally};
use utoipa_axum::{router::OpenApiRouter, routes};

/// The route (the samples come from the `health-probe` job).
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(uptime))
}

#[utoipa::path(get, path = "/api/uptime", tag = "discovery", summary = "Per-day availability from the host's own prober", responses((status = 200, description = "OK", body = UptimeReport), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn uptime(State(s): State<AppState>) -> Result<Json<UptimeReport>, ApiError> {
    let (counts, since) = s
        .store
        .uptime_counts()
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    Ok(Json(UptimeReport::of(&UptimeTally::from_counts(
        &counts, since,
    ))))
}
