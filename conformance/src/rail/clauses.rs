//! The contract's clauses, each a check with a stable name.

use relay_capabilities::CapabilityBroker;
use relay_plugin_api::{
    ExecutionPlan, PlanAction, PrepareRequest, QuoteRequest, RailErrorKind, RailManifest,
    RailQuote, SourceMode,
};
use relay_runtime::{CallError, LoadedRail};
use std::time::{Duration, Instant};

use super::{inputs, ClauseResult, KitOptions};

/// The clauses, by stable name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clause {
    /// The artifact loads through the host loader (layout, contract version).
    Loads,
    /// The manifest is well formed.
    ManifestValid,
    /// The same input gives the same answer.
    DeterministicQuotes,
    /// A lane outside coverage answers `UNSUPPORTED_LANE`.
    UnsupportedLaneTyped,
    /// Malformed input answers a typed input error.
    MalformedInputTyped,
    /// No capability call to an undeclared host or chain.
    NoUndeclaredEgress,
    /// Every call returns by its deadline.
    DeadlineRespected,
    /// No panic, trap or broken reply.
    NoFaults,
    /// Health names only covered lanes.
    HealthConsistent,
    /// Plans are declarative and stay on covered chains.
    PlanDeclarative,
}

impl Clause {
    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Clause::Loads => "loads",
            Clause::ManifestValid => "manifest-valid",
            Clause::DeterministicQuotes => "deterministic-quotes",
            Clause::UnsupportedLaneTyped => "typed-error-unsupported-lane",
            Clause::MalformedInputTyped => "typed-error-malformed-input",
            Clause::NoUndeclaredEgress => "no-undeclared-egress",
            Clause::DeadlineRespected => "deadline-respected",
            Clause::NoFaults => "no-faults",
            Clause::HealthConsistent => "health-consistent",
            Clause::PlanDeclarative => "plan-declarative",
        }
    }
}

fn result(clause: Clause, outcome: Result<String, String>) -> ClauseResult {
    let (passed, detail) = match outcome {
        Ok(d) => (true, d),
        Err(d) => (false, d),
    };
    ClauseResult {
        clause: clause.name(),
        passed,
        detail,
    }
}

/// What the kit observed while driving the rail.
#[derive(Default)]
struct Observed {
    faults: Vec<String>,
    slowest: Duration,
}

impl Observed {
    async fn quote(
        &mut self,
        rail: &LoadedRail,
        req: &QuoteRequest,
    ) -> Result<RailQuote, CallError> {
        let t = Instant::now();
        let r = rail.quote(req.clone()).await;
        self.slowest = self.slowest.max(t.elapsed());
        if let Err(e @ (CallError::Fault { .. } | CallError::Quarantined { .. })) = &r {
            self.faults.push(format!("quote: {e}"));
        }
        r
    }
}

