//! `POST /v2/route`: the body Squid documents, its answer (plus the
//! `x-request-id` header) parsed once into a [`RailQuote`], and the plan.

use relay_plugin_api::{
    Amount, Host, HttpRequest, HttpResponse, QuoteRequest, RailError, RailErrorKind, RailQuote,
};
use relay_rail_sdk::{
    estimate::{self, UpstreamFee},
    lane::{token_ref, NATIVE_EEEE},
    plan,
    quantity::bps_to_percent,
    upstream::error_report,
    EvmCall, EvmQuoteDetail, Quantity, Transfer, QUOTE_TTL_MS,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::{ID, UPSTREAM};

/// The route request body, with Squid's field names and types.
pub fn body(req: &QuoteRequest, t: &Transfer) -> Value {
    let mut b = json!({
        "fromChain": t.from_chain.to_string(),
        "toChain": t.to_chain.to_string(),
        "fromToken": token_ref(&req.from_token, NATIVE_EEEE),
        "toToken": token_ref(&req.to_token, NATIVE_EEEE),
        "fromAmount": req.amount.to_string(),
        "fromAddress": t.sender,
        "toAddress": t.recipient,
        "quoteOnly": false,
    });
    // Squid's slippage is a percentage number; absent means Squid's auto mode.
    if req.slippage_bps > 0 {
        if let Ok(n) = serde_json::from_str::<serde_json::Number>(&bps_to_percent(req.slippage_bps))
        {
            b["slippage"] = Value::Number(n);
        }
    }
    b
}

/// The route request.
pub fn request(host: &dyn Host, req: &QuoteRequest, t: &Transfer) -> HttpRequest {
    UPSTREAM.post(host, "/v2/route", &body(req, t))
}

#[derive(Debug, Deserialize)]
struct RouteAnswer {
    route: Route,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Route {
    quote_id: Option<String>,
    estimate: Estimate,
    /// Optional in Squid's `RouteResponse` (absent for `quoteOnly`).
    transaction_request: Option<TransactionRequest>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Estimate {
    from_amount: Amount,
    to_amount: Amount,
    to_amount_min: Amount,
    #[serde(default)]
    fee_costs: Vec<FeeCost>,
    #[serde(default)]
    gas_costs: Vec<GasCost>,
    #[serde(default)]
    estimated_route_duration: f64,
}

#[derive(Debug, Deserialize)]
struct FeeCost {
    #[serde(default)]
    name: String,
    amount: Amount,
    token: TokenInfo,
}

#[derive(Debug, Deserialize)]
struct TokenInfo {
    symbol: String,
    address: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GasCost {
    gas_limit: Option<Quantity>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TransactionRequest {
    /// Squid's `SquidDataType`; only `ON_CHAIN_EXECUTION` is a plain call.
    #[serde(rename = "type")]
    kind: Option<String>,
    /// Absent from the deposit-address members of Squid's `SquidData`.
    target: Option<String>,
    data: Option<String>,
    value: Option<Quantity>,
    gas_limit: Option<Quantity>,
}

/// What `track` needs besides the source transaction.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackRef {
    /// The `x-request-id` of the route answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The route's `quoteId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_id: Option<String>,
}

/// Turns Squid's answer into a quote, or its error into a typed rail error.
pub fn parse(
    host: &dyn Host,
    req: &QuoteRequest,
    t: &Transfer,
    resp: &HttpResponse,
) -> Result<RailQuote, RailError> {
    if resp.status != 200 {
        return Err(error(resp));
    }
    let r = UPSTREAM.parse::<RouteAnswer>("route", &resp.body)?.route;
    let e = &r.estimate;
    estimate::check_amounts(
        &UPSTREAM,
        req.amount,
        e.from_amount,
        e.to_amount,
        e.to_amount_min,
    )?;
    let call = executable(r.transaction_request.as_ref())?.checked(&UPSTREAM)?;
    let gas = estimate::gas(
        req.from_chain,
        e.gas_costs
            .iter()
            .map(|g| g.gas_limit.and_then(Quantity::to_u64)),
        call.gas_limit,
    );
    let track = TrackRef {
        request_id: resp.header("x-request-id").map(str::to_string),
        quote_id: r.quote_id.clone(),
    };
    let fees = e
        .fee_costs
        .iter()
        .map(|c| {
            UpstreamFee {
                name: &c.name,
                amount: c.amount,
                symbol: &c.token.symbol,
                address: c.token.address.as_deref(),
                included: None,
            }
            .to_fee(&["squid", "integrator"])
        })
        .collect();
    let detail = EvmQuoteDetail {
        upstream: ID.into(),
        sender: t.sender.clone(),
        // Squid's router (the transaction target) is the spender.
        approval_address: Some(call.to.clone()),
        transaction_request: Some(call),
        track_ref: plan::track_ref(&track),
        upstream_data: json!({}),
    };
    Ok(RailQuote {
        rail: ID.into(),
        lane: t.lane.into(),
        amount_in: req.amount,
        amount_out: e.to_amount,
        min_out: e.to_amount_min,
        fees,
        gas,
        duration_sec: estimate::duration_secs(e.estimated_route_duration),
        quote_only_reason: None,
        upstream_ref: track.request_id.clone().or(track.quote_id.clone()),
        expires_at_ms: host.now_ms() + QUOTE_TTL_MS,
        detail: detail.to_json().into(),
    })
}

/// The route's transaction as a call, when it is a plain on-chain call the
/// plan can send: none at all is not the answer to a `quoteOnly: false`
/// request; a deposit-address or signature route is not this rail's lane.
fn executable(tx: Option<&TransactionRequest>) -> Result<EvmCall, RailError> {
    let tx = tx
        .ok_or_else(|| UPSTREAM.malformed("route without transactionRequest (quoteOnly: false)"))?;
    if let Some(kind) = tx.kind.as_deref().filter(|k| *k != "ON_CHAIN_EXECUTION") {
        let kind: String = kind.chars().take(40).collect();
        return Err(RailError::unsupported(format!(
            "Squid offered a {kind} route; only ON_CHAIN_EXECUTION is carried"
        )));
    }
    let (Some(to), Some(data)) = (&tx.target, &tx.data) else {
        return Err(UPSTREAM.malformed("route: transactionRequest without target or data"));
    };
    Ok(EvmCall {
        to: to.clone(),
        data: data.clone(),
        value: tx.value.unwrap_or_default().0,
        gas_limit: tx.gas_limit.and_then(Quantity::to_u64),
    })
}

/// Squid's error answer as a typed rail error: the documented messages
/// ("Error Codes") refine what the status says.
fn error(resp: &HttpResponse) -> RailError {
    let report = error_report(resp);
    let base = UPSTREAM.status_error(&report);
    let m = report.message.to_ascii_lowercase();
    // "Too many quote requests for this address": wait `retryAfter`.
    if m.contains("too many") {
        return RailError::upstream(base.message);
    }
    let kind = if m.contains("amount too low") || m.contains("amount too high") {
        RailErrorKind::AmountOutOfRange
    } else if m.contains("no route")
        || m.contains("unsupported chain")
        || m.contains("unsupported token")
    {
        RailErrorKind::UnsupportedLane
    } else {
        return base;
    };
    RailError::new(kind, base.message)
}
