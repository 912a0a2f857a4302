//! Quote requests and a rail's priced answer.

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
    /// Source amount, smallest units.
    pub amount: Amount,
    /// Who sends (decides fee tiers); the relayer when absent.
    pub from_address: Option<String>,
    /// Who receives.
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
    /// Whether it is already deducted from `amount_out`.
    pub included: bool,
}

/// Source-chain gas the relayer will spend to execute this quote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GasEstimate {
    /// Chain the gas is spent on.
    pub chain: ChainRef,
    /// Gas units.
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
    /// Source amount.
    pub amount_in: Amount,
    /// Estimated destination amount after the rail's included fees.
    pub amount_out: Amount,
    /// Minimum destination amount the rail guarantees.
    pub min_out: Amount,
    /// Fees, itemised.
    pub fees: Vec<Fee>,
    /// Relayer gas to execute, when the relayer broadcasts.
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
    pub detail: serde_json::Value,
}
