//! The contract's clauses, each a check with a stable name, and the run
//! that drives a rail through all of them.

use relay_capabilities::CapabilityBroker;
use relay_plugin_api::{HealthStatus, RailErrorKind, RailHealth, RailManifest, RailQuote};
use relay_runtime::{CallError, LoadedRail};
use std::time::{Duration, Instant};

use super::{
    diagnose,
    drive::{self, Observed},
    inputs, plan, ClauseResult, KitOptions,
};

/// The clauses, by stable name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clause {
    /// The artifact loads through the host loader (layout, contract version).
    Loads,
    /// The manifest is well formed.
    ManifestValid,
    /// Every declared lane quotes in every declared direction.
    QuotesEveryDirection,
    /// The same input gives the same successful answer.
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
    /// Health is operational and names only covered lanes.
    HealthConsistent,
    /// Successful quotes become declarative plans on covered chains calling
    /// declared contracts only.
    PlanDeclarative,
}

impl Clause {
    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Clause::Loads => "loads",
            Clause::ManifestValid => "manifest-valid",
            Clause::QuotesEveryDirection => "quotes-every-direction",
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

/// Runs every clause after `loads`.
pub async fn run_all(
    rail: &LoadedRail,
    broker: &CapabilityBroker,
    opts: &KitOptions,
) -> Vec<ClauseResult> {
    let m = rail.manifest().clone();
    let inputs = opts.inputs();
    let mut obs = Observed::default();
    let mut out = vec![manifest_valid(&m)];

    let directions = inputs::directions(&m, &inputs);
    let quoted = drive::quote_all(rail, broker, directions, &mut obs).await;
    out.push(drive::every_direction(&m.id, &quoted));
    out.push(drive::deterministic(&quoted));

    let unsupported_req = inputs::unsupported_request(&m);
    let unsupported = obs.quote(rail, &unsupported_req).await;
    out.push(
        expect_kind(
            Clause::UnsupportedLaneTyped,
            &m.id,
            &unsupported,
            &[RailErrorKind::UnsupportedLane],
        )
        .exercising(vec![format!(
            "{}→{} {}",
            unsupported_req.from_chain, unsupported_req.to_chain, unsupported_req.from_token.symbol
        )]),
    );

    out.push(match inputs::malformed_request(&m, &inputs) {
        Some(req) => expect_kind(
            Clause::MalformedInputTyped,
            &m.id,
            &obs.quote(rail, &req).await,
            &[RailErrorKind::InvalidInput, RailErrorKind::AmountOutOfRange],
        )
        .exercising(vec![format!(
            "{}→{} amount 0 {}",
            req.from_chain, req.to_chain, req.from_token.symbol
        )]),
        None => ClauseResult::fail(
            Clause::MalformedInputTyped.name(),
            "no covered lane to send a malformed request on",
            "declare at least one lane with a source, a destination and an asset",
        ),
    });

    let t = Instant::now();
    let health = rail.health().await;
    obs.timed(t);
    out.push(health_consistent(&m, &health));

    out.push(plan::plan_declarative(rail, opts, &quoted, &mut obs).await);
    let calls = vec![format!("{} calls (quote, prepare, health)", obs.calls)];
    out.push(no_undeclared_egress(&m, broker).exercising(calls.clone()));
    out.push(deadline_respected(&obs, opts).exercising(calls.clone()));
    out.push(
        if obs.faults.is_empty() {
            ClauseResult::pass(Clause::NoFaults.name(), "no panic, trap or contract breach")
        } else {
            ClauseResult::fail(
                Clause::NoFaults.name(),
                obs.faults.join("; "),
                diagnose::fault_fix(),
            )
        }
        .exercising(calls),
    );
    out
}

fn no_undeclared_egress(m: &RailManifest, broker: &CapabilityBroker) -> ClauseResult {
    let clause = Clause::NoUndeclaredEgress.name();
    let denied: Vec<String> = broker
        .denials()
        .into_iter()
        .filter(|d| d.rail == m.id)
        .map(|d| format!("{}: {}", d.capability, d.reason))
        .collect();
    if denied.is_empty() {
        return ClauseResult::pass(clause, "no capability call was refused");
    }
    let mut fixes: Vec<String> = denied
        .iter()
        .filter_map(|d| diagnose::capability_fix(&m.id, d))
        .collect();
    if denied.iter().any(|d| d.contains("egress allowlist")) {
        fixes.push(
            "if the rail should never call that host, remove the call; if it is the rail's own \
             upstream, declare it in the manifest's `egress`"
                .into(),
        );
    }
    let mut unique = denied.clone();
    unique.dedup();
    ClauseResult::fail(
        clause,
        format!("the host refused the rail's calls: {}", unique.join("; ")),
        diagnose::join(fixes).unwrap_or_else(|| {
            "call only the hosts and chains the manifest declares (`egress`, `rpcChains`)".into()
        }),
    )
}

fn deadline_respected(obs: &Observed, opts: &KitOptions) -> ClauseResult {
    let clause = Clause::DeadlineRespected.name();
    let limit = opts.call_timeout + Duration::from_millis(250);
    let hung: Vec<&String> = obs
        .faults
        .iter()
        .filter(|f| f.contains("deadline") || f.contains("hung"))
        .collect();
    if hung.is_empty() && obs.slowest <= limit {
        ClauseResult::pass(
            clause,
            format!(
                "slowest call {} ms (deadline {} ms)",
                obs.slowest.as_millis(),
                opts.call_timeout.as_millis()
            ),
        )
    } else {
        ClauseResult::fail(
            clause,
            format!(
                "slowest call {} ms against a deadline of {} ms; {hung:?}",
                obs.slowest.as_millis(),
                opts.call_timeout.as_millis()
            ),
            diagnose::deadline_fix(),
        )
    }
}

fn expect_kind(
    clause: Clause,
    rail: &str,
    r: &Result<RailQuote, CallError>,
    kinds: &[RailErrorKind],
) -> ClauseResult {
    let wanted = kinds
        .iter()
        .map(|k| {
            serde_json::to_value(k)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| format!("{k:?}"))
        })
        .collect::<Vec<_>>()
        .join(" or ");
    let answer_with = match clause {
        Clause::UnsupportedLaneTyped => {
            "answer a lane outside the manifest's coverage with `RailError::unsupported(..)` \
             (`UNSUPPORTED_LANE`) before calling any upstream"
        }
        _ => {
            "validate the request before calling any upstream: answer a zero amount with \
             `RailError::invalid(\"amount\", ..)` (`INVALID_INPUT`) or `AMOUNT_OUT_OF_RANGE`"
        }
    };
    let name = clause.name();
    match r {
        Err(CallError::Rail(e)) if kinds.contains(&e.kind) => {
            ClauseResult::pass(name, format!("{:?}: {}", e.kind, e.message))
        }
        Err(CallError::Rail(e)) => ClauseResult::fail(
            name,
            format!(
                "expected {wanted}, got {}",
                diagnose::cause(&CallError::Rail(e.clone()))
            ),
            diagnose::rail_error_fix(rail, e)
                .filter(|_| e.kind != RailErrorKind::UnsupportedLane)
                .map_or_else(
                    || answer_with.to_string(),
                    |f| format!("{f}; then {answer_with}"),
                ),
        ),
        Err(e) => ClauseResult::fail(
            name,
            format!("expected {wanted}, the rail faulted: {e}"),
            diagnose::fault_fix(),
        ),
        Ok(q) => ClauseResult::fail(
            name,
            format!("expected {wanted}, got a quote for {}", q.amount_out),
            answer_with,
        ),
    }
}

