//! Preflight (spec §2.14, §4.2, §7): would this execute go through, and if
//! not, what exactly is in the way? Nothing here signs, broadcasts or
//! moves anything: it reads the quote the execute would see and, with
//! `deep`, three on-chain balances. The checks execute itself runs before
//! anything is created (operator authority, the simulated Permit2 pull)
//! live in the execute service; their refusals are blockers here too.
//!
//! **Blockers** (`decision: NO_GO` when any), each `{code, fix}`:
//! [`BlockerCode`]. **Warnings** (never block), each `{code, what}`:
//! [`WarningCode`]. Both tables are served at `GET /api/errors`.

use alloy::primitives::{Address, U256};
use relay_plugin_api::{Amount, RailErrorKind, RailRole};
use serde::Serialize;
use utoipa::ToSchema;

use super::{
    compare,
    fees::Conversion,
    plan::Unusable,
    quote::{NoRoute, QuoteOutcome, Silence},
};
use relay_chain::reader::ChainReader;
use relay_config::QuoteConfig;

relay_types::code_table! {
    /// Why a preflight says `NO_GO` (`blockers[].code`).
    pub enum BlockerCode {
        /// No rail serves the lane.
        UnroutableLane => ("UNROUTABLE_LANE", "no enabled, healthy rail serves the lane and asset (or the named rail does not); GET /api/route/chains lists what this host routes"),
        /// Every rail refused the amount.
        AmountOutOfRange => ("AMOUNT_OUT_OF_RANGE", "every rail refused the amount: fees swallow it, or it is above capacity"),
        /// No rail answered.
        RailsUnavailable => ("RAILS_UNAVAILABLE", "no rail answered the quote; retry shortly"),
        /// Only quote-only lanes answered.
        QuoteOnly => ("QUOTE_ONLY", "the lane is priced for comparison but never executed here"),
        /// `minOut` is above the delivery.
        PriceMoved => ("PRICE_MOVED", "minOut is above what the route delivers now; lower it or quote again"),
        /// `mode: permit2` without the signature.
        Permit2SignatureMissing => ("PERMIT2_SIGNATURE_MISSING", "mode is permit2 and no permit2 signature was sent: sign a PermitTransferFrom for spender = the relayer and send it as permit2"),
        /// The permit does not verify.
        Permit2Invalid => ("PERMIT2_INVALID", "the permit2 signature does not verify (signer, spender, chain, deadline, token, amount, low-s, unused nonce)"),
        /// No relayer key where one is needed.
        RelayerUnavailable => ("RELAYER_UNAVAILABLE", "this host has no relayer key and the execute needs one (a permit to verify and pull, or a live route)"),
        /// Deep: the relayer's destination float is below the payout.
        RelayerFloatLow => ("RELAYER_FLOAT_LOW", "deep: the winner pays out of inventory and the relayer's destination balance is below the payout"),
        /// The owner has not approved Permit2 for the amount (deep read, or the simulated pull reverts for it).
        Permit2AllowanceMissing => ("PERMIT2_ALLOWANCE_MISSING", "mode permit2: the owner's ERC-20 allowance to Permit2 is below the amount (deep read, or the simulated pull reverts for it); approve Permit2 once"),
        /// The owner holds less than the amount (deep read, or the simulated pull reverts for it).
        InsufficientBalance => ("INSUFFICIENT_BALANCE", "the owner holds less than the amount (deep read, or the simulated pull reverts for it)"),
        /// Mode self without the operator's credential.
        OperatorAuthRequired => ("OPERATOR_AUTH_REQUIRED", "mode self (the default) spends the operator's own funds and needs Authorization: Bearer <owner token>; a client without it sends mode permit2 with a Permit2 signature"),
        /// The simulated pull says the permit's nonce is spent.
        Permit2NonceUsed => ("PERMIT2_NONCE_USED", "the simulated Permit2 pull reverts because the permit's nonce is already used; sign a new permit with an unused nonce"),
        /// The route's first transaction reverts when simulated.
        RailCallReverts => ("RAIL_CALL_REVERTS", "the route's first transaction reverts when simulated at the pending block; the fix gives the revert reason"),
    }
}

relay_types::code_table! {
    /// What a preflight wants the caller to know (`warnings[].code`); never blocks.
    pub enum WarningCode {
        /// The float lane cannot carry the amount now.
        AboveLaneCapacity => ("ABOVE_LANE_CAPACITY", "the float lane's capNow is below the amount (another rail may still carry it)"),
        /// 20 % or more of the amount is withheld by fees.
        HighCost => ("HIGH_COST", "20 % or more of the amount is withheld by fees (vendor, route fee and relayer gas together)"),
        /// Standard tier.
        NotAMember => ("NOT_A_MEMBER", "the sender holds no recognised membership token, or sent no fromAddress: standard tier fees"),
        /// A deep check could not be read.
        CheckUnavailable => ("CHECK_UNAVAILABLE", "deep: a balance or allowance could not be read; the check was skipped, not passed"),
    }
}

/// The share of value withheld that earns `HIGH_COST`, ppm (20 %).
pub const HIGH_COST_PPM: u64 = 200_000;

/// Something that stops the execute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Blocker {
    /// Stable code (`GET /api/errors` `blockers`).
    #[schema(value_type = String)]
    pub code: BlockerCode,
    /// What to do about it.
    pub fix: String,
}

/// Something the caller should know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Warning {
    /// Stable code (`GET /api/errors` `warnings`).
    #[schema(value_type = String)]
    pub code: WarningCode,
    /// What it means here.
    pub what: String,
}

