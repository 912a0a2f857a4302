//! `GET /api/uptime` (spec §4.1): per-day availability.
//!
//! The prober is this host's own probe loop
//! ([`relay_engine::health::HealthCache::spawn_prober`], started with the
//! router): every 30 s it takes a fresh health reading of every chain RPC
//! and loaded rail and records one sample ([`relay_engine::uptime`]).
//! Each day (UTC), newest first: `date`, `samples`, `upPct` (share of
//! samples in which the service answered: operational or degraded),
//! `operationalPct` (everything up) and the raw counts. Counts are kept in
//! memory for 90 days: a restart starts over, and each replica reports its
//! own probes — `note` says so, since the spec asks for an independent
//! prober and this is not one.

use super::AppState;
use axum::{extract::State, Json};
use relay_engine::uptime::UptimeReport;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The route (the samples come from the `health-probe` job).
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(uptime))
}

#[utoipa::path(get, path = "/api/uptime", tag = "discovery", summary = "Per-day availability from the host's own prober", responses((status = 200, description = "OK", body = UptimeReport), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn uptime(State(s): State<AppState>) -> Json<UptimeReport> {
    Json(UptimeReport::of(&s.health.uptime()))
}
