//! Driving the rail: every direction quoted twice, and the clauses that
//! judge those answers (`quotes-every-direction`, `deterministic-quotes`).

use relay_capabilities::CapabilityBroker;
use relay_plugin_api::{QuoteRequest, RailQuote};
use relay_runtime::{CallError, LoadedRail};
use std::time::{Duration, Instant};

use super::{
    clauses::Clause,
    diagnose::{self, call_fix, cause},
    inputs::Direction,
    ClauseResult,
};

/// What the kit observed while driving the rail.
#[derive(Default)]
pub struct Observed {
    /// Faults (panics, traps, missed deadlines), each with the call.
    pub faults: Vec<String>,
    /// The slowest call.
    pub slowest: Duration,
    /// How many calls the kit made.
    pub calls: usize,
}

impl Observed {
    /// Quotes `req`, recording faults and time.
    pub async fn quote(
        &mut self,
        rail: &LoadedRail,
        req: &QuoteRequest,
    ) -> Result<RailQuote, CallError> {
        let t = Instant::now();
        let r = rail.quote(req.clone()).await;
        self.timed(t);
        if let Err(e) = &r {
            self.fault("quote", e);
        }
        r
    }

    /// Records one call that started at `t`.
    pub fn timed(&mut self, t: Instant) {
        self.slowest = self.slowest.max(t.elapsed());
        self.calls += 1;
    }

    /// Records `e` when it is a fault rather than a typed error.
    pub fn fault(&mut self, call: &str, e: &CallError) {
        if matches!(e, CallError::Fault { .. } | CallError::Quarantined { .. }) {
            self.faults.push(format!("{call}: {e}"));
        }
    }
}

/// One direction and the rail's two answers to it.
pub struct Quoted {
    /// The direction.
    pub direction: Direction,
    /// The first and second answer.
    pub answers: [Result<RailQuote, CallError>; 2],
    /// Host refusals recorded while the rail answered.
    pub denials: Vec<String>,
}

impl Quoted {
    /// The first successful answer.
    pub fn accepted(&self) -> Option<&RailQuote> {
        self.answers.iter().find_map(|a| a.as_ref().ok())
    }

    /// The first failed answer.
    fn failure(&self) -> Option<&CallError> {
        self.answers.iter().find_map(|a| a.as_ref().err())
    }
}

/// Quotes every direction twice.
pub async fn quote_all(
    rail: &LoadedRail,
    broker: &CapabilityBroker,
    directions: Vec<Direction>,
    obs: &mut Observed,
) -> Vec<Quoted> {
    let mut out = Vec::new();
    for mut direction in directions {
        let before = broker.denials().len();
        let mut a = obs.quote(rail, &direction.request).await;
        // The manifest names no destination asset: on a refused asset pair
        // try the direction's other candidates; when none answers, the
        // best guess's answer stands.
        if refused_pair(&a) {
            for alt in std::mem::take(&mut direction.alternatives) {
                let answer = obs.quote(rail, &alt).await;
                if answer.is_ok() {
                    (a, direction.request) = (answer, alt);
                    break;
                }
            }
        }
        let b = obs.quote(rail, &direction.request).await;
        let denials = broker
            .denials()
            .into_iter()
            .skip(before)
            .filter(|d| d.rail == rail.id())
            .map(|d| d.reason)
            .collect();
        out.push(Quoted {
            direction,
            answers: [a, b],
            denials,
        });
    }
    out
}

/// Whether the rail refused the request's asset pair (rather than failed).
fn refused_pair(r: &Result<RailQuote, CallError>) -> bool {
    use relay_plugin_api::RailErrorKind as K;
    matches!(r, Err(CallError::Rail(e)) if matches!(e.kind, K::UnsupportedLane | K::InvalidInput))
}

/// The fix for a direction that failed: the host's refusal first (it
/// names the setting), then the rail's error.
fn fix_of(rail: &str, q: &Quoted, e: &CallError) -> Option<String> {
    q.denials
        .iter()
        .find_map(|d| diagnose::capability_fix(rail, d))
        .or_else(|| call_fix(rail, e))
}

