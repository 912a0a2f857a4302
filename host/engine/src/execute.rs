//! Execution's choice of route (spec §4.2 "Execute notes"): walk the
//! quote's ranking in net-output order and take the first rail that
//! re-prices the amount it will really carry and prepares a plan; a rail
//! that errs is skipped (failover) while nothing has moved yet.
//!
//! What a rail carries: the relayer holds an EVM source leg, so it keeps
//! the route fee and its gas (with markup) out of the token in flight and
//! asks the rail to move the rest ([`carried`]). A leg the relayer never
//! holds (a deposit channel on a non-EVM source) carries the whole amount.
//!
//! The engine never names a rail: order, prices and plans come from the
//! loaded rails' own answers.

use std::sync::Arc;

use relay_plugin_api::{
    Amount, ExecutionPlan, PrepareRequest, QuoteRequest, RailErrorKind, RailQuote,
};

use super::{
    fees::Conversion,
    quote::{Priced, QuoteOutcome},
    request::ExecuteAsk,
};
use relay_runtime::{rails::RailSet, CallError, LoadedRail};

/// A rail that accepted the route.
#[derive(Debug)]
pub struct Accepted {
    /// The rail.
    pub rail: Arc<LoadedRail>,
    /// Its lane.
    pub lane: String,
    /// Its answer for the carried amount.
    pub quote: RailQuote,
    /// Its plan.
    pub plan: ExecutionPlan,
    /// Route fee kept by the relayer, source units.
    pub route_fee: Amount,
    /// Relayer gas (with markup) kept by the relayer, source units.
    pub gas_fee: Amount,
    /// Rails tried before it, with why they were passed over.
    pub passed: Vec<(String, String)>,
}

/// Why no rail accepted the route.
#[derive(Debug, thiserror::Error)]
pub enum Declined {
    /// Every answering lane is quote-only.
    #[error("quote-only: {0}")]
    QuoteOnly(String),
    /// A rail would carry it but the relayer lacks float there (spec §3.1).
    #[error("{message}")]
    FundsRequired {
        /// The rail.
        rail: String,
        /// Its lane.
        lane: String,
        /// The rail's reason.
        message: String,
    },
    /// Nothing delivers at least the locked minimum.
    #[error("the best route now delivers {best}, below the locked minimum {min}")]
    PriceMoved {
        /// Best delivery now.
        best: Amount,
        /// The lock.
        min: Amount,
    },
    /// Every rail failed.
    #[error("every rail failed: {0}")]
    Failed(String),
}

/// What the relayer withholds: `(route fee, gas fee)` in source units, or
/// nothing when it never holds the source leg.
pub fn withheld(ask: &ExecuteAsk, p: &Priced) -> (Amount, Amount) {
    if ask.from_chain.evm_id().is_none() {
        return (Amount::ZERO, Amount::ZERO);
    }
    let q = &p.quote;
    let back =
        Conversion::between(&ask.from_token, &ask.to_token, q.amount_in, q.amount_out).inverse();
    (p.route_fee, back.apply(p.deductions.gas_fee))
}

/// The amount the rail moves once the relayer kept its fees.
pub fn carried(ask: &ExecuteAsk, p: &Priced) -> Amount {
    let (route, gas) = withheld(ask, p);
    ask.amount.saturating_sub(route).saturating_sub(gas)
}

