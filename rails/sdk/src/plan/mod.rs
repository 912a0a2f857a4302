//! From an aggregator's transaction request to a declarative plan.
//!
//! A quote carries what `prepare` needs in its `detail` ([`EvmQuoteDetail`]):
//! rails keep no state between calls. `prepare` turns it into the same four
//! steps for every aggregator — Permit2 pull into the relayer, approve the
//! upstream's spender, call the upstream's transaction target, await the
//! upstream — and never signs anything.

mod builder;

pub use builder::PlanBuilder;
use relay_plugin_api::{Amount, ExecutionPlan, PrepareRequest, RailError, RailErrorKind};
use serde::{Deserialize, Serialize};

use crate::lane::is_evm_address;

/// An EVM transaction an upstream asks its caller to send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvmCall {
    /// Target contract.
    pub to: String,
    /// Calldata, `0x`-hex.
    pub data: String,
    /// Native value, wei.
    pub value: Amount,
    /// Gas limit the upstream suggests.
    pub gas_limit: Option<u64>,
}

impl EvmCall {
    /// A call of `to` with `data`, no value, the host's default gas limit.
    pub fn new(to: impl Into<String>, data: impl Into<String>) -> Self {
        Self {
            to: to.into(),
            data: data.into(),
            value: Amount::ZERO,
            gas_limit: None,
        }
    }

    /// The same call with a gas limit.
    pub fn with_gas_limit(mut self, gas_limit: u64) -> Self {
        self.gas_limit = Some(gas_limit);
        self
    }

    /// Checks the shape an upstream gave: an address target and hex calldata.
    pub fn checked(self, upstream: &crate::Upstream) -> Result<Self, RailError> {
        if !is_evm_address(&self.to) {
            return Err(upstream.malformed(format!("transaction target {:?}", self.to)));
        }
        let hex = self.data.strip_prefix("0x").unwrap_or("-");
        if hex.len() & 1 == 1 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(upstream.malformed("transaction data is not 0x-hex"));
        }
        Ok(self)
    }
}

/// What an aggregator rail keeps in its quote's `detail`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvmQuoteDetail {
    /// The upstream's name.
    pub upstream: String,
    /// The address the upstream priced the transaction for (the relayer).
    pub sender: String,
    /// Who the upstream needs approved for the source token, if anyone.
    pub approval_address: Option<String>,
    /// The transaction to send, when the quote already carries it.
    pub transaction_request: Option<EvmCall>,
    /// What `track` needs besides the source transaction, as the upstream
    /// rail wrote it (compact JSON): becomes the plan's `track_ref`.
    pub track_ref: String,
    /// Upstream-specific data (`tool`, a route to build).
    pub upstream_data: serde_json::Value,
}

impl EvmQuoteDetail {
    /// The detail as the JSON object a quote carries.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_else(|_| serde_json::json!({}))
    }

    /// The plan for an accepted quote that already carries its transaction.
    pub fn plan(req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        let d = Self::from_prepare(req)?;
        let call = d
            .transaction_request
            .clone()
            .ok_or_else(|| RailError::invalid("quote.detail.transactionRequest", "missing"))?;
        evm_plan(
            req,
            call,
            d.approval_address.as_deref(),
            d.track_ref.clone(),
        )
    }

    /// Reads the detail back from an accepted quote; refuses a quote priced
    /// for another sender than the relayer that will execute it.
    pub fn from_prepare(req: &PrepareRequest) -> Result<Self, RailError> {
        let d = EvmQuoteDetail::deserialize(&*req.quote.detail)
            .map_err(|e| RailError::invalid("quote.detail", e))?;
        if !d.sender.eq_ignore_ascii_case(&req.relayer) {
            return Err(RailError::new(
                RailErrorKind::QuoteExpired,
                format!(
                    "the quote was priced for sender {} but relayer {} executes; quote again",
                    d.sender, req.relayer
                ),
            ));
        }
        Ok(d)
    }
}

/// A rail's track reference as the compact JSON `track_ref` carries.
pub fn track_ref<T: Serialize>(t: &T) -> String {
    serde_json::to_string(t).unwrap_or_else(|_| "{}".into())
}

/// The plan for `call`: Permit2 pull (permit2 mode) → approve `spender` for
/// the source token (ERC-20 sources only; the call's target when the
/// upstream names no spender) → the call → await the upstream at `track_ref`.
pub fn evm_plan(
    req: &PrepareRequest,
    call: EvmCall,
    spender: Option<&str>,
    track_ref: String,
) -> Result<ExecutionPlan, RailError> {
    let spender = spender.unwrap_or(&call.to).to_string();
    let approve = PlanBuilder::new(req).pull()?.approve(&spender);
    let approve = approve
        .map_err(|_| RailError::invalid("quote.detail.approvalAddress", "not an address"))?;
    Ok(approve
        .call(call)
        .await_upstream(track_ref.clone())
        .track_ref(track_ref)
        .build())
}
