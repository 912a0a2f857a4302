//! Quote-only rails (spec §1.8, §2.3 `comparatorQuoteOnly`): lanes that are
//! priced and compared but never moved. Their manifest lanes say
//! `executable: false` with a reason, their quotes carry the reason, and
//! `prepare`/`track` answer one typed refusal — never a plan.

use relay_plugin_api::{ChainRef, HealthStatus, LaneCoverage, LaneHealth, RailError, RailHealth};

/// A quote-only lane for the manifest.
pub fn lane(
    name: &str,
    from: Vec<ChainRef>,
    to: Vec<ChainRef>,
    assets: &[&str],
    reason: &str,
) -> LaneCoverage {
    LaneCoverage {
        lane: name.into(),
        from,
        to,
        assets: assets.iter().map(|a| a.to_string()).collect(),
        same_chain: false,
        executable: false,
        quote_only_reason: Some(reason.into()),
    }
}

/// What `prepare` and `track` answer on a quote-only lane: `UNSUPPORTED_LANE`
/// (not retryable) naming the reason.
pub fn refusal(rail: &str, reason: &str) -> RailError {
    RailError::unsupported(format!("{rail} is quote-only and never executes: {reason}"))
}

/// Health of quote-only lanes: each quotes when its pricing source answers,
/// none is ever ready to execute. `sources` pairs a lane with its source's
/// problem (`None` when it answers).
pub fn health(sources: &[(&str, Option<String>)]) -> RailHealth {
    let lanes: Vec<LaneHealth> = sources
        .iter()
        .map(|(lane, problem)| LaneHealth {
            lane: lane.to_string(),
            quote_ok: problem.is_none(),
            quote_error: problem.clone(),
            execute_ready: false,
        })
        .collect();
    let up = lanes.iter().filter(|l| l.quote_ok).count();
    RailHealth {
        status: match up {
            0 => HealthStatus::Down,
            n if n == lanes.len() => HealthStatus::Operational,
            _ => HealthStatus::Degraded,
        },
        detail: Some("quote-only: priced for comparison, never executed".into()),
        lanes,
    }
}

/// The problem a probe found, from a probe's [`RailHealth`]: `None` when up.
pub fn problem(h: &RailHealth) -> Option<String> {
    (h.status == HealthStatus::Down).then(|| h.detail.clone().unwrap_or_else(|| "down".into()))
}
