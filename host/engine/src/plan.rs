//! Multi-step plan validation (spec §2.14 `POST /api/route/plan`), pure
//! logic: which answer of a quote execute would use, what each step
//! withholds, how steps accumulate, and which constraint binds.
//!
//! - **The executable answer** ([`executable`]) is the first answer in the
//!   ranking that priced and is not quote-only (the one execute tries
//!   first), optionally only the rail the request names. Plan, preflight,
//!   the solver and the agent all use it.
//! - **Fee units** of a step ([`withheld`]) are what it withholds, in the
//!   step's destination-token smallest units: the route fee, relayer gas and
//!   rail fees the engine deducts, plus rail fees already inside the rail's
//!   output in that token. For a same-asset lane that is exactly
//!   `amount − estOut`.
//! - **Totals** add durations (seconds) and fee units across steps. Fee
//!   units of different tokens add as raw units, so `maxTotalFeeUnits` is
//!   meaningful for plans in one token (or tokens of equal decimals).
//! - **Constraints** are checked after every step is priced:
//!   `maxTotalSeconds` first, then `maxTotalFeeUnits`; the first violated is
//!   the `bindingConstraint`, and `whatWouldMakeThisWork` lists fixes for
//!   every violated one.

use super::quote::{NoRoute, Priced, QuoteOutcome};
use relay_plugin_api::Amount;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// Why a quote has no answer execute could use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    /// The rail the request names is not among the applicable rails.
    #[error("rail {0:?} does not serve this lane now (not installed, disabled, or its lane switched off)")]
    RailNotServing(String),
    /// Only quote-only lanes answered.
    #[error("quote-only: {0}")]
    QuoteOnly(String),
    /// Nothing priced.
    #[error("{0}")]
    NoRoute(NoRoute),
}

/// The index in `outcome.results` of the answer execute would use.
pub fn executable(outcome: &QuoteOutcome, rail: Option<&str>) -> Result<usize, Unusable> {
    if let Some(want) = rail.filter(|w| !outcome.results.iter().any(|r| r.rail == *w)) {
        return Err(match outcome.named_rail_resting(want) {
            Some(resting) => Unusable::NoRoute(resting),
            None => Unusable::RailNotServing(want.to_string()),
        });
    }
    let wanted = |r: &&super::quote::RailResult| rail.is_none_or(|w| r.rail == w);
    let found = outcome
        .results
        .iter()
        .position(|r| wanted(&r) && r.outcome.is_ok() && r.quote_only.is_none());
    if let Some(i) = found {
        return Ok(i);
    }
    let quote_only: Vec<String> = outcome
        .results
        .iter()
        .filter(|r| wanted(r) && r.outcome.is_ok())
        .filter_map(|r| Some(format!("{}: {}", r.rail, r.quote_only.as_ref()?)))
        .collect();
    if !quote_only.is_empty() {
        return Err(Unusable::QuoteOnly(quote_only.join("; ")));
    }
    Err(Unusable::NoRoute(outcome.no_route().unwrap_or_else(|| {
        NoRoute::Unavailable("the named rail could not quote".into())
    })))
}

/// What a priced answer withholds, destination smallest units (module docs).
pub fn withheld(p: &Priced, to_symbol: &str) -> Amount {
    p.quote
        .fees
        .iter()
        .filter(|f| f.included && f.token.eq_ignore_ascii_case(to_symbol))
        .fold(p.deductions.total(), |sum, f| {
            sum.checked_add(f.amount).unwrap_or(sum)
        })
}

/// One priced step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepCost {
    /// Its index in `steps[]`.
    pub index: usize,
    /// The rail execute would use.
    pub rail: String,
    /// What arrives, destination smallest units.
    #[schema(value_type = String)]
    pub est_out: Amount,
    /// What it withholds ([`withheld`]).
    #[schema(value_type = String)]
    pub fee_units: Amount,
    /// The rail's estimate, seconds.
    pub duration_sec: u32,
}

/// The cost of step `index` whose quote `o` is won by answer `i`; `None`
/// when that answer did not price.
pub fn step_cost(index: usize, o: &QuoteOutcome, i: usize) -> Option<StepCost> {
    let r = o.results.get(i)?;
    let p = r.outcome.as_ref().ok()?;
    Some(StepCost {
        index,
        rail: r.rail.clone(),
        est_out: p.net.estimated,
        fee_units: withheld(p, &o.ask.to_token.symbol),
        duration_sec: p.quote.duration_sec,
    })
}