/// Runs every clause after `loads`.
pub async fn run_all(
    rail: &LoadedRail,
    broker: &CapabilityBroker,
    opts: &KitOptions,
) -> Vec<ClauseResult> {
    let m = rail.manifest().clone();
    let known = opts.tokens.clone();
    let mut obs = Observed::default();
    let mut out = vec![result(Clause::ManifestValid, manifest_valid(&m))];

    let samples = inputs::sample_requests(&m, &known);
    let mut first_ok = None;
    let mut det = Ok(format!(
        "{} sample requests answered identically twice",
        samples.len()
    ));
    for req in &samples {
        let a = obs.quote(rail, req).await;
        let b = obs.quote(rail, req).await;
        if !same_answer(&a, &b) {
            det = Err(format!(
                "two quotes for {}→{} differ: {a:?} vs {b:?}",
                req.from_chain, req.to_chain
            ));
        }
        if first_ok.is_none() {
            first_ok = a.ok().map(|q| (req.clone(), q));
        }
    }
    out.push(result(Clause::DeterministicQuotes, det));

    let unsupported = obs.quote(rail, &inputs::unsupported_request(&m)).await;
    out.push(result(
        Clause::UnsupportedLaneTyped,
        expect_kind(&unsupported, &[RailErrorKind::UnsupportedLane]),
    ));

    let malformed = match inputs::malformed_request(&m, &known) {
        Some(req) => expect_kind(
            &obs.quote(rail, &req).await,
            &[RailErrorKind::InvalidInput, RailErrorKind::AmountOutOfRange],
        ),
        None => Err("no covered lane to send a malformed request on".into()),
    };
    out.push(result(Clause::MalformedInputTyped, malformed));

    let t = Instant::now();
    let health = rail.health().await;
    obs.slowest = obs.slowest.max(t.elapsed());
    out.push(result(
        Clause::HealthConsistent,
        health_consistent(&m, &health),
    ));

    out.push(result(
        Clause::PlanDeclarative,
        plan_declarative(rail, (&m, opts), first_ok, &mut obs).await,
    ));

    let denied: Vec<String> = broker
        .denials()
        .into_iter()
        .filter(|d| d.rail == m.id)
        .map(|d| format!("{}: {}", d.capability, d.reason))
        .collect();
    out.push(result(
        Clause::NoUndeclaredEgress,
        if denied.is_empty() {
            Ok("no capability call was refused".into())
        } else {
            Err(denied.join("; "))
        },
    ));
    let limit = opts.call_timeout + Duration::from_millis(250);
    let hung: Vec<&String> = obs
        .faults
        .iter()
        .filter(|f| f.contains("deadline") || f.contains("hung"))
        .collect();
    out.push(result(
        Clause::DeadlineRespected,
        if hung.is_empty() && obs.slowest <= limit {
            Ok(format!(
                "slowest call {} ms (deadline {} ms)",
                obs.slowest.as_millis(),
                opts.call_timeout.as_millis()
            ))
        } else {
            Err(format!(
                "slowest call {} ms; {:?}",
                obs.slowest.as_millis(),
                hung
            ))
        },
    ));
    out.push(result(
        Clause::NoFaults,
        if obs.faults.is_empty() {
            Ok("no panic, trap or contract breach".into())
        } else {
            Err(obs.faults.join("; "))
        },
    ));
    out
}

/// Two answers agree when their terms agree: lane, amounts, fees, gas,
/// duration, expiry and quote-only reason. The upstream's own reference
/// and the opaque `detail` may differ between calls (an aggregator issues a
/// fresh route id per quote).
fn same_answer(a: &Result<RailQuote, CallError>, b: &Result<RailQuote, CallError>) -> bool {
    let terms = |q: &RailQuote| RailQuote {
        upstream_ref: None,
        detail: serde_json::Value::Null,
        ..q.clone()
    };
    match (a, b) {
        (Ok(x), Ok(y)) => terms(x) == terms(y),
        (Err(CallError::Rail(x)), Err(CallError::Rail(y))) => x.kind == y.kind,
        _ => false,
    }
}

fn expect_kind(
    r: &Result<RailQuote, CallError>,
    kinds: &[RailErrorKind],
) -> Result<String, String> {
    match r {
        Err(CallError::Rail(e)) if kinds.contains(&e.kind) => {
            Ok(format!("{:?}: {}", e.kind, e.message))
        }
        Err(CallError::Rail(e)) => Err(format!(
            "expected one of {kinds:?}, got {:?}: {}",
            e.kind, e.message
        )),
        Err(e) => Err(format!("expected a typed error, the rail faulted: {e}")),
        Ok(q) => Err(format!(
            "expected a typed error, got a quote for {}",
            q.amount_out
        )),
    }
}

