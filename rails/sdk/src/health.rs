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

/// The top-level keys of the answers an upstream documents for its health
/// probe: the answer must carry every key of at least one set (e.g. Squid:
/// `[["squidTransactionStatus"], ["message"]]`). Empty: any JSON answer.
pub type ProbeShapes = &'static [&'static [&'static str]];

/// Probes `upstream` with `req` and reports every lane of `lanes` by the
/// answer: a JSON answer below 500 is `operational`; 429 or a non-JSON body
/// `degraded`; 401/403 (credential), 5xx, timeouts and network failures
/// `down`.
pub fn probe(host: &dyn Host, upstream: &Upstream, req: HttpRequest, lanes: &[&str]) -> RailHealth {
    probe_documented(host, upstream, req, lanes, &[])
}

/// [`probe`], and a JSON answer outside the upstream's documented `shapes`
/// is `down` too: whatever answers at the base URL is not that upstream's
/// API (a wrong or outdated `base_url`, a proxy's page), so nothing it says
/// can be read — `relay doctor` names the setting.
pub fn probe_documented(
    host: &dyn Host,
    upstream: &Upstream,
    mut req: HttpRequest,
    lanes: &[&str],
    shapes: ProbeShapes,
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
        Ok(r) => match r.json() {
            Err(_) => (
                HealthStatus::Degraded,
                Some(format!("{} answered a non-JSON body", upstream.name)),
            ),
            Ok(v) if !documented(&v, shapes) => (
                HealthStatus::Down,
                Some(format!(
                    "{} answered {} outside its documented shape (top-level keys {shapes:?}): \
                     is the base URL its current API?",
                    upstream.name, r.status
                )),
            ),
            Ok(_) => (HealthStatus::Operational, None),
        },
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

/// Whether `answer` carries every key of one of `shapes` (any answer when
/// there are none).
fn documented(answer: &serde_json::Value, shapes: ProbeShapes) -> bool {
    shapes.is_empty()
        || answer.as_object().is_some_and(|o| {
            shapes
                .iter()
                .any(|keys| keys.iter().all(|k| o.contains_key(*k)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::RecordingHost;

    const ACME: Upstream = Upstream {
        name: "Acme",
        default_base: "https://api.acme.example",
    };
    const SHAPES: ProbeShapes = &[&["status"], &["message", "code"]];

    fn health(status: u16, body: &str) -> RailHealth {
        let host = RecordingHost::new().answer("/v1/status", status, body);
        let req = ACME.get(&host, "/v1/status", &[]);
        probe_documented(&host, &ACME, req, &["evm->evm"], SHAPES)
    }

    #[test]
    fn a_documented_answer_is_operational() {
        assert_eq!(
            health(200, r#"{"status":"NOT_FOUND"}"#).status,
            HealthStatus::Operational
        );
        let h = health(404, r#"{"message":"Not found","code":1003}"#);
        assert_eq!(h.status, HealthStatus::Operational);
        assert!(h.lanes[0].quote_ok);
    }

    #[test]
    fn another_apis_answer_is_down_naming_the_base_url() {
        for body in [r#"{"message":"Not found"}"#, r#"{"success":false}"#, "[]"] {
            let h = health(404, body);
            assert_eq!(h.status, HealthStatus::Down, "{body}");
            assert!(h.detail.as_deref().unwrap().contains("base URL"), "{h:?}");
            assert!(!h.lanes[0].quote_ok && !h.lanes[0].execute_ready);
        }
        assert_eq!(health(200, "<html>").status, HealthStatus::Degraded);
        assert_eq!(health(503, "{}").status, HealthStatus::Down);
    }
}
