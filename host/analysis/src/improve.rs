//! What would make a route cheaper (spec §4.3 `/api/route/improve`, §2.14
//! improve record), each suggestion with the figure it would change,
//! computed from the same comparisons `/api/route/compare` serves:
//!
//! - `amount`: another amount where another rail wins, or where the
//!   effective fee changes (probes at ½×, 2×, 5× and 10× the amount, and
//!   the float lane's micro ceiling); and the guard's
//!   `recommendedMinInput` when the fee is above the guard threshold;
//! - `membership`: what a member would save at this amount (route fee
//!   and gas markup at the member tier), when the sender is not one;
//! - `timing`: the relayer gas in the fee, priced at the chains' current gas
//!   price, which a quieter time lowers;
//! - `token`: another destination token on the same chain that nets more.
//!
//! Figures are smallest units of the token named in `unit`.

use alloy::primitives::U256;
use relay_engine::{
    answer::{CompareLane, CompareResult, RailEntry},
    fees::{FeeSchedule, BPS},
};
use relay_plugin_api::Amount;
use serde::Serialize;
use utoipa::ToSchema;

/// One way to pay less.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    /// `amount`, `membership`, `timing` or `token`.
    pub kind: String,
    /// What to do, for people.
    pub what: String,
    /// The figure it changes (smallest units of `unit`).
    pub figure: String,
    /// The token of `figure`.
    pub unit: String,
    /// The rail it concerns, when one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rail: Option<String>,
}

/// The best answer the suggestions start from.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    /// The best rail now.
    pub rail: Option<String>,
    /// Its net output.
    #[schema(value_type = Option<String>)]
    pub est_out: Option<Amount>,
    /// Its effective fee, percent of the input's value.
    pub effective_fee_pct: Option<f64>,
}

/// The answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImproveAnswer {
    /// The lane and amount.
    pub lane: CompareLane,
    /// Where it stands.
    pub baseline: Baseline,
    /// Ways to pay less (empty: nothing found cheaper).
    pub suggestions: Vec<Suggestion>,
}

/// What the suggestions are computed from.
pub struct Inputs<'a> {
    /// The comparison of the request as asked.
    pub base: &'a CompareResult,
    /// Comparisons of the same lane at other amounts.
    pub amounts: &'a [CompareResult],
    /// Comparisons to other destination tokens on the same chain.
    pub tokens: &'a [CompareResult],
    /// The fee tiers.
    pub fees: FeeSchedule,
}

fn best(c: &CompareResult) -> Option<&RailEntry> {
    c.quotes
        .iter()
        .find(|e| Some(&e.rail) == c.best.as_ref() && e.ok)
}

fn pct(e: &RailEntry) -> Option<f64> {
    e.effective_fee_pct.flatten()
}

fn by_amount(base: &CompareResult, probes: &[CompareResult]) -> Vec<Suggestion> {
    let here = best(base);
    let unit = base.lane.from_token.clone();
    let mut out = Vec::new();
    for p in probes {
        let Some(there) = best(p) else { continue };
        let other_rail = here.is_none_or(|h| h.rail != there.rail);
        let cheaper = match (here.and_then(pct), pct(there)) {
            (Some(a), Some(b)) => b + 0.005 < a,
            _ => false,
        };
        if !(other_rail || cheaper) {
            continue;
        }
        let fee = pct(there).map_or("unpriced".into(), |f| format!("{f:.3} %"));
        out.push(Suggestion {
            kind: "amount".into(),
            what: format!(
                "at {} the best rail is {} with an effective fee of {fee}",
                p.lane.amount, there.rail
            ),
            figure: p.lane.amount.to_string(),
            unit: unit.clone(),
            rail: Some(there.rail.clone()),
        });
    }
    if let (false, Some(min)) = (base.guard.ok, base.guard.recommended_min_input) {
        out.push(Suggestion {
            kind: "amount".into(),
            what: format!(
                "from {min} the effective fee is within the {} % guard",
                base.guard.threshold_pct
            ),
            figure: min.to_string(),
            unit,
            rail: base.best.clone(),
        });
    }
    out
}

