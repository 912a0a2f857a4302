//! Preflight (spec §2.14, §4.2, §7): would this execute go through, and if
//! not, what exactly is in the way? Nothing here signs, broadcasts or
//! moves anything: it reads the quote the execute would see and, with
//! `deep`, three on-chain balances.
//!
//! **Blockers** (`decision: NO_GO` when any), each `{code, fix}`:
//!
//! | code | when |
//! |---|---|
//! | `UNROUTABLE_LANE` | no enabled, healthy rail serves the lane and asset (or the named `rail` does not) |
//! | `AMOUNT_OUT_OF_RANGE` | every rail refused the amount (fees swallow it, or above capacity) |
//! | `RAILS_UNAVAILABLE` | no rail answered |
//! | `QUOTE_ONLY` | only quote-only lanes answered |
//! | `PRICE_MOVED` | `minOut` is above what the route delivers now |
//! | `PERMIT2_INVALID` | a `permit2` is given and does not verify (signer, spender, chain, deadline, token, amount, low-s, unused nonce) |
//! | `RELAYER_UNAVAILABLE` | this host has no relayer key and the execute needs one (a permit to verify and pull, or a live route) |
//! | `RELAYER_FLOAT_LOW` | deep: the winner pays out of inventory and the relayer's destination balance of the token is below the payout |
//! | `PERMIT2_ALLOWANCE_MISSING` | deep, `mode: permit2`: the owner's ERC-20 allowance to Permit2 is below the amount |
//! | `INSUFFICIENT_BALANCE` | deep: the owner (the permit's owner, else `fromAddress`, else the relayer in `self` mode) holds less than the amount |
//!
//! **Warnings** (never block), each `{code, what}`: `ABOVE_LANE_CAPACITY`
//! (the float lane's `capNow` is below the amount, or it refused the amount
//! as above `capNow`; another rail may still carry it), `HIGH_COST` (20 % or
//! more of the input's value is withheld — rail/vendor fees, route fee and
//! relayer gas together, as compare's `effectiveFeePct` counts them),
//! `NOT_A_MEMBER` (the sender holds no recognised membership token, or
//! sent no `fromAddress`: standard tier), and `CHECK_UNAVAILABLE` (deep: a
//! balance could not be read; the check was skipped, not passed).

use alloy::primitives::{Address, U256};
use relay_plugin_api::{Amount, RailErrorKind, RailRole};
use serde::Serialize;

use super::{
    compare,
    fees::Conversion,
    onchain::ChainReader,
    plan::Unusable,
    quote::{NoRoute, QuoteOutcome, Silence},
};
use crate::config::QuoteConfig;

/// The share of value withheld that earns `HIGH_COST`, ppm (20 %).
pub const HIGH_COST_PPM: u64 = 200_000;

/// Something that stops the execute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Blocker {
    /// Stable code (module docs).
    pub code: &'static str,
    /// What to do about it.
    pub fix: String,
}

/// Something the caller should know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// Stable code (module docs).
    pub code: &'static str,
    /// What it means here.
    pub what: String,
}

fn blocker(code: &'static str, fix: String) -> Blocker {
    Blocker { code, fix }
}

/// No rail serves the lane.
pub fn unroutable(why: &str) -> Blocker {
    blocker(
        "UNROUTABLE_LANE",
        format!("{why}; GET /api/route/chains lists the lanes and assets this host routes"),
    )
}

/// The blocker of a quote with no usable answer.
pub fn unusable(u: &Unusable) -> Blocker {
    match u {
        Unusable::RailNotServing(_) => unroutable(&u.to_string()),
        Unusable::QuoteOnly(why) => blocker(
            "QUOTE_ONLY",
            format!("this lane is priced but never executed here ({why}); choose another lane"),
        ),
        Unusable::NoRoute(NoRoute::AmountOutOfRange(why)) => blocker(
            "AMOUNT_OUT_OF_RANGE",
            format!("send a larger amount (fees) or a smaller one (capacity): {why}"),
        ),
        Unusable::NoRoute(NoRoute::Unavailable(why)) => blocker(
            "RAILS_UNAVAILABLE",
            format!("no rail answered; retry shortly: {why}"),
        ),
    }
}

/// The permit does not verify.
pub fn permit_invalid(why: &str) -> Blocker {
    blocker("PERMIT2_INVALID", format!("{why}; sign a new PermitTransferFrom for spender = the relayer on this chain, this token and amount, an unused nonce and a future deadline"))
}

/// Nothing can be signed here.
pub fn relayer_unavailable(why: &str) -> Blocker {
    blocker(
        "RELAYER_UNAVAILABLE",
        format!("{why}; retry later or use another host"),
    )
}

/// `minOut` is above the delivery.
pub fn price_moved(delivered: Amount, min_out: Amount) -> Blocker {
    blocker("PRICE_MOVED", format!("the route delivers {delivered} now, below minOut {min_out}: lower minOut or quote again"))
}

