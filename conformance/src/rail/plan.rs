//! `plan-declarative`: every successful quote on an executable lane turns
//! into a declarative plan that acts only on covered chains and calls or
//! approves only declared contracts — those the manifest declares on that
//! chain, or those the operator grants (`--contract`, `[rails.<id>]
//! contracts`), whatever the manifest declares elsewhere. This is the
//! executor's own rule (`relay_execution`'s step policy).

use relay_plugin_api::{
    ExecutionPlan, PlanAction, PrepareRequest, RailManifest, RailQuote, SourceMode,
};
use relay_runtime::{CallError, LoadedRail};

use super::{
    clauses::Clause,
    diagnose,
    drive::{Observed, Quoted},
    inputs::{sample_address, Direction},
    ClauseResult, KitOptions,
};

/// The relayer the kit names in `prepare` (`--config relayer=…` overrides).
const DEFAULT_RELAYER: &str = "0x000000000000000000000000000000000000dEaD";

fn prepare_request(d: &Direction, quote: &RailQuote, opts: &KitOptions) -> PrepareRequest {
    let req = &d.request;
    PrepareRequest {
        route_id: "rt_conformance".into(),
        quote: quote.clone(),
        from_chain: req.from_chain,
        to_chain: req.to_chain,
        from_token_address: req.from_token.address.clone(),
        to_token_address: req.to_token.address.clone(),
        sender: req
            .from_address
            .clone()
            .unwrap_or_else(|| sample_address(req.from_chain, &opts.addresses)),
        recipient: req
            .to_address
            .clone()
            .unwrap_or_else(|| sample_address(req.to_chain, &opts.addresses)),
        relayer: opts
            .rail_config
            .iter()
            .find(|(k, _)| k == "relayer")
            .map_or(DEFAULT_RELAYER.into(), |(_, v)| v.clone()),
        // A user's Permit2 signature moves an EVM source; a non-EVM source
        // is the user's own deposit.
        mode: if req.from_chain.is_evm() {
            SourceMode::Permit2
        } else {
            SourceMode::Operator
        },
    }
}

/// Whether the manifest or the operator lets plans call `to` on `chain`.
fn allowed(
    m: &RailManifest,
    opts: &KitOptions,
    chain: relay_plugin_api::ChainRef,
    to: &str,
) -> bool {
    let operator = relay_config::RailConfig {
        contracts: opts.contracts.clone(),
        ..Default::default()
    };
    m.contracts
        .iter()
        .any(|d| d.chain == chain && d.address.eq_ignore_ascii_case(to))
        || chain
            .evm_id()
            .is_some_and(|c| operator.allows_contract(c, to))
}

/// Problems of one plan, each with its fix.
fn check_plan(m: &RailManifest, opts: &KitOptions, plan: &ExecutionPlan) -> Vec<(String, String)> {
    let covered = |c: &relay_plugin_api::ChainRef| {
        m.coverage
            .iter()
            .any(|l| l.from.contains(c) || l.to.contains(c))
    };
    let mut problems = Vec::new();
    for step in &plan.steps {
        if let Some(c) = step.chain().filter(|c| !covered(c)) {
            problems.push((
                format!("a step acts on chain {c}, outside the manifest's coverage: {step:?}"),
                "plans may act only on chains the manifest's coverage names".to_string(),
            ));
        }
        let target = match step {
            PlanAction::ContractCall { to, chain, .. } => Some(("calls", to, chain)),
            PlanAction::Approve { spender, chain, .. } => Some(("approves", spender, chain)),
            _ => None,
        };
        if let Some((verb, to, chain)) = target.filter(|(_, to, c)| !allowed(m, opts, **c, to)) {
            problems.push((
                format!("the plan {verb} {to} on chain {chain}, which the manifest does not declare on that chain and the operator does not grant"),
                format!(
                    "declare it in the manifest's `contracts` (chain {chain}), or, when the operator chooses \
                     the target (an aggregator's upstream names it), grant it with `--contract {chain}:{to}` \
                     (operator config `[rails.{}] contracts = [\"{chain}:{to}\"]`)",
                    m.id
                ),
            ));
        }
    }
    problems
}

/// Runs `prepare` on every successful quote and checks each plan.
pub async fn plan_declarative(
    rail: &LoadedRail,
    opts: &KitOptions,
    quoted: &[Quoted],
    obs: &mut Observed,
) -> ClauseResult {
    let clause = Clause::PlanDeclarative.name();
    let m = rail.manifest().clone();
    let mut exercised = Vec::new();
    let mut problems: Vec<(String, String)> = Vec::new();
    for q in quoted {
        let Some(quote) = q.accepted() else { continue };
        let label = q.direction.label();
        let quote_only = !q.direction.executable || quote.quote_only_reason.is_some();
        let t = std::time::Instant::now();
        let answer = rail
            .prepare(prepare_request(&q.direction, quote, opts))
            .await;
        obs.timed(t);
        match answer {
            Ok(plan) => {
                exercised.push(format!("{label}: plan of {} steps", plan.steps.len()));
                let found = check_plan(&m, opts, &plan);
                problems.extend(found.into_iter().map(|(c, f)| (format!("{label}: {c}"), f)));
            }
            Err(CallError::Rail(e)) if quote_only => {
                exercised.push(format!(
                    "{label}: quote-only, prepare declined ({:?})",
                    e.kind
                ));
            }
            Err(e) => {
                obs.fault("prepare", &e);
                exercised.push(format!("{label}: {}", diagnose::cause(&e)));
                let fix = diagnose::call_fix(&m.id, &e).unwrap_or_else(|| {
                    format!(
                        "prepare must turn a successful quote into a plan; if the lane needs an operator \
                         setting to execute, pass it with `--config <key>=<value>` (operator config \
                         `[rails.{}.config] <key>`), or declare the lane quote-only \
                         (`executable: false` with a `quoteOnlyReason`)",
                        m.id
                    )
                });
                problems.push((
                    format!(
                        "{label}: prepare gave no plan for a successful quote: {}",
                        diagnose::cause(&e)
                    ),
                    fix,
                ));
            }
        }
    }
    if exercised.is_empty() {
        return ClauseResult::fail(
            clause,
            "prepare was not exercised: no quote succeeded (see `quotes-every-direction` for the cause)",
            "make the quotes succeed first (the fix under `quotes-every-direction`)",
        );
    }
    if problems.is_empty() {
        let plans = exercised.iter().filter(|e| e.contains(": plan of")).count();
        return ClauseResult::pass(
            clause,
            format!(
                "{plans} declarative plans checked ({} quotes prepared)",
                exercised.len()
            ),
        )
        .exercising(exercised);
    }
    let (causes, fixes): (Vec<String>, Vec<String>) = problems.into_iter().unzip();
    ClauseResult::fail(
        clause,
        causes.join("; "),
        diagnose::join(fixes).unwrap_or_default(),
    )
    .exercising(exercised)
}
