//! `GET /v1/quote`: the request LI.FI documents, its answer parsed once into
//! a [`RailQuote`], and the plan built from it.

use relay_plugin_api::{
    Amount, Fee, Host, HttpRequest, HttpResponse, QuoteRequest, RailError, RailErrorKind, RailQuote,
};
use relay_rail_sdk::{
    estimate::{self, UpstreamFee},
    lane::{token_ref, NATIVE_ZERO},
    plan,
    quantity::bps_to_fraction,
    upstream::{error_report, strings_under},
    EvmCall, EvmQuoteDetail, Quantity, Transfer, QUOTE_TTL_MS,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::{ID, UPSTREAM};

/// The quote request, with the query parameters in LI.FI's documented order.
pub fn request(host: &dyn Host, req: &QuoteRequest, t: &Transfer) -> HttpRequest {
    let mut q = vec![
        ("fromChain", t.from_chain.to_string()),
        ("toChain", t.to_chain.to_string()),
        ("fromToken", token_ref(&req.from_token, NATIVE_ZERO)),
        ("toToken", token_ref(&req.to_token, NATIVE_ZERO)),
        ("fromAmount", req.amount.to_string()),
        ("fromAddress", t.sender.clone()),
        ("toAddress", t.recipient.clone()),
        ("slippage", bps_to_fraction(req.slippage_bps)),
    ];
    if let Some(i) = host.config("integrator").filter(|i| !i.is_empty()) {
        q.push(("integrator", i));
    }
    UPSTREAM.get(host, "/v1/quote", &q)
}

/// A LI.FI quote (the fields the rail uses).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LifiQuote {
    id: String,
    tool: String,
    estimate: Estimate,
    transaction_request: TransactionRequest,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Estimate {
    from_amount: Amount,
    to_amount: Amount,
    to_amount_min: Amount,
    approval_address: Option<String>,
    #[serde(default)]
    fee_costs: Vec<FeeCost>,
    #[serde(default)]
    gas_costs: Vec<GasCost>,
    #[serde(default)]
    execution_duration: f64,
}

#[derive(Debug, Deserialize)]
struct FeeCost {
    #[serde(default)]
    name: String,
    amount: Amount,
    token: TokenInfo,
    included: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct TokenInfo {
    symbol: String,
    address: Option<String>,
}

#[derive(Debug, Deserialize)]
struct GasCost {
    estimate: Option<Quantity>,
    limit: Option<Quantity>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TransactionRequest {
    to: String,
    data: String,
    value: Option<Quantity>,
    gas_limit: Option<Quantity>,
    chain_id: Option<u64>,
}

/// What `track` needs beyond the source transaction: the bridge LI.FI used
/// (omitted for same-chain swaps, as LI.FI asks).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TrackRef {
    /// The `bridge` status parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bridge: Option<String>,
}

/// Turns LI.FI's answer into a quote, or its error into a typed rail error.
pub fn parse(
    host: &dyn Host,
    req: &QuoteRequest,
    t: &Transfer,
    resp: &HttpResponse,
) -> Result<RailQuote, RailError> {
    if resp.status != 200 {
        return Err(error(resp));
    }
    let q: LifiQuote = UPSTREAM.parse("quote", &resp.body)?;
    let e = &q.estimate;
    estimate::check_amounts(
        &UPSTREAM,
        req.amount,
        e.from_amount,
        e.to_amount,
        e.to_amount_min,
    )?;
    if q.transaction_request
        .chain_id
        .is_some_and(|c| c != t.from_chain)
    {
        return Err(UPSTREAM.malformed("transactionRequest is for another chain"));
    }
    let call = EvmCall {
        to: q.transaction_request.to.clone(),
        data: q.transaction_request.data.clone(),
        value: q.transaction_request.value.unwrap_or_default().0,
        gas_limit: q.transaction_request.gas_limit.and_then(Quantity::to_u64),
    }
    .checked(&UPSTREAM)?;
    let gas = estimate::gas(
        req.from_chain,
        e.gas_costs
            .iter()
            .map(|g| g.estimate.or(g.limit).and_then(Quantity::to_u64)),
        call.gas_limit,
    );
    let track = TrackRef {
        bridge: t.is_cross_chain().then(|| q.tool.clone()),
    };
    let detail = EvmQuoteDetail {
        upstream: ID.into(),
        sender: t.sender.clone(),
        approval_address: e.approval_address.clone(),
        transaction_request: Some(call),
        track_ref: plan::track_ref(&track),
        upstream_data: json!({ "id": q.id, "tool": q.tool }),
    };
    Ok(RailQuote {
        rail: ID.into(),
        lane: t.lane.into(),
        amount_in: req.amount,
        amount_out: e.to_amount,
        min_out: e.to_amount_min,
        fees: e.fee_costs.iter().map(fee).collect(),
        gas,
        duration_sec: estimate::duration_secs(e.execution_duration),
        quote_only_reason: None,
        upstream_ref: Some(q.id),
        expires_at_ms: host.now_ms() + QUOTE_TTL_MS,
        detail: detail.to_json().into(),
    })
}

/// LI.FI's own and integrator fees are protocol fees; the rest pay bridges
/// and DEXs. `included` is LI.FI's own flag.
fn fee(c: &FeeCost) -> Fee {
    UpstreamFee {
        name: &c.name,
        amount: c.amount,
        symbol: &c.token.symbol,
        address: c.token.address.as_deref(),
        included: c.included,
    }
    .to_fee(&["lifi", "li.fi", "integrator"])
}

/// LI.FI's error answer as a typed rail error: its code decides where the
/// HTTP status alone would not.
fn error(resp: &HttpResponse) -> RailError {
    let report = error_report(resp);
    let body: serde_json::Value = serde_json::from_slice(&resp.body).unwrap_or_default();
    let mut tool_codes = Vec::new();
    if let Some(errors) = body.get("errors") {
        strings_under(errors, "code", &mut tool_codes);
    }
    let out_of_range = tool_codes.iter().any(|c| {
        matches!(
            *c,
            "AMOUNT_TOO_LOW" | "AMOUNT_TOO_HIGH" | "FEES_HIGHER_THAN_AMOUNT"
        )
    });
    let base = UPSTREAM.status_error(&report);
    let kind = match report.code.as_deref() {
        _ if out_of_range => RailErrorKind::AmountOutOfRange,
        Some("1002") | Some("1003") => RailErrorKind::UnsupportedLane,
        Some("1004") | Some("1007") | Some("1011") | Some("1013") => RailErrorKind::InvalidInput,
        Some("1009") => RailErrorKind::UpstreamTimeout,
        Some("1010") => return base,
        Some("1000") | Some("1001") | Some("1005") | Some("1006") | Some("1008") | Some("1012") => {
            RailErrorKind::Upstream
        }
        _ => return base,
    };
    RailError::new(kind, base.message)
}