/// Problems of the manifest, each with its fix.
fn manifest_problems(m: &RailManifest) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let mut add = |p: String, f: &str| problems.push((p, f.to_string()));
    if m.id.is_empty()
        || !m
            .id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        add(
            format!("id {:?} is not lower-case letters, digits, '-'", m.id),
            "rename the rail's `id`",
        );
    }
    if !relay_plugin_api::is_supported_contract(&m.contract_version) {
        add(
            format!("contract version {} is not supported", m.contract_version),
            "build against this host's `relay-plugin-api` and set `contract_version: relay_plugin_api::contract_version()`",
        );
    }
    if m.coverage.is_empty() {
        add(
            "coverage is empty".into(),
            "declare the lanes the rail serves",
        );
    }
    let mut lanes: Vec<&str> = m.coverage.iter().map(|l| l.lane.as_str()).collect();
    lanes.sort_unstable();
    if lanes.windows(2).any(|w| w[0] == w[1]) {
        add(
            "lane names are not unique".into(),
            "give each lane its own name",
        );
    }
    for l in &m.coverage {
        if l.from.is_empty() || l.to.is_empty() || l.assets.is_empty() {
            add(
                format!("lane {} has no sources, destinations or assets", l.lane),
                "give every lane at least one source, one destination and one asset",
            );
        } else if !l.same_chain && l.from.iter().all(|f| l.to.iter().all(|t| t == f)) {
            add(
                format!("lane {} has no direction: its only destination is its source and `sameChain` is false", l.lane),
                "add another destination, or set `same_chain: true` for a swap lane",
            );
        }
        if !l.executable && l.quote_only_reason.is_none() {
            add(
                format!("quote-only lane {} gives no quoteOnlyReason", l.lane),
                "say why the lane is quote-only in `quote_only_reason`",
            );
        }
    }
    if let Some(h) = m
        .egress
        .iter()
        .find(|h| h.contains('/') || h.contains(':') || h.is_empty())
    {
        add(
            format!("egress entry {h:?} is not a bare host name"),
            "list host names only in `egress` (no scheme, port or path)",
        );
    }
    problems
}

