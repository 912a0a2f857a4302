//! Squid **simulator**, following the public Squid API v2
//! (docs.squidrouter.com, "Get a route", "Route Request Parameters", "Get
//! Route Status"; base `https://v2.api.squidrouter.com`):
//!
//! - `POST /v2/route` (header `x-integrator-id`, body `{fromChain, toChain,
//!   fromToken, toToken, fromAmount, fromAddress, toAddress, slippage,
//!   quoteOnly}`; chain ids as strings) → `{route: {quoteId, estimate{fromAmount,
//!   toAmount, toAmountMin, exchangeRate, aggregateSlippage, isBoostSupported,
//!   feeCosts[], gasCosts[], estimatedRouteDuration, aggregatePriceImpact},
//!   transactionRequest?{type: ON_CHAIN_EXECUTION, routeType, target, data, value,
//!   gasLimit, gasPrice, maxFeePerGas, maxPriorityFeePerGas}, params}}` and an
//!   `x-request-id` response header; `quoteOnly: true` leaves `transactionRequest` out
//!   (optional in `0xsquid/squid-types` `RouteResponse`);
//! - `GET /v2/status?transactionId&requestId&fromChainId&toChainId[&quoteId]`
//!   → `{id, status, gasStatus, isGMPTransaction, axelarTransactionUrl,
//!   squidTransactionStatus, fromChain{transactionId, blockNumber,
//!   callEventStatus, callEventLog, chainData}, toChain?{…}, routeStatus[],
//!   timeSpent}` (`StatusResponse` of `0xsquid/squid-types`; `toChain` only
//!   once a destination transaction exists, its `transactionId` being a
//!   string there); an unknown transaction is a 404;
//! - errors: `{message, type, statusCode}` as in the docs' "Error Codes",
//!   plus `errorType`, `reason` (and `path` for a refused parameter) of
//!   `squid-types`' `SquidError`, so that one body satisfies both.
//!
//! Simulator specifics: the target is the devnet's `BridgeDeposit` (approve
//! it for the source token). `squidTransactionStatus` takes values of
//! Squid's own `SquidTransactionStatus` enum: `ongoing` until settled,
//! `success` once paid out, `refunded` once a failed transfer
//! (`accept-then-fail`, unmatched deposit, failed payout) is refunded to
//! the sender, and `failed_on_destination` for a transfer that failed with
//! no refund (the `fail-on-destination` fault, or a refund that did not go
//! through).