/// Walks `outcome`'s ranking and returns the first rail that prepares.
#[tracing::instrument(skip_all, fields(rails = outcome.results.len()))]
pub async fn choose(
    rails: &RailSet,
    outcome: &QuoteOutcome,
    ask: &ExecuteAsk,
    route_id: &str,
    relayer: &str,
) -> Result<Accepted, Declined> {
    // Rails that did not answer are reported whoever executes.
    let mut passed: Vec<(String, String)> = outcome
        .results
        .iter()
        .filter_map(|r| Some((r.rail.clone(), r.outcome.as_ref().err()?.to_string())))
        .collect();
    let mut funds: Option<Declined> = None;
    let mut quote_only = Vec::new();
    let mut best_below: Option<Amount> = None;
    let mut attempted = 0;
    for r in &outcome.results {
        let Ok(priced) = &r.outcome else { continue };
        if ask.rail.as_deref().is_some_and(|want| want != r.rail) {
            continue;
        }
        if let Some(reason) = &r.quote_only {
            quote_only.push(format!("{}: {reason}", r.rail));
            continue;
        }
        let Some(rail) = rails.snapshot().get(&r.rail).cloned() else {
            passed.push((r.rail.clone(), "unloaded since the quote".into()));
            continue;
        };
        let member = outcome.membership.member;
        attempted += 1;
        match attempt(&rail, ask, (priced, member), route_id, relayer).await {
            Ok(mut a) => {
                if let Some(min) = ask.min_out.filter(|m| a.quote.amount_out < *m) {
                    best_below = best_below.max(Some(a.quote.amount_out));
                    passed.push((r.rail.clone(), format!("delivers below minOut {min}")));
                    continue;
                }
                a.lane = r.lane.clone();
                a.passed = std::mem::take(&mut passed);
                return Ok(a);
            }
            Err(Attempt::FundsRequired(message)) => {
                funds.get_or_insert(Declined::FundsRequired {
                    rail: r.rail.clone(),
                    lane: r.lane.clone(),
                    message: message.clone(),
                });
                passed.push((r.rail.clone(), message));
            }
            Err(Attempt::Failed(why)) => {
                tracing::info!(rail = %r.rail, reason = %why, "failing over");
                passed.push((r.rail.clone(), why));
            }
        }
    }
    if let (Some(best), Some(min)) = (best_below, ask.min_out) {
        return Err(Declined::PriceMoved { best, min });
    }
    if let Some(f) = funds {
        return Err(f);
    }
    if !quote_only.is_empty() && attempted == 0 {
        return Err(Declined::QuoteOnly(quote_only.join("; ")));
    }
    let why: Vec<String> = passed.iter().map(|(r, w)| format!("{r}: {w}")).collect();
    Err(Declined::Failed(why.join("; ")))
}

enum Attempt {
    FundsRequired(String),
    Failed(String),
}

fn attempt_error(e: CallError) -> Attempt {
    let e = e.to_rail_error();
    if e.kind == RailErrorKind::FundsRequired {
        Attempt::FundsRequired(e.message)
    } else {
        Attempt::Failed(format!("{:?}: {}", e.kind, e.message))
    }
}

/// Re-prices the carried amount on one rail and asks it for a plan.
async fn attempt(
    rail: &Arc<LoadedRail>,
    ask: &ExecuteAsk,
    (priced, member): (&Priced, bool),
    route_id: &str,
    relayer: &str,
) -> Result<Accepted, Attempt> {
    let (route_fee, gas_fee) = withheld(ask, priced);
    let amount = carried(ask, priced);
    if amount.is_zero() {
        return Err(Attempt::Failed("fees take the whole amount".into()));
    }
    let quote = if amount == priced.quote.amount_in {
        priced.quote.clone()
    } else {
        rail.quote(QuoteRequest {
            from_chain: ask.from_chain,
            to_chain: ask.to_chain,
            from_token: ask.from_token.clone(),
            to_token: ask.to_token.clone(),
            amount,
            from_address: Some(ask.sender.clone()),
            to_address: Some(ask.recipient.clone()),
            slippage_bps: ask.route.slippage_bps,
            member,
        })
        .await
        .map_err(attempt_error)?
    };
    let plan = rail
        .prepare(PrepareRequest {
            route_id: route_id.to_string(),
            quote: quote.clone(),
            from_chain: ask.from_chain,
            to_chain: ask.to_chain,
            from_token_address: ask.from_token.address.clone(),
            to_token_address: ask.to_token.address.clone(),
            sender: ask.sender.clone(),
            recipient: ask.recipient.clone(),
            relayer: relayer.to_string(),
            mode: ask.mode,
        })
        .await
        .map_err(attempt_error)?;
    Ok(Accepted {
        rail: rail.clone(),
        lane: String::new(),
        quote,
        plan,
        route_fee,
        gas_fee,
        passed: Vec::new(),
    })
}