/// What a GO preflight expects to happen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedOutcome {
    /// The rail execute would use.
    pub rail: String,
    /// What would arrive, smallest units.
    #[schema(value_type = String)]
    pub delivered_units: Amount,
    /// Destination token.
    pub token: String,
    /// Expected duration.
    pub duration_sec: u32,
}

/// `POST /api/route/preflight` (spec §2.14).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct PreflightAnswer {
    /// `GO` or `NO_GO`.
    pub decision: String,
    /// What stops it (branch on `code`).
    pub blockers: Vec<Blocker>,
    /// What the caller should know.
    pub warnings: Vec<Warning>,
    /// What would happen.
    pub expected: Option<ExpectedOutcome>,
    /// Whether chain state was read (`deep=1`).
    pub deep: bool,
    /// How to read it.
    pub note: String,
}

impl PreflightAnswer {
    /// GO when nothing blocks.
    pub fn new(
        blockers: Vec<Blocker>,
        warnings: Vec<Warning>,
        expected: Option<ExpectedOutcome>,
        deep: bool,
    ) -> Self {
        PreflightAnswer {
            decision: if blockers.is_empty() { "GO" } else { "NO_GO" }.into(),
            blockers,
            warnings,
            expected,
            deep,
            note: "preflight signs, broadcasts and moves nothing; branch on blockers[].code".into(),
        }
    }
}

fn blocker(code: BlockerCode, fix: String) -> Blocker {
    Blocker { code, fix }
}

/// No rail serves the lane.
pub fn unroutable(why: &str) -> Blocker {
    blocker(
        BlockerCode::UnroutableLane,
        format!("{why}; GET /api/route/chains lists the lanes and assets this host routes"),
    )
}

/// The blocker of a quote with no usable answer.
pub fn unusable(u: &Unusable) -> Blocker {
    match u {
        Unusable::RailNotServing(_) => unroutable(&u.to_string()),
        Unusable::QuoteOnly(why) => blocker(
            BlockerCode::QuoteOnly,
            format!("this lane is priced but never executed here ({why}); choose another lane"),
        ),
        Unusable::NoRoute(NoRoute::AmountOutOfRange(why)) => blocker(
            BlockerCode::AmountOutOfRange,
            format!("send a larger amount (fees) or a smaller one (capacity): {why}"),
        ),
        Unusable::NoRoute(n @ NoRoute::Unroutable(_)) => unroutable(&n.to_string()),
        Unusable::NoRoute(NoRoute::Unavailable(why)) => blocker(
            BlockerCode::RailsUnavailable,
            format!("no rail answered; retry shortly: {why}"),
        ),
    }
}

/// `mode: permit2` and no signature yet: everything else is still checked.
pub fn permit_missing() -> Blocker {
    blocker(BlockerCode::Permit2SignatureMissing, "sign a PermitTransferFrom (Permit2 EIP-712 domain of GET /api/gasless/info) for spender = the relayer, this chain, token and amount, an unused nonce and a future deadline, and send it as permit2".into())
}

/// The permit does not verify.
pub fn permit_invalid(why: &str) -> Blocker {
    blocker(BlockerCode::Permit2Invalid, format!("{why}; sign a new PermitTransferFrom for spender = the relayer on this chain, this token and amount, an unused nonce and a future deadline"))
}

/// Nothing can be signed here.
pub fn relayer_unavailable(why: &str) -> Blocker {
    blocker(
        BlockerCode::RelayerUnavailable,
        format!("{why}; retry later or use another host"),
    )
}

/// The route spends the operator's funds and no valid owner token was sent.
pub fn operator_auth_required() -> Blocker {
    blocker(BlockerCode::OperatorAuthRequired, "mode self (the default) spends the operator's own funds: only the operator may ask for it (Authorization: Bearer <owner token>); a client without it sends mode permit2 with a Permit2 signature of its own funds".into())
}

/// The route's first transaction would revert when simulated: `code` is
/// the decoded cause, `why` says what to do.
pub fn reverts(code: BlockerCode, why: &str) -> Blocker {
    blocker(code, why.to_string())
}

/// `minOut` is above the delivery.
pub fn price_moved(delivered: Amount, min_out: Amount) -> Blocker {
    blocker(BlockerCode::PriceMoved, format!("the route delivers {delivered} now, below minOut {min_out}: lower minOut or quote again"))
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
                code: WarningCode::HighCost,
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
            code: WarningCode::NotAMember,
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
        code: WarningCode::AboveLaneCapacity,
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
    let mut judge = |read: Option<Result<U256, relay_chain::reader::ReadError>>,
                     need: U256,
                     code: BlockerCode,
                     fix: &dyn Fn(U256) -> String| {
        match read {
            Some(Ok(have)) if have < need => blockers.push(blocker(code, fix(have))),
            Some(Err(e)) => warnings.push(Warning {
                code: WarningCode::CheckUnavailable,
                what: format!("{code} not checked: {e}"),
            }),
            _ => {}
        }
    };
    judge(
        balance,
        d.amount,
        BlockerCode::InsufficientBalance,
        &|have| {
            format!(
                "the owner holds {have}, less than the amount {}: fund it or send at most {have}",
                d.amount
            )
        },
    );
    judge(
        allowance,
        d.amount,
        BlockerCode::Permit2AllowanceMissing,
        &|have| {
            let p = d.permit2.unwrap_or_default();
            format!("the owner allows Permit2 ({p}) {have}, less than {}: approve Permit2 for the token once (one approve transaction)", d.amount)
        },
    );
    let payout = d.payout.map_or(U256::ZERO, |(.., p)| p);
    judge(float, payout, BlockerCode::RelayerFloatLow, &|have| {
        format!("the relayer holds {have} on the destination, less than the payout {payout}: send a smaller amount or retry once the float is rebalanced")
    });
    (blockers, warnings)
}
