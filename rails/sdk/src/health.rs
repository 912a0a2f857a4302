//! Health of an aggregator rail: its upstream's, read with one cheap probe.
//!
//! The probe is a status lookup of a transaction that does not exist: every
//! upstream answers it quickly with a small JSON body and it moves nothing.
//! Its timeout is short and the host clips it to the call's deadline, so a
//! hung upstream makes the rail `down`, never makes `health` hang.

use relay_plugin_api::{HealthStatus, Host, HttpRequest, LaneHealth, RailHealth};

use crate::Upstream;

/// Timeout of the probe, ms.
pub const PROBE_TIMEOUT_MS: u64 = 2_500;

/// A transaction hash no chain has: what the probe asks about.
pub const PROBE_TX: &str = "0x0000000000000000000000000000000000000000000000000000000000000000";

/// The probe of a status API keyed by source transaction and chain pair
/// (Squid's `transactionId`, Socket's `transactionHash`): [`PROBE_TX`] on
/// a 1 → 10 transfer.
pub fn chain_pair_probe(
    upstream: &Upstream,
    host: &dyn Host,
    path: &str,
    tx_param: &str,
) -> HttpRequest {
    upstream.get(
        host,
        path,
        &[
            (tx_param, PROBE_TX.to_string()),
            ("fromChainId", "1".to_string()),
            ("toChainId", "10".to_string()),
        ],
    )
}

/// Probes `upstream` with `req` and reports every lane of `lanes` by the
/// answer: a JSON answer below 500 is `operational`; 429 or a non-JSON body
/// `degraded`; 401/403 (credential), 5xx, timeouts and network failures
/// `down`.
pub fn probe(
    host: &dyn Host,
    upstream: &Upstream,
    mut req: HttpRequest,
    lanes: &[&str],
) -> RailHealth {
    req.timeout_ms = PROBE_TIMEOUT_MS;
    let (status, problem) = match upstream.send(host, req) {
        Err(e) => (HealthStatus::Down, Some(e.message)),
        Ok(r) if r.status == 401 || r.status == 403 => (
            HealthStatus::Down,
            Some(format!(
                "{} refused the credential ({})",
                upstream.name, r.status
            )),
        ),
        Ok(r) if r.status >= 500 => (
            HealthStatus::Down,
            Some(format!("{} answered {}", upstream.name, r.status)),
        ),
        Ok(r) if r.status == 429 => (
            HealthStatus::Degraded,
            Some(format!("{} is rate limiting (429)", upstream.name)),
        ),
        Ok(r) if r.json().is_err() => (
            HealthStatus::Degraded,
            Some(format!("{} answered a non-JSON body", upstream.name)),
        ),
        Ok(_) => (HealthStatus::Operational, None),
    };
    let up = status != HealthStatus::Down;
    RailHealth {
        status,
        detail: problem.clone(),
        lanes: lanes
            .iter()
            .map(|lane| LaneHealth {
                lane: lane.to_string(),
                quote_ok: up,
                quote_error: if up { None } else { problem.clone() },
                execute_ready: up,
            })
            .collect(),
    }
}