fn membership(base: &CompareResult, fees: FeeSchedule) -> Option<Suggestion> {
    let e = best(base).filter(|_| !base.member)?;
    let f = e.fees.as_ref()?;
    let (std, mem) = (fees.standard, fees.member);
    let route = f
        .route
        .deducted
        .mul_div(
            U256::from(std.route_fee_bps - mem.route_fee_bps),
            U256::from(std.route_fee_bps.max(1)),
        )
        .unwrap_or_default();
    let gas = f
        .gas
        .amount
        .mul_div(
            U256::from(std.gas_markup_bps - mem.gas_markup_bps),
            U256::from(BPS + std.gas_markup_bps),
        )
        .unwrap_or_default();
    let saving = Amount(route.0.saturating_add(gas.0));
    (!saving.0.is_zero()).then(|| Suggestion {
        kind: "membership".into(),
        what: format!(
            "as a member this route would cost {saving} less ({} bps route fee instead of {}, {} bps gas markup instead of {})",
            mem.route_fee_bps, std.route_fee_bps, mem.gas_markup_bps, std.gas_markup_bps
        ),
        figure: saving.to_string(),
        unit: base.lane.est_out_unit.clone(),
        rail: Some(e.rail.clone()),
    })
}

fn timing(base: &CompareResult) -> Option<Suggestion> {
    let e = best(base)?;
    let gas = &e.fees.as_ref()?.gas;
    if gas.amount.0.is_zero() {
        return None;
    }
    let prices: Vec<String> = gas
        .spent
        .iter()
        .map(|s| format!("{} wei on chain {}", s.gas_price_wei, s.chain))
        .collect();
    Some(Suggestion {
        kind: "timing".into(),
        what: format!(
            "relayer gas is {} of the fees, priced at the current gas price ({}); a quieter time lowers it",
            gas.amount,
            prices.join(", ")
        ),
        figure: gas.amount.to_string(),
        unit: gas.token.clone(),
        rail: Some(e.rail.clone()),
    })
}

fn by_token(base: &CompareResult, alternatives: &[CompareResult]) -> Vec<Suggestion> {
    let here = best(base).and_then(|e| e.est_out).unwrap_or_default();
    let scale = |c: &CompareResult, v: Amount| -> U256 {
        let (from, to) = (c.lane.est_out_decimals, base.lane.est_out_decimals);
        let p = |d: u8| U256::from(10u8).pow(U256::from(d));
        if from >= to {
            v.0 / p(from - to)
        } else {
            v.0.saturating_mul(p(to - from))
        }
    };
    alternatives
        .iter()
        .filter_map(|c| {
            let e = best(c)?;
            let there = scale(c, e.est_out?);
            (there > here.0).then(|| Suggestion {
                kind: "token".into(),
                what: format!(
                    "receiving {} instead of {} on the same chain nets {} more (at par, via {})",
                    c.lane.to_token,
                    base.lane.to_token,
                    there - here.0,
                    e.rail
                ),
                figure: (there - here.0).to_string(),
                unit: base.lane.est_out_unit.clone(),
                rail: Some(e.rail.clone()),
            })
        })
        .collect()
}

/// The suggestions for `i`.
pub fn improve(i: &Inputs<'_>) -> ImproveAnswer {
    let b = best(i.base);
    let mut suggestions = by_amount(i.base, i.amounts);
    suggestions.extend(membership(i.base, i.fees));
    suggestions.extend(timing(i.base));
    suggestions.extend(by_token(i.base, i.tokens));
    ImproveAnswer {
        lane: i.base.lane.clone(),
        baseline: Baseline {
            rail: b.map(|e| e.rail.clone()),
            est_out: b.and_then(|e| e.est_out),
            effective_fee_pct: b.and_then(pct),
        },
        suggestions,
    }
}

/// The amounts to probe around `amount`: ½×, 2×, 5×, 10×, and `micro_cap`
/// (the float lane's micro ceiling in source units) when below `amount`.
pub fn probe_amounts(amount: Amount, micro_cap: Option<Amount>) -> Vec<Amount> {
    let mut v: Vec<Amount> = [(1u64, 2u64), (2, 1), (5, 1), (10, 1)]
        .iter()
        .filter_map(|(n, d)| amount.mul_div(U256::from(*n), U256::from(*d)))
        .filter(|a| !a.0.is_zero() && *a != amount)
        .collect();
    v.extend(micro_cap.filter(|c| *c < amount && !c.0.is_zero()));
    v.sort();
    v.dedup();
    v
}
