//! Quote requests and a rail's priced answer.
//!
//! [`QuoteRequest`] says when the host asks for a quote and what it does
//! with the answer.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{Amount, ChainRef};

/// A token resolved by the host: symbol, address on its chain (none for a
/// chain's native asset or a non-EVM asset) and decimals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Token {
    /// Symbol, upper-case (`USDC`, `BTC`).
    pub symbol: String,
    /// Contract address, when the token is a contract.
    pub address: Option<String>,
    /// Decimals of the smallest unit.
    pub decimals: u8,
}

/// What the engine asks every applicable rail.
///
/// # When the host asks, and what it does with the answer
///
/// The host asks a rail to quote in two situations:
///
/// - **Pricing** (`POST /api/route/quote`, compare, solve, the float lane's
///   probes): every applicable rail is asked at once under one deadline
///   with the user's whole source amount. The host then nets each answer
///   the same way and ranks the rails by what the user would receive:
///   `net = amount_out − route fee − relayer gas − fees not included`,
///   where the route fee (`quote.route_fee_bps`: 25 bps, members 15, by
///   default) is taken on the source amount, and the relayer gas — the
///   rail's [`GasEstimate`] plus the Permit2 pull on an EVM source — is
///   priced at the chain's gas price plus a markup (25 %, members 10 %) and
///   converted into the token.
/// - **Execution** (the chosen rail, just before `prepare`): on an EVM
///   source the relayer keeps the route fee and that gas fee out of the
///   signed amount, so the host asks again for the amount the rail will
///   really carry — the signed amount less both — and passes that answer to
///   `prepare` as [`crate::PrepareRequest::quote`]. When the amounts agree
///   (for example on a leg the relayer never holds, a deposit on a non-EVM
///   source, where it keeps nothing) the pricing answer is passed on
///   without a second call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuoteRequest {
    /// Source node.
    pub from_chain: ChainRef,
    /// Destination node.
    pub to_chain: ChainRef,
    /// Source token.
    pub from_token: Token,
    /// Destination token.
    pub to_token: Token,
    /// Source amount, smallest units: the user's whole amount when
    /// pricing; at execution, the amount the rail will carry (the signed
    /// amount less the route fee and gas fee the relayer keeps).
    pub amount: Amount,
    /// Who sends (decides fee tiers). Absent on an anonymous quote: price
    /// as if the relayer sent it (`host.config("relayer")` is its address;
    /// the price must not depend on who sends). Always set at execution.
    pub from_address: Option<String>,
    /// Who receives: `toAddress`, else `fromAddress` when both chains use
    /// one address family. Absent on an anonymous quote (price for the
    /// relayer as recipient); always set at execution.
    pub to_address: Option<String>,
    /// Slippage tolerance in basis points.
    pub slippage_bps: u32,
    /// Whether the sender holds a recognised membership (fee tier).
    pub member: bool,
}

/// What a fee pays for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeeKind {
    /// The bridge/aggregator's own fee.
    Bridge,
    /// A protocol or integrator fee charged upstream.
    Protocol,
    /// Gas the rail pays and charges back in the token.
    RelayGas,
    /// The float lane's own fee.
    Float,
}

/// One fee, in the token it is charged in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fee {
    /// What it pays for.
    pub kind: FeeKind,
    /// Amount, smallest units of `token`.
    pub amount: Amount,
    /// Token symbol the fee is charged in.
    pub token: String,
    /// Whether it is already deducted from `amount_out`. An included fee is
    /// shown only; the host deducts a fee that is not included from the
    /// output when it nets the answer (converted into the destination token
    /// when charged in the source token; a fee in any other token is shown
    /// but not deducted).
    pub included: bool,
}

/// Gas the relayer spends on the rail's own transactions, which the host
/// charges the user: priced at `chain`'s gas price plus the markup
/// (`quote.gas_markup_bps`), converted into the token, and on an EVM source
/// kept by the relayer out of the amount in flight.
///
/// Count the transactions the plan makes the relayer send — approve,
/// deposit call, payout, follow-up calls on that chain — but **not the
/// Permit2 pull**: on an EVM source with a token contract the host adds
/// the pull's gas itself (`quote.permit2_pull_gas`, 90,000 units by
/// default) on the source chain. One estimate names one chain; gas on
/// another chain is not charged unless the rail adds it as a
/// [`FeeKind::RelayGas`] fee in the token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GasEstimate {
    /// Chain the gas is spent on (EVM).
    pub chain: ChainRef,
    /// Gas units the transactions use (not their limits).
    pub gas_units: u64,
}

/// A rail's priced answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RailQuote {
    /// Rail id.
    pub rail: String,
    /// The lane name that serves it.
    pub lane: String,
    /// Source amount this answer prices: the request's `amount`.
    pub amount_in: Amount,
    /// Estimated destination amount after the rail's included fees, before
    /// the host's route fee and gas (which the host deducts itself). At
    /// execution it becomes the route's estimate.
    pub amount_out: Amount,
    /// Minimum destination amount the rail guarantees.
    pub min_out: Amount,
    /// Fees, itemised.
    pub fees: Vec<Fee>,
    /// The relayer's gas for the rail's own transactions ([`GasEstimate`]:
    /// not the Permit2 pull, which the host adds); `None` when the plan
    /// sends nothing but the pull.
    pub gas: Option<GasEstimate>,
    /// Expected duration in seconds.
    pub duration_sec: u32,
    /// Set when the lane is priced but never executed.
    pub quote_only_reason: Option<String>,
    /// The upstream's reference for this quote (quote id, route id).
    pub upstream_ref: Option<String>,
    /// When the quote stops being valid, epoch ms.
    pub expires_at_ms: u64,
    /// Rail-specific JSON object surfaced in the API (e.g. the `floatlane`
    /// block, the non-EVM rail object). Always an object, possibly empty.
    ///
    /// Shared: the host copies an answer for every quote it serves from
    /// its book, and a copy of the detail is a reference count (build one
    /// with `json!({..}).into()`; amend one with [`Arc::make_mut`]).
    pub detail: Arc<serde_json::Value>,
}