use alloy::primitives::{Address, U256};
use axum::{
    extract::{Query, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::IntoResponse,
    routing::{get, post},
    Json, Router,
};
use serde_json::{json, Value};

use crate::{
    aggregator::{self, EvmAsk, EvmQuote, NoQuote, DEPOSIT_GAS, DURATION_SECS, GAS_PRICE},
    faults::ErrorShape,
    http::{hex0x, param, Answer, Early, Params},
    pricing::less_bps,
    settle::{Outcome, Transfer},
    tokens::TokenInfo,
    SimContext, Upstream,
};

/// Squid's error body for `status`: the docs' `{message, type}` ("Error
/// Codes") and, in the same body, `squid-types`' `SquidError` (`errorType`
/// of its `ErrorType` enum, `message`, `reason`), which the docs' `type`
/// values (`NOT_FOUND`, `RATE_LIMITED`) are not all members of.
fn error_body(status: StatusCode) -> Value {
    let (kind, error_type, message) = match status.as_u16() {
        400 => ("BAD_REQUEST", "BAD_REQUEST", "Invalid route request"),
        401 => (
            "UNAUTHORIZED",
            "UNAUTHORIZED",
            "x-integrator-id header is required",
        ),
        404 => (
            "NOT_FOUND",
            "ROUTE_ERROR",
            "No route found for the requested parameters",
        ),
        429 => ("RATE_LIMITED", "RATE_LIMIT", "Too many requests"),
        _ => ("INTERNAL_ERROR", "INTERNAL_ERROR", "Internal server error"),
    };
    json!({"message": message, "type": kind, "errorType": error_type, "reason": message,
           "statusCode": status.as_u16().to_string()})
}

/// Squid's error answers and truncated body.
pub const SHAPE: ErrorShape = ErrorShape {
    body: error_body,
    garbage: r#"{"route":{"estimate":{"fromAmount":"1000000","toAmount":"99"#,
};

fn error(status: StatusCode, message: &str) -> Early {
    let mut body = error_body(status);
    body["message"] = json!(message);
    body["reason"] = json!(message);
    (status, Json(body)).into_response().into()
}

/// A refused request parameter: `SquidError` `SCHEMA_VALIDATION_ERROR`
/// naming it in `path`.
fn invalid_param(k: &str) -> Early {
    let status = StatusCode::BAD_REQUEST;
    let message = format!("\"{k}\" is required and must be valid");
    let mut body = error_body(status);
    body["message"] = json!(message);
    body["reason"] = json!(message);
    body["errorType"] = json!("SCHEMA_VALIDATION_ERROR");
    body["path"] = json!(k);
    (status, Json(body)).into_response().into()
}

/// The router: `POST /v2/route`, `GET /v2/status`.
pub fn routes(ctx: SimContext) -> Router {
    Router::new()
        .route("/v2/route", post(route))
        .route("/v2/status", get(status))
        .with_state(ctx)
}

/// Faults first, then the `x-integrator-id` check.
async fn gate(s: &SimContext, headers: &HeaderMap) -> Answer<()> {
    s.faults.gate(&SHAPE).await?;
    match headers.get("x-integrator-id") {
        Some(v) if !v.is_empty() => Ok(()),
        _ => Err(SHAPE.respond(StatusCode::UNAUTHORIZED).into()),
    }
}

fn text(b: &Value, k: &str) -> Option<String> {
    match &b[k] {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[tracing::instrument(skip_all, fields(simulator = "squid"))]
async fn route(State(s): State<SimContext>, headers: HeaderMap, body: axum::body::Bytes) -> Answer {
    gate(&s, &headers).await?;
    let b = serde_json::from_slice::<Value>(&body).map_err(|_| {
        error(
            StatusCode::BAD_REQUEST,
            "The request body is not valid JSON",
        )
    })?;
    build_route(&s, &b)
}

fn build_route(s: &SimContext, b: &Value) -> Answer {
    let bad = invalid_param;
    let num = |k: &str| {
        text(b, k)
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| bad(k))
    };
    let (from_chain, to_chain) = (num("fromChain")?, num("toChain")?);
    let amount: U256 = text(b, "fromAmount")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad("fromAmount"))?;
    let sender: Address = text(b, "fromAddress")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad("fromAddress"))?;
    let recipient: Address = match text(b, "toAddress") {
        Some(a) => a.parse().map_err(|_| bad("toAddress"))?,
        None => sender,
    };
    let (from_token, to_token) = (
        text(b, "fromToken").ok_or_else(|| bad("fromToken"))?,
        text(b, "toToken").ok_or_else(|| bad("toToken"))?,
    );
    let slippage_pct = b["slippage"].as_f64().unwrap_or(1.0);
    let ask = EvmAsk {
        upstream: Upstream::Squid,
        from_chain,
        to_chain,
        from_token: &from_token,
        to_token: &to_token,
        amount,
        recipient,
    };
    let q = aggregator::quote(&s.tokens, &s.settle, &ask).map_err(|e| match e {
        NoQuote::NoRoute => SHAPE.respond(StatusCode::NOT_FOUND).into(),
        other => error(StatusCode::BAD_REQUEST, &other.to_string()),
    })?;
    let quote_only = b["quoteOnly"].as_bool().unwrap_or(false);
    let body = render_route(&ask, &q, b, slippage_pct, quote_only);
    let mut resp = Json(body).into_response();
    let request_id = hex::encode(&q.call.quote_id[..16]);
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        resp.headers_mut().insert("x-request-id", v);
    }
    Ok(resp)
}

fn token_json(t: &TokenInfo, chain: u64) -> Value {
    json!({"type": "evm", "chainId": chain.to_string(), "address": t.address, "name": t.name,
           "symbol": t.symbol, "decimals": t.decimals, "logoURI": "", "coingeckoId": ""})
}