/// The plan's limits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Constraints {
    /// Longest acceptable total duration, seconds.
    pub max_total_seconds: Option<u64>,
    /// Most fee units acceptable in total.
    pub max_total_fee_units: Option<Amount>,
}

/// Sums across steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Seconds.
    pub duration_sec: u64,
    /// Fee units.
    #[schema(value_type = String)]
    pub fees: Amount,
}

/// Adds up `steps`.
pub fn totals(steps: &[StepCost]) -> Totals {
    steps.iter().fold(Totals::default(), |t, s| Totals {
        duration_sec: t.duration_sec + u64::from(s.duration_sec),
        fees: t.fees.checked_add(s.fee_units).unwrap_or(t.fees),
    })
}

/// `bindingConstraint` (spec §2.14).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BindingConstraint {
    /// `maxTotalSeconds`, `maxTotalFeeUnits` or `routable`.
    pub constraint: String,
    /// The limit.
    pub limit: Value,
    /// What the plan needs.
    pub actual: Value,
    /// Why.
    pub why: String,
    /// The unroutable step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
}

/// The constraint that makes a plan infeasible, and what would fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// `bindingConstraint` as answered.
    pub constraint: BindingConstraint,
    /// `whatWouldMakeThisWork`.
    pub fixes: Vec<String>,
}

/// One priced step as answered.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct PlanStep {
    /// The cost.
    #[serde(flatten)]
    pub cost: StepCost,
    /// Destination token.
    pub token: String,
    /// The lane.
    pub lane: String,
}

/// The limits as understood.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConstraintsEcho {
    /// Seconds.
    pub max_total_seconds: Option<u64>,
    /// Fee units.
    #[schema(value_type = Option<String>)]
    pub max_total_fee_units: Option<Amount>,
}

/// `POST /api/route/plan` (spec §2.14): feasible, or the binding
/// constraint and what would make it work.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanAnswer {
    /// Whether every step is routable within the constraints.
    pub feasible: bool,
    /// The first violated constraint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding_constraint: Option<BindingConstraint>,
    /// What would make it work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_would_make_this_work: Option<Vec<String>>,
    /// Steps priced, in order.
    pub steps: Vec<PlanStep>,
    /// Sums.
    pub totals: Totals,
    /// The limits.
    pub constraints: ConstraintsEcho,
    /// How to read it.
    pub note: String,
}

impl PlanAnswer {
    /// The answer for `steps` of `asked` priced under `c`, stopped by `binding`.
    pub fn new(
        asked: usize,
        steps: Vec<PlanStep>,
        c: &Constraints,
        binding: Option<Binding>,
    ) -> Self {
        let costs: Vec<StepCost> = steps.iter().map(|s| s.cost.clone()).collect();
        let totals = totals(&costs);
        let constraints = ConstraintsEcho {
            max_total_seconds: c.max_total_seconds,
            max_total_fee_units: c.max_total_fee_units,
        };
        let priced = steps.len();
        match binding {
            None => PlanAnswer {
                feasible: true,
                binding_constraint: None,
                what_would_make_this_work: None,
                steps,
                totals,
                constraints,
                note: format!("{priced} step(s) priced in order; durations and fee units add up; nothing was signed"),
            },
            Some(b) => PlanAnswer {
                feasible: false,
                binding_constraint: Some(b.constraint),
                what_would_make_this_work: Some(b.fixes),
                steps,
                totals,
                constraints,
                note: format!("{priced} of {asked} step(s) priced before the verdict; nothing was signed"),
            },
        }
    }
}