fn manifest_valid(m: &RailManifest) -> Result<String, String> {
    let mut problems = Vec::new();
    if m.id.is_empty()
        || !m
            .id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        problems.push(format!(
            "id {:?} must be lower-case letters, digits, '-'",
            m.id
        ));
    }
    if !relay_plugin_api::is_supported_contract(&m.contract_version) {
        problems.push(format!(
            "contract version {} is not supported",
            m.contract_version
        ));
    }
    if m.coverage.is_empty() {
        problems.push("coverage is empty".into());
    }
    let mut lanes: Vec<&str> = m.coverage.iter().map(|l| l.lane.as_str()).collect();
    lanes.sort_unstable();
    if lanes.windows(2).any(|w| w[0] == w[1]) {
        problems.push("lane names are not unique".into());
    }
    for l in &m.coverage {
        if l.from.is_empty() || l.to.is_empty() || l.assets.is_empty() {
            problems.push(format!(
                "lane {} has no sources, destinations or assets",
                l.lane
            ));
        }
        if !l.executable && l.quote_only_reason.is_none() {
            problems.push(format!(
                "quote-only lane {} gives no quoteOnlyReason",
                l.lane
            ));
        }
    }
    if let Some(h) = m
        .egress
        .iter()
        .find(|h| h.contains('/') || h.contains(':') || h.is_empty())
    {
        problems.push(format!("egress entry {h:?} must be a bare host name"));
    }
    if problems.is_empty() {
        Ok(format!(
            "{} lanes, {} egress hosts",
            m.coverage.len(),
            m.egress.len()
        ))
    } else {
        Err(problems.join("; "))
    }
}

fn health_consistent(m: &RailManifest, h: &relay_plugin_api::RailHealth) -> Result<String, String> {
    match h
        .lanes
        .iter()
        .find(|l| !m.coverage.iter().any(|c| c.lane == l.lane))
    {
        Some(l) => Err(format!(
            "health reports lane {:?} the manifest does not cover",
            l.lane
        )),
        None => Ok(format!("{:?}, {} lanes", h.status, h.lanes.len())),
    }
}

async fn plan_declarative(
    rail: &LoadedRail,
    (m, opts): (&RailManifest, &KitOptions),
    accepted: Option<(QuoteRequest, RailQuote)>,
    obs: &mut Observed,
) -> Result<String, String> {
    let Some((req, quote)) = accepted else {
        return Ok("no quote succeeded with the kit's inputs; prepare not exercised".into());
    };
    let prep = PrepareRequest {
        route_id: "rt_conformance".into(),
        quote,
        from_chain: req.from_chain,
        to_chain: req.to_chain,
        from_token_address: req.from_token.address.clone(),
        to_token_address: req.to_token.address.clone(),
        sender: req.from_address.clone().unwrap_or_default(),
        recipient: req.to_address.clone().unwrap_or_default(),
        relayer: opts
            .rail_config
            .iter()
            .find(|(k, _)| k == "relayer")
            .map_or(
                "0x000000000000000000000000000000000000dEaD".into(),
                |(_, v)| v.clone(),
            ),
        mode: SourceMode::Permit2,
    };
    let plan: ExecutionPlan = match rail.prepare(prep).await {
        Ok(p) => p,
        Err(e @ CallError::Rail(_)) => {
            return Ok(format!("prepare declined with a typed error: {e}"))
        }
        Err(e) => {
            obs.faults.push(format!("prepare: {e}"));
            return Err(format!("prepare faulted: {e}"));
        }
    };
    let covered = |c: &relay_plugin_api::ChainRef| {
        m.coverage
            .iter()
            .any(|l| l.from.contains(c) || l.to.contains(c))
    };
    for step in &plan.steps {
        if let Some(c) = step.chain() {
            if !covered(&c) {
                return Err(format!("step {step:?} acts on chain {c}, outside coverage"));
            }
        }
        if let PlanAction::ContractCall { to, chain, .. }
        | PlanAction::Approve {
            spender: to, chain, ..
        } = step
        {
            let operator = relay_config::RailConfig {
                contracts: opts.contracts.clone(),
                ..Default::default()
            };
            let declared = m
                .contracts
                .iter()
                .any(|d| d.chain == *chain && d.address.eq_ignore_ascii_case(to))
                || chain
                    .evm_id()
                    .is_some_and(|c| operator.allows_contract(c, to));
            if !declared && m.contracts.iter().any(|d| d.chain == *chain) {
                return Err(format!(
                    "step targets {to} on {chain}, not a declared contract"
                ));
            }
        }
    }
    Ok(format!("{} declarative steps", plan.steps.len()))
}
