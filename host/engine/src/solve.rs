//! The intent solver (spec §2.10, §4.3, §8.2), pure logic: read the
//! request's sources, turn each into a RouteRequest, and order the priced
//! (source, rail) pairs by the caller's goal. Quoting happens in the API
//! handler, every source concurrently; nothing here signs or executes.
//!
//! - **Sources** are read at the edge ([`relay_wire::solve`]): 1 to 10
//!   `{chain, token, amount}`, each a RouteRequest to the request's
//!   destination.
//! - **Candidates** are every executable answer of every source (a source
//!   may win on a rail that is not its own net-best, e.g. for `fastest`).
//! - **Goals**: `max-output` (default) ranks by delivered amount, then
//!   speed; `cheapest` by effective fee (share of value withheld; unpriced
//!   last), then output; `fastest` by duration, then output.
//! - **qualityScore** is compare's score ([`super::compare::quality_score`])
//!   against the best delivery among all candidates.

use relay_plugin_api::Amount;
use serde::Serialize;
use serde_json::{Map, Value};
use std::cmp::Reverse;
use utoipa::ToSchema;

/// What the caller optimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// Most delivered.
    MaxOutput,
    /// Least withheld, relative to value.
    Cheapest,
    /// Soonest delivered.
    Fastest,
}

impl Goal {
    /// Parses `goal` (omitted → `max-output`).
    pub fn parse(raw: Option<&str>) -> Result<Goal, String> {
        match raw.map(str::trim) {
            None | Some("max-output") => Ok(Goal::MaxOutput),
            Some("cheapest") => Ok(Goal::Cheapest),
            Some("fastest") => Ok(Goal::Fastest),
            Some(other) => Err(format!("{other:?} is not max-output, cheapest or fastest")),
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Goal::MaxOutput => "max-output",
            Goal::Cheapest => "cheapest",
            Goal::Fastest => "fastest",
        }
    }
}

/// One priced (source, rail) pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Index of the source in `from`.
    pub source: usize,
    /// Index of the answer in that source's quote.
    pub result: usize,
    /// Delivered, destination units.
    pub est_out: Amount,
    /// Effective fee, ppm, when the lane can be valued.
    pub fee_ppm: Option<u64>,
    /// Duration, seconds.
    pub duration_sec: u32,
}

/// A source of a solve answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SourceRef {
    /// Source node.
    #[schema(value_type = relay_wire::Node)]
    pub chain: relay_plugin_api::ChainRef,
    /// Token symbol.
    pub token: String,
    /// Amount, smallest units.
    #[schema(value_type = String)]
    pub amount: Amount,
}

/// One (source, rail) option of a solve answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SolveOption {
    /// The source.
    pub from: SourceRef,
    /// The rail.
    pub rail: String,
    /// Its lane.
    pub lane: String,
    /// Net delivery.
    #[schema(value_type = String)]
    pub est_out: Amount,
    /// Guaranteed minimum.
    #[schema(value_type = Option<String>)]
    pub min_out: Option<Amount>,
    /// Duration.
    pub duration_sec: u32,
    /// Effective fee, percent.
    pub effective_fee_pct: Option<f64>,
    /// 0–100.
    pub quality_score: u8,
    /// The ready-to-POST execute body.
    pub execute: relay_wire::ExecuteRequest,
    /// What to sign first, when the body is a Permit2 execute.
    pub sign: Option<super::submit::SignRequest>,
}

/// A source that could not be used, and why.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// The source as given.
    #[schema(value_type = Object)]
    pub source: Map<String, Value>,
    /// Why.
    pub reason: String,
    /// The errorCode a quote of it answered.
    pub error_code: String,
}

/// The destination of a solve.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SolveTo {
    /// As given.
    pub chain: Option<Value>,
    /// As given.
    pub token: Option<Value>,
}

/// `POST`/`GET /api/intent/solve` (spec §2.10).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SolveAnswer {
    /// The goal.
    pub goal: String,
    /// The destination.
    pub to: SolveTo,
    /// The best option (null when nothing quoted).
    pub plan: Option<SolveOption>,
    /// The others, best first.
    pub alternatives: Vec<SolveOption>,
    /// Sources that could not be used.
    pub skipped: Vec<Skipped>,
    /// Sources given.
    pub sources_considered: usize,
    /// How to read it.
    pub note: String,
}

/// Orders `c` best first for `goal` (module docs).
pub fn rank(goal: Goal, c: &mut [Candidate]) {
    match goal {
        Goal::MaxOutput => c.sort_by_key(|x| (Reverse(x.est_out), x.duration_sec, x.source)),
        Goal::Cheapest => {
            c.sort_by_key(|x| (x.fee_ppm.is_none(), x.fee_ppm, Reverse(x.est_out), x.source))
        }
        Goal::Fastest => c.sort_by_key(|x| (x.duration_sec, Reverse(x.est_out), x.source)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(source: usize, out: u128, fee: Option<u64>, secs: u32) -> Candidate {
        Candidate {
            source,
            result: 0,
            est_out: Amount::from_u128(out),
            fee_ppm: fee,
            duration_sec: secs,
        }
    }

    #[test]
    fn each_goal_orders_its_own_way() {
        let all = vec![
            cand(0, 100, Some(5_000), 600),
            cand(1, 90, Some(1_000), 15),
            cand(2, 95, None, 5),
        ];
        let order = |g| {
            let mut c = all.clone();
            rank(g, &mut c);
            c.iter().map(|x| x.source).collect::<Vec<_>>()
        };
        assert_eq!(order(Goal::MaxOutput), [0, 2, 1]);
        assert_eq!(order(Goal::Cheapest), [1, 0, 2]);
        assert_eq!(order(Goal::Fastest), [2, 1, 0]);
        assert_eq!(Goal::parse(None), Ok(Goal::MaxOutput));
        assert!(Goal::parse(Some("cheap")).is_err());
    }
}