/// The first violated constraint over all `steps`, if any (module docs).
pub fn binding(c: &Constraints, steps: &[StepCost]) -> Option<Binding> {
    let t = totals(steps);
    let mut first = None;
    let mut fixes = Vec::new();
    if let Some(limit) = c.max_total_seconds.filter(|l| t.duration_sec > *l) {
        first.get_or_insert(BindingConstraint {
            constraint: "maxTotalSeconds".into(),
            limit: limit.into(),
            actual: t.duration_sec.into(),
            why: format!(
                "the steps take {}s together, {}s over the limit",
                t.duration_sec,
                t.duration_sec - limit
            ),
            step: None,
        });
        fixes.push(format!(
            "raise maxTotalSeconds to at least {}",
            t.duration_sec
        ));
        if let Some(s) = steps.iter().max_by_key(|s| s.duration_sec) {
            fixes.push(format!(
                "step {} ({}, {}s) is the slowest: route it over a faster lane or drop it",
                s.index, s.rail, s.duration_sec
            ));
        }
    }
    if let Some(limit) = c.max_total_fee_units.filter(|l| t.fees > *l) {
        first.get_or_insert(BindingConstraint {
            constraint: "maxTotalFeeUnits".into(),
            limit: limit.to_string().into(),
            actual: t.fees.to_string().into(),
            why: format!(
                "the steps withhold {} units together, {} over the limit",
                t.fees,
                t.fees.saturating_sub(limit)
            ),
            step: None,
        });
        fixes.push(format!("raise maxTotalFeeUnits to at least {}", t.fees));
        if let Some(s) = steps.iter().max_by_key(|s| s.fee_units) {
            fixes.push(format!(
                "step {} ({}) withholds the most ({} units): merge it with another step (fixed gas costs are paid once) or send fromAddress of a member (15 bps route fee)",
                s.index, s.rail, s.fee_units
            ));
        }
    }
    first.map(|constraint| Binding { constraint, fixes })
}

/// The binding constraint of a plan stopped at unroutable step `index`.
pub fn unroutable(index: usize, code: &str, why: &str, fix: Option<&str>) -> Binding {
    let mut fixes = vec![format!(
        "change step {index}: GET /api/route/chains lists the lanes and assets this host routes"
    )];
    fixes.extend(fix.map(|f| format!("step {index}: {f}")));
    Binding {
        constraint: BindingConstraint {
            constraint: "routable".into(),
            limit: "every step routable".into(),
            actual: format!("step {index}: {code}").into(),
            why: why.into(),
            step: Some(index),
        },
        fixes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(index: usize, secs: u32, fee: u128) -> StepCost {
        StepCost {
            index,
            rail: format!("r{index}"),
            est_out: Amount::from_u128(1_000),
            fee_units: Amount::from_u128(fee),
            duration_sec: secs,
        }
    }

    #[test]
    fn durations_and_fees_accumulate() {
        let t = totals(&[step(0, 15, 30), step(1, 60, 12)]);
        assert_eq!((t.duration_sec, t.fees), (75, Amount::from_u128(42)));
        assert_eq!(totals(&[]), Totals::default());
    }

    #[test]
    fn the_first_violated_constraint_binds_and_every_one_gets_a_fix() {
        let steps = [step(0, 15, 30), step(1, 60, 12)];
        let none = Constraints::default();
        assert!(binding(&none, &steps).is_none());
        let loose = Constraints {
            max_total_seconds: Some(75),
            max_total_fee_units: Some(Amount::from_u128(42)),
        };
        assert!(binding(&loose, &steps).is_none(), "limits are inclusive");
        let tight = Constraints {
            max_total_seconds: Some(20),
            max_total_fee_units: Some(Amount::from_u128(40)),
        };
        let b = binding(&tight, &steps).unwrap();
        assert_eq!(b.constraint.constraint, "maxTotalSeconds");
        assert_eq!(
            (b.constraint.limit.as_u64(), b.constraint.actual.as_u64()),
            (Some(20), Some(75))
        );
        assert!(b.fixes[0].contains("at least 75"));
        assert!(b.fixes[1].contains("step 1 (r1, 60s)"));
        assert!(b
            .fixes
            .iter()
            .any(|f| f.contains("maxTotalFeeUnits to at least 42")));
        let fees_only = Constraints {
            max_total_fee_units: Some(Amount::from_u128(40)),
            ..Constraints::default()
        };
        let b = binding(&fees_only, &steps).unwrap();
        assert_eq!(
            (
                Some(b.constraint.constraint.as_str()),
                b.constraint.actual.as_str()
            ),
            (Some("maxTotalFeeUnits"), Some("42"))
        );
    }

    #[test]
    fn an_unroutable_step_binds_with_its_index() {
        let b = unroutable(1, "UNROUTABLE_LANE", "no rail", Some("try USDC"));
        assert_eq!(b.constraint.step, Some(1));
        assert_eq!(b.constraint.actual, "step 1: UNROUTABLE_LANE");
        assert_eq!(b.fixes.len(), 2);
    }
}