/// The warnings of a quote; `winner` is the answer execute would use.
pub fn warnings(o: &QuoteOutcome, winner: Option<usize>, q: &QuoteConfig) -> Vec<Warning> {
    let mut out = Vec::new();
    if let Some(w) = capacity(o) {
        out.push(w);
    }
    let priced = winner.and_then(|i| o.results.get(i)?.outcome.as_ref().ok());
    if let Some(ppm) = priced.and_then(|p| compare::effective_fee_ppm(q, &o.ask, p.net.estimated)) {
        if ppm >= HIGH_COST_PPM {
            out.push(Warning {
                code: "HIGH_COST",
                what: format!("{:.2} % of the amount is withheld by fees (threshold 20 %); a larger amount spreads the fixed costs", compare::ppm_to_pct(ppm)),
            });
        }
    }
    if !o.membership.member {
        let what = match &o.ask.from_address {
            Some(a) => format!("{a} holds no recognised membership token: standard tier ({} bps route fee)", o.tier.route_fee_bps),
            None => format!("no fromAddress: standard tier ({} bps route fee); send fromAddress to be recognised", o.tier.route_fee_bps),
        };
        out.push(Warning {
            code: "NOT_A_MEMBER",
            what,
        });
    }
    out
}

/// `ABOVE_LANE_CAPACITY` from the float lane's answer (its `capNow`).
fn capacity(o: &QuoteOutcome) -> Option<Warning> {
    let float = o.results.iter().find(|r| r.role == RailRole::FloatLane)?;
    let what = match &float.outcome {
        Ok(p) => {
            let cap: Amount = p.quote.detail.get("capNow")?.as_str()?.parse().ok()?;
            let par = Conversion::Par {
                from_decimals: o.ask.from_token.decimals,
                to_decimals: o.ask.to_token.decimals,
            };
            let amount = par.apply(o.ask.amount);
            (cap < amount).then(|| {
                format!("the float lane can carry {cap} now (capNow), below the amount {amount}")
            })?
        }
        Err(Silence::Failed {
            kind: RailErrorKind::AmountOutOfRange,
            message,
            ..
        }) if message.contains("capNow") => {
            format!("the float lane cannot carry this amount now: {message}")
        }
        Err(_) => return None,
    };
    Some(Warning {
        code: "ABOVE_LANE_CAPACITY",
        what,
    })
}

/// What the deep checks read.
#[derive(Clone, Debug, Default)]
pub struct DeepAsk {
    /// Source chain, when EVM.
    pub from_chain: Option<u64>,
    /// Source token contract (`None`: native).
    pub from_token: Option<Address>,
    /// The amount, source units.
    pub amount: U256,
    /// Who funds the route.
    pub owner: Option<Address>,
    /// The Permit2 contract, when `mode` is `permit2`.
    pub permit2: Option<Address>,
    /// Inventory payout: destination chain, token, relayer, payout.
    pub payout: Option<(u64, Address, Address, U256)>,
}

/// The deep checks (module docs): blockers, and warnings for reads that failed.
pub async fn deep(reader: &ChainReader, d: &DeepAsk) -> (Vec<Blocker>, Vec<Warning>) {
    let balance = async {
        let (chain, owner) = (d.from_chain?, d.owner?);
        Some(match d.from_token {
            Some(t) => reader.token_balance(chain, t, owner).await,
            None => reader.native_balance(chain, owner).await,
        })
    };
    let allowance = async {
        let (chain, token, owner, permit2) = (d.from_chain?, d.from_token?, d.owner?, d.permit2?);
        Some(reader.allowance(chain, token, owner, permit2).await)
    };
    let float = async {
        let (chain, token, relayer, _) = d.payout?;
        Some(reader.token_balance(chain, token, relayer).await)
    };
    let (balance, allowance, float) = tokio::join!(balance, allowance, float);
    let (mut blockers, mut warnings) = (Vec::new(), Vec::new());
    let mut judge = |read: Option<Result<U256, super::onchain::ReadError>>,
                     need: U256,
                     code: &'static str,
                     fix: &dyn Fn(U256) -> String| {
        match read {
            Some(Ok(have)) if have < need => blockers.push(blocker(code, fix(have))),
            Some(Err(e)) => warnings.push(Warning {
                code: "CHECK_UNAVAILABLE",
                what: format!("{code} not checked: {e}"),
            }),
            _ => {}
        }
    };
    judge(balance, d.amount, "INSUFFICIENT_BALANCE", &|have| {
        format!(
            "the owner holds {have}, less than the amount {}: fund it or send at most {have}",
            d.amount
        )
    });
    judge(allowance, d.amount, "PERMIT2_ALLOWANCE_MISSING", &|have| {
        let p = d.permit2.unwrap_or_default();
        format!("the owner allows Permit2 ({p}) {have}, less than {}: approve Permit2 for the token once (one approve transaction)", d.amount)
    });
    let payout = d.payout.map_or(U256::ZERO, |(.., p)| p);
    judge(float, payout, "RELAYER_FLOAT_LOW", &|have| {
        format!("the relayer holds {have} on the destination, less than the payout {payout}: send a smaller amount or retry once the float is rebalanced")
    });
    (blockers, warnings)
}