fn manifest_valid(m: &RailManifest) -> ClauseResult {
    let clause = Clause::ManifestValid.name();
    let problems = manifest_problems(m);
    if problems.is_empty() {
        return ClauseResult::pass(
            clause,
            format!(
                "{} lanes, {} egress hosts",
                m.coverage.len(),
                m.egress.len()
            ),
        )
        .exercising(
            m.coverage
                .iter()
                .map(|l| format!("lane {}", l.lane))
                .collect(),
        );
    }
    let (causes, fixes): (Vec<String>, Vec<String>) = problems.into_iter().unzip();
    ClauseResult::fail(
        clause,
        causes.join("; "),
        diagnose::join(fixes).unwrap_or_default(),
    )
}

/// `health-consistent`: the rail reports itself operational, and names
/// only lanes its manifest covers.
fn health_consistent(m: &RailManifest, h: &RailHealth) -> ClauseResult {
    let clause = Clause::HealthConsistent.name();
    let exercised = vec![format!(
        "health: {:?}{}",
        h.status,
        h.lanes
            .iter()
            .map(|l| format!(", {} quoteOk={}", l.lane, l.quote_ok))
            .collect::<String>()
    )];
    if let Some(l) = h
        .lanes
        .iter()
        .find(|l| !m.coverage.iter().any(|c| c.lane == l.lane))
    {
        return ClauseResult::fail(
            clause,
            format!(
                "health reports lane {:?} the manifest does not cover",
                l.lane
            ),
            "report health for the manifest's lanes only, by their manifest names",
        )
        .exercising(exercised);
    }
    if h.status == HealthStatus::Operational {
        return ClauseResult::pass(clause, format!("Operational, {} lanes", h.lanes.len()))
            .exercising(exercised);
    }
    let mut why: Vec<String> = h.detail.iter().cloned().collect();
    why.extend(
        h.lanes
            .iter()
            .filter_map(|l| Some(format!("{}: {}", l.lane, l.quote_error.as_deref()?))),
    );
    let fix = diagnose::join(why.iter().filter_map(|w| diagnose::text_fix(&m.id, w)))
        .unwrap_or_else(|| {
            format!(
                "health must be Operational against a working upstream: make the upstream reachable, \
                 and give the rail the settings it needs with `--config <key>=<value>` (operator \
                 config `[rails.{}.config] <key>`)",
                m.id
            )
        });
    ClauseResult::fail(
        clause,
        format!(
            "health is {:?}, not Operational{}",
            h.status,
            if why.is_empty() {
                String::new()
            } else {
                format!(": {}", why.join("; "))
            }
        ),
        fix,
    )
    .exercising(exercised)
}