/// `quotes-every-direction`: each declared direction got a successful
/// quote.
pub fn every_direction(rail: &str, quoted: &[Quoted]) -> ClauseResult {
    let clause = Clause::QuotesEveryDirection.name();
    let exercised = quoted
        .iter()
        .map(|q| match (q.accepted(), q.failure()) {
            (Some(a), _) => format!("{}: quoted {} out", q.direction.label(), a.amount_out),
            (None, Some(e)) => format!("{}: {}", q.direction.label(), cause(e)),
            (None, None) => q.direction.label(),
        })
        .collect();
    if quoted.is_empty() {
        return ClauseResult::fail(
            clause,
            "the manifest declares no lane the kit can quote",
            "give every lane at least one source, one destination and one asset",
        )
        .exercising(exercised);
    }
    let failed: Vec<(&Quoted, &CallError)> = quoted
        .iter()
        .filter(|q| q.accepted().is_none())
        .filter_map(|q| Some((q, q.failure()?)))
        .collect();
    if failed.is_empty() {
        let lanes = {
            let mut l: Vec<&str> = quoted.iter().map(|q| q.direction.lane.as_str()).collect();
            l.dedup();
            l.len()
        };
        return ClauseResult::pass(
            clause,
            format!("{} directions of {lanes} lanes quoted", quoted.len()),
        )
        .exercising(exercised);
    }
    let causes: Vec<String> = failed
        .iter()
        .take(3)
        .map(|(q, e)| format!("{}: {}", q.direction.label(), cause(e)))
        .collect();
    let more = failed.len().saturating_sub(3);
    let fix = diagnose::join(failed.iter().filter_map(|(q, e)| fix_of(rail, q, e)))
        .unwrap_or_else(|| diagnose::upstream_down(rail));
    ClauseResult::fail(
        clause,
        format!(
            "{} of {} declared directions never quoted successfully — {}{}",
            failed.len(),
            quoted.len(),
            causes.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        ),
        fix,
    )
    .exercising(exercised)
}

/// Two answers agree when their terms agree: lane, amounts, fees, gas,
/// duration, expiry and quote-only reason. The upstream's own reference
/// and the opaque `detail` may differ between calls (an aggregator issues a
/// fresh route id per quote).
fn same_terms(x: &RailQuote, y: &RailQuote) -> bool {
    let terms = |q: &RailQuote| RailQuote {
        upstream_ref: None,
        detail: serde_json::Value::Null.into(),
        ..q.clone()
    };
    terms(x) == terms(y)
}

/// `deterministic-quotes`: the same request twice gives the same terms.
/// Only successful answers are compared; a direction that answered once
/// and failed once is a difference.
pub fn deterministic(quoted: &[Quoted]) -> ClauseResult {
    let clause = Clause::DeterministicQuotes.name();
    let mut exercised = Vec::new();
    let mut differ = Vec::new();
    for q in quoted {
        let label = q.direction.label();
        match &q.answers {
            [Ok(a), Ok(b)] if same_terms(a, b) => exercised.push(format!("{label}: identical")),
            [Ok(a), Ok(b)] => {
                exercised.push(format!("{label}: differ"));
                differ.push(format!("{label}: {a:?} vs {b:?}"));
            }
            [Ok(_), Err(e)] | [Err(e), Ok(_)] => {
                exercised.push(format!("{label}: one quote, one error"));
                differ.push(format!(
                    "{label}: one answer was a quote, the other {}",
                    cause(e)
                ));
            }
            [Err(_), Err(_)] => {}
        }
    }
    if !differ.is_empty() {
        return ClauseResult::fail(
            clause,
            format!(
                "two quotes for the same request differ — {}",
                differ.join("; ")
            ),
            "a quote may depend only on the request, the upstream's answer and `host.now_ms()` \
             (frozen by the kit): read no randomness or system clock, and keep per-call ids in \
             `upstreamRef` or `detail`",
        )
        .exercising(exercised);
    }
    if exercised.is_empty() {
        return ClauseResult::fail(
            clause,
            "no direction quoted successfully, so there is nothing to compare (see \
             `quotes-every-direction` for the cause)",
            "make the quotes succeed first (the fix under `quotes-every-direction`)",
        );
    }
    ClauseResult::pass(
        clause,
        format!("{} directions answered identically twice", exercised.len()),
    )
    .exercising(exercised)
}
