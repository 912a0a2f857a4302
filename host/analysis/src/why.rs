//! Why the winner won (spec §4.3 `/api/route/why`, §2.14 why record):
//! what it beat and by how much, per rail, from one ranking — the ranking a
//! live route was chosen from (kept at execute), or a fresh comparison for
//! a quote. A rail that did not answer is listed as not answering, never as
//! beaten.
//!
//! `shortBy` is the winner's net output minus the rail's (destination
//! units; negative for a rail that ranked above the winner but was passed
//! over at execute, e.g. on a failover), `shortByBps` the same in basis
//! points of the winner's output.

use alloy::primitives::{I256, U256};
use relay_engine::answer::{CompareLane, CompareResult, RailEntry};
use relay_plugin_api::Amount;
use serde::Serialize;
use utoipa::ToSchema;

/// One answering rail's place.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WhyRail {
    /// Rail id.
    pub rail: String,
    /// 1-based rank among the answers.
    pub rank: Option<usize>,
    /// Net output after every fee, destination units.
    #[schema(value_type = String)]
    pub est_out: Amount,
    /// Winner's net output minus this one's (signed, destination units).
    pub short_by: String,
    /// The same in bps of the winner's output (signed).
    pub short_by_bps: i64,
    /// Every fee together, destination units.
    #[schema(value_type = Option<String>)]
    pub fees_total: Option<Amount>,
    /// Expected duration, seconds.
    pub duration_sec: Option<u32>,
    /// Effective fee, percent of the input's value.
    pub effective_fee_pct: Option<f64>,
    /// Passed over at execute (tried before the winner and declined).
    pub passed_over: bool,
}

/// A rail that did not answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Silent {
    /// Rail id.
    pub rail: String,
    /// Why.
    pub reason: Option<String>,
    /// A stable reason code.
    pub error_kind: Option<String>,
}

/// The answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WhyAnswer {
    /// The route, when asked by id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `execute`: the ranking kept when the route was executed; `now`: a
    /// fresh comparison (a quote, or a route executed without one kept).
    pub basis: String,
    /// When that ranking was made, epoch ms.
    pub ranked_at: u64,
    /// The lane and amount.
    pub lane: CompareLane,
    /// The winner: the rail that executed (a route) or the best (a quote).
    pub winner: Option<WhyRail>,
    /// Every other answering rail, in ranking order.
    pub beaten: Vec<WhyRail>,
    /// Rails that did not answer.
    pub not_answering: Vec<Silent>,
    /// One line for people.
    pub summary: String,
}

fn signed(a: Amount) -> I256 {
    I256::try_from(a.0).unwrap_or(I256::MAX)
}

fn place(e: &RailEntry, winner_out: Amount, passed_over: &[String]) -> Option<WhyRail> {
    let est = e.est_out.filter(|_| e.ok)?;
    let short = signed(winner_out) - signed(est);
    let bps = if winner_out.0.is_zero() {
        0
    } else {
        let v = short.unsigned_abs().saturating_mul(U256::from(10_000u32)) / winner_out.0;
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        if short.is_negative() {
            -v
        } else {
            v
        }
    };
    Some(WhyRail {
        rail: e.rail.clone(),
        rank: e.rank,
        est_out: est,
        short_by: short.to_string(),
        short_by_bps: bps,
        fees_total: e.fees.as_ref().map(|f| f.total),
        duration_sec: e.duration_sec,
        effective_fee_pct: e.effective_fee_pct.flatten(),
        passed_over: passed_over.contains(&e.rail),
    })
}

/// Explains `cmp`; `executed` names the rail that executed (a route),
/// `passed_over` the rails tried before it.
pub fn explain(
    cmp: &CompareResult,
    executed: Option<&str>,
    passed_over: &[String],
    (basis, ranked_at): (&str, u64),
) -> WhyAnswer {
    let winner_id = executed.map(str::to_string).or_else(|| cmp.best.clone());
    let winner_entry = cmp
        .quotes
        .iter()
        .find(|e| Some(&e.rail) == winner_id.as_ref() && e.ok);
    let winner_out = winner_entry.and_then(|e| e.est_out).unwrap_or_default();
    let winner = winner_entry.and_then(|e| place(e, winner_out, passed_over));
    let beaten: Vec<WhyRail> = cmp
        .quotes
        .iter()
        .filter(|e| Some(&e.rail) != winner_id.as_ref())
        .filter_map(|e| place(e, winner_out, passed_over))
        .collect();
    let not_answering: Vec<Silent> = cmp
        .quotes
        .iter()
        .filter(|e| !e.ok)
        .map(|e| Silent {
            rail: e.rail.clone(),
            reason: e.error.clone(),
            error_kind: e.error_kind.clone(),
        })
        .collect();
    let summary = match (&winner, beaten.iter().filter(|b| !b.passed_over).min_by_key(|b| b.short_by_bps)) {
        (Some(w), Some(next)) => format!(
            "{} won with {} {}; the runner-up {} delivers {} less ({} bps); {} rail(s) did not answer",
            w.rail, w.est_out, cmp.lane.est_out_unit, next.rail, next.short_by, next.short_by_bps, not_answering.len()
        ),
        (Some(w), None) => format!(
            "{} was the only rail that answered with a price ({} did not answer)",
            w.rail,
            not_answering.len()
        ),
        (None, _) => "no rail answered with a price".to_string(),
    };
    WhyAnswer {
        id: None,
        basis: basis.into(),
        ranked_at,
        lane: cmp.lane.clone(),
        winner,
        beaten,
        not_answering,
        summary,
    }
}