fn render_route(
    ask: &EvmAsk<'_>,
    q: &EvmQuote,
    params: &Value,
    slippage_pct: f64,
    quote_only: bool,
) -> Value {
    let EvmQuote {
        from,
        to,
        priced,
        call,
        ..
    } = q;
    let slip_bps = (slippage_pct.clamp(0.0, 100.0) * 100.0).round() as u64;
    let gas_token = TokenInfo {
        symbol: "ETH",
        name: "Ether",
        address: Address::ZERO,
        decimals: 18,
    };
    let tx = json!({
        "type": "ON_CHAIN_EXECUTION", "routeType": "CALL_BRIDGE", "target": call.to, "data": hex0x(&call.data),
        "value": call.value.to_string(), "gasLimit": DEPOSIT_GAS.to_string(),
        "gasPrice": GAS_PRICE.to_string(), "maxFeePerGas": GAS_PRICE.to_string(),
        "maxPriorityFeePerGas": "0", "requestId": hex::encode(&call.quote_id[..16]),
    });
    let mut route = json!({
        "quoteId": hex::encode(&call.quote_id[..16]),
        "estimate": {
            "fromAmount": ask.amount.to_string(),
            "toAmount": priced.out.to_string(),
            "toAmountMin": less_bps(priced.out, slip_bps).to_string(),
            "exchangeRate": exchange_rate(ask.amount, priced.out, from, to),
            "aggregateSlippage": slippage_pct, "isBoostSupported": false,
            "fromToken": token_json(from, ask.from_chain), "toToken": token_json(to, ask.to_chain),
            "aggregatePriceImpact": "0.0", "estimatedRouteDuration": DURATION_SECS,
            "actions": [],
            "feeCosts": [{"name": "Bridge fee", "description": "Simulated devnet bridge fee",
                          "amount": priced.fee.to_string(), "amountUsd": "0.00",
                          "token": token_json(from, ask.from_chain)}],
            "gasCosts": [{"type": "executeCall", "gasLimit": DEPOSIT_GAS.to_string(),
                          "amount": (u128::from(DEPOSIT_GAS) * u128::from(GAS_PRICE)).to_string(),
                          "amountUsd": "0.00", "token": token_json(&gas_token, ask.from_chain)}],
        },
        "params": params,
    });
    // Optional in Squid's `RouteResponse`: absent for `quoteOnly`.
    if !quote_only {
        route["transactionRequest"] = tx;
    }
    json!({ "route": route })
}

/// Squid's `exchangeRate`: destination units per source unit, as a decimal
/// string (display only).
fn exchange_rate(amount: U256, out: U256, from: &TokenInfo, to: &TokenInfo) -> String {
    let as_f64 = |v: U256, decimals: u8| {
        let v: f64 = v.to_string().parse().unwrap_or(0.0);
        v / 10f64.powi(i32::from(decimals))
    };
    let input = as_f64(amount, from.decimals);
    if input == 0.0 {
        return "0".into();
    }
    format!("{:.6}", as_f64(out, to.decimals) / input)
}

#[tracing::instrument(skip_all, fields(simulator = "squid"))]
async fn status(
    State(s): State<SimContext>,
    headers: HeaderMap,
    Query(q): Query<Params>,
) -> Answer {
    gate(&s, &headers).await?;
    let tx = param(&q, "transactionId").ok_or_else(|| invalid_param("transactionId"))?;
    let t = s
        .settle
        .transfer(tx)
        .ok_or_else(|| error(StatusCode::NOT_FOUND, "Transaction not found"))?;
    Ok(Json(render_status(&t)).into_response())
}

fn chain_leg(tx: &str, chain: &str) -> Value {
    json!({"transactionId": tx, "blockNumber": "", "callEventStatus": "", "callEventLog": [],
           "chainData": {"chainId": chain, "networkName": format!("Devnet {chain}")}, "transactionUrl": ""})
}

/// Squid's verdict, Axelar's status, the destination leg's
/// `RouteActionStatus` and transaction, and a refund transaction.
type Verdict<'a> = (
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'a str>,
    Option<&'a str>,
);

fn verdict(t: &Transfer) -> Verdict<'_> {
    match t.outcome() {
        Outcome::Pending => ("ongoing", "source_gateway_called", None, None, None),
        Outcome::Delivered(tx) => (
            "success",
            "destination_executed",
            Some("success"),
            Some(tx),
            None,
        ),
        Outcome::Failed {
            refund_tx: Some(r), ..
        } => ("refunded", "error", Some("refunded"), None, Some(r)),
        Outcome::Failed {
            refund_tx: None, ..
        } => (
            "failed_on_destination",
            "error",
            Some("failure"),
            None,
            None,
        ),
    }
}

fn render_status(t: &Transfer) -> Value {
    let dest = t.dest.as_ref().map_or(t.from.clone(), |d| d.label());
    let (squid, axelar, leg, to_tx, refund) = verdict(t);
    let mut route_status =
        vec![json!({"chainId": t.from, "txHash": t.src_tx, "status": "success", "action": "send"})];
    if let Some(leg) = leg {
        route_status.push(
            json!({"chainId": dest, "txHash": to_tx.unwrap_or_default(), "status": leg, "action": "call"}),
        );
    }
    if let Some(r) = refund {
        route_status
            .push(json!({"chainId": t.from, "txHash": r, "status": "refunded", "action": "send"}));
    }
    let mut body = json!({
        "id": t.src_tx, "status": axelar, "gasStatus": "", "isGMPTransaction": false,
        "axelarTransactionUrl": "",
        "fromChain": chain_leg(&t.src_tx, &t.from),
        "routeStatus": route_status,
        "timeSpent": {"total": t.seen_at.elapsed().as_secs()},
        "squidTransactionStatus": squid,
    });
    if let Some(tx) = to_tx {
        body["toChain"] = chain_leg(tx, &dest);
    }
    body
}
