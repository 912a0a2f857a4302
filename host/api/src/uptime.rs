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
use axum::{extract::State, routing::get, Json, Router};
use relay_engine::uptime::{KEEP_DAYS, PROBE_EVERY};
use serde_json::{json, Value};

/// The route; starts the probe loop when called inside a runtime.
pub(super) fn routes(state: &AppState) -> Router<AppState> {
    if tokio::runtime::Handle::try_current().is_ok() {
        state
            .health
            .spawn_prober(&state.rails, state.config.clone(), PROBE_EVERY);
    }
    Router::new().route("/api/uptime", get(uptime))
}

#[tracing::instrument(skip_all)]
async fn uptime(State(s): State<AppState>) -> Json<Value> {
    let tally = s.health.uptime();
    let mut days: Vec<Value> = tally
        .days()
        .map(|(date, c)| {
            json!({
                "date": date,
                "samples": c.samples(),
                "upPct": c.up_pct(),
                "operationalPct": c.operational_pct(),
                "counts": c,
            })
        })
        .collect();
    days.reverse();
    Json(json!({
        "days": days,
        "since": tally.since_ms(),
        "probeIntervalSec": PROBE_EVERY.as_secs(),
        "keptDays": KEEP_DAYS,
        "prober": "host",
        "note": "the prober is this host's own probe loop (every chain RPC and loaded rail, every 30 s), not an independent observer; counts live in memory since `since` (epoch ms) and are per replica. upPct counts operational and degraded samples, operationalPct only fully operational ones",
    }))
}
