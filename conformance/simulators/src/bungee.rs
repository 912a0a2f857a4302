//! Bungee (Socket) **simulator**, following the public Socket Swap V3 API
//! (docs.socket.tech "Guide to Integrate Socket API" and its OpenAPI
//! "Socket V3 Swap API Explorer": `V3SwapController_quote`,
//! `V3SwapController_status`; the types of the Socket provider Socket wrote
//! for the CoW SDK). Socket's docs call both earlier APIs (Socket v2
//! `/v2/quote` + `/v2/build-tx` + `/v2/bridge-status`, and Bungee v1
//! `/api/v1/bungee/*`) legacy. Every call needs the `x-api-key` header;
//! every answer is a `{success, statusCode, result, message}` envelope:
//!
//! - `GET /v3/swap/quote?userOps=tx&originChainId&destinationChainId&inputToken&inputAmount&outputToken&receiverAddress&userAddress[&slippage]`
//!   → `result{originChainId, destinationChainId, userAddress,
//!   receiverAddress, input{token, amount}, routes[{userOp: tx, quoteId,
//!   expiresAt, output{token, amount, minAmountOut}, estimatedTime,
//!   routeDetails{name, bridgeDetails, feeDetails}, approval{amount,
//!   tokenAddress, spenderAddress, userAddress}, txData{kind: evm_tx,
//!   object{chainId, to, data, value}}, gasFee, statusCheck}]}` — the route
//!   carries its transaction (no build step);
//! - `GET /v3/swap/status?quoteId` → `result{quoteId, userOp, status,
//!   statusCode: PENDING|IN_PROGRESS|COMPLETED|FAILED|EXPIRED|REFUNDED,
//!   origin{chainId, status, txHash}, destination{chainId, status, txHash},
//!   refund}`; a quote id it never issued is a 404;
//! - errors: `{success: false, statusCode, result: null, message}`.
//!
//! Simulator specifics: the bridge is `devnet-simulator`, the transaction
//! target and `approval.spenderAddress` are the devnet's `BridgeDeposit`,
//! and a transfer the simulator failed reports `REFUNDED` (with
//! `refund.txHash`) once refunded, `FAILED` before.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use alloy::primitives::{Address, B256, U256};
use axum::{
    extract::{Query, State},
    http::{HeaderMap, StatusCode},
    response::IntoResponse,
    routing::get,
    Json, Router,
};
use serde_json::{json, Value};

use crate::{
    aggregator::{self, EvmAsk, EvmQuote, NoQuote, DEPOSIT_GAS, DURATION_SECS, TOOL},
    faults::ErrorShape,
    http::{hex0x, param, Answer, Early, Params},
    settle::Outcome,
    tokens::TokenInfo,
    SimContext, Upstream,
};

fn error_body(status: StatusCode) -> Value {
    let message = match status.as_u16() {
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        _ => "Internal server error",
    };
    json!({"success": false, "statusCode": status.as_u16(), "result": null, "message": message})
}

/// Socket's error answers and truncated body.
pub const SHAPE: ErrorShape = ErrorShape {
    body: error_body,
    garbage: r#"{"success":true,"statusCode":200,"result":{"routes":[{"userOp":"tx","quoteId":"0x","output":{"amount":"99"#,
};

fn error(status: StatusCode, message: &str) -> Early {
    let body = json!({"success": false, "statusCode": status.as_u16(), "result": null, "message": message});
    (status, Json(body)).into_response().into()
}

fn ok(result: Value) -> Answer {
    Ok(
        Json(json!({"success": true, "statusCode": 200, "result": result, "message": null}))
            .into_response(),
    )
}

/// A quoted route, kept for its status.
#[derive(Clone, Debug)]
struct Quoted {
    from_chain: u64,
    to_chain: u64,
    owner: Address,
    recipient: Address,
    quote: EvmQuote,
}

#[derive(Clone, Debug)]
struct Bungee {
    ctx: SimContext,
    routes: Arc<Mutex<HashMap<B256, Quoted>>>,
}

/// The router: `GET /v3/swap/quote`, `GET /v3/swap/status`.
pub fn routes(ctx: SimContext) -> Router {
    let s = Bungee {
        ctx,
        routes: Arc::default(),
    };
    Router::new()
        .route("/v3/swap/quote", get(quote))
        .route("/v3/swap/status", get(status))
        .with_state(s)
}

/// Faults first, then the `x-api-key` check.
async fn gate(s: &Bungee, headers: &HeaderMap) -> Answer<()> {
    s.ctx.faults.gate(&SHAPE).await?;
    match headers.get("x-api-key") {
        Some(v) if !v.is_empty() => Ok(()),
        _ => Err(SHAPE.respond(StatusCode::UNAUTHORIZED).into()),
    }
}

fn asset_json(t: &TokenInfo, chain: u64) -> Value {
    json!({"chainId": chain, "address": format!("{:#x}", t.address), "symbol": t.symbol, "name": t.name,
           "decimals": t.decimals, "icon": "", "logoURI": ""})
}

/// The quote's parameters, all required but `slippage`.
struct Ask {
    from_chain: u64,
    to_chain: u64,
    amount: U256,
    user: Address,
    recipient: Address,
}

fn read_ask(q: &Params) -> Option<Ask> {
    let num = |k: &str| param(q, k).and_then(|v| v.parse::<u64>().ok());
    if !param(q, "userOps").is_some_and(|o| o.split(',').any(|x| x.trim() == "tx")) {
        return None;
    }
    Some(Ask {
        from_chain: num("originChainId")?,
        to_chain: num("destinationChainId")?,
        amount: param(q, "inputAmount")?.parse().ok()?,
        user: param(q, "userAddress")?.parse().ok()?,
        recipient: param(q, "receiverAddress")?.parse().ok()?,
    })
}

#[tracing::instrument(skip_all, fields(simulator = "bungee"))]
async fn quote(State(s): State<Bungee>, headers: HeaderMap, Query(q): Query<Params>) -> Answer {
    gate(&s, &headers).await?;
    let a = read_ask(&q).ok_or_else(|| {
        error(
            StatusCode::BAD_REQUEST,
            "userOps=tx, originChainId, destinationChainId, inputAmount, userAddress and receiverAddress are required",
        )
    })?;
    let ask = EvmAsk {
        upstream: Upstream::Bungee,
        from_chain: a.from_chain,
        to_chain: a.to_chain,
        from_token: param(&q, "inputToken").unwrap_or_default(),
        to_token: param(&q, "outputToken").unwrap_or_default(),
        amount: a.amount,
        recipient: a.recipient,
    };
    let mut result = json!({"originChainId": a.from_chain, "destinationChainId": a.to_chain,
        "userAddress": format!("{:#x}", a.user), "receiverAddress": format!("{:#x}", a.recipient),
        "input": {"amount": a.amount.to_string()}, "routes": []});
    match aggregator::quote(&s.ctx.tokens, &s.ctx.settle, &ask) {
        Ok(eq) => {
            result["input"] = json!({"token": asset_json(&eq.from, a.from_chain),
                "amount": a.amount.to_string(), "priceInUsd": 1, "valueInUsd": 0});
            result["routes"] = json!([render_route(&ask, &eq, a.user)]);
            let quoted = Quoted {
                from_chain: a.from_chain,
                to_chain: a.to_chain,
                owner: a.user,
                recipient: a.recipient,
                quote: eq.clone(),
            };
            s.routes
                .lock()
                .expect("routes lock")
                .insert(eq.call.quote_id, quoted);
        }
        Err(NoQuote::NoRoute) => {}
        Err(e) => return Err(error(StatusCode::BAD_REQUEST, &e.to_string())),
    }
    ok(result)
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn render_route(ask: &EvmAsk<'_>, q: &EvmQuote, user: Address) -> Value {
    let (from, to) = (
        asset_json(&q.from, ask.from_chain),
        asset_json(&q.to, ask.to_chain),
    );
    let out = q.priced.out.to_string();
    let quote_id = format!("{:#x}", q.call.quote_id);
    let protocol =
        json!({"name": TOOL, "displayName": "Relay devnet bridge (simulator)", "icon": ""});
    json!({
        "userOp": "tx", "quoteId": quote_id, "expiresAt": now_unix() + 60,
        "output": {"token": to, "amount": out, "minAmountOut": out, "priceInUsd": 1, "valueInUsd": 0},
        "estimatedTime": DURATION_SECS, "slippage": 0.5, "suggestedSlippage": 0.5,
        "routeTags": ["MAX_OUTPUT", "SUGGESTED"],
        "routeDetails": {"name": TOOL, "logoURI": "",
            "bridgeDetails": {"protocol": protocol, "amountIn": ask.amount.to_string(),
                              "amountOut": out, "minAmountOut": out},
            "dexDetails": null,
            "feeDetails": {"amount": q.priced.fee.to_string(), "feeInUsd": 0, "token": from}},
        "approval": approval(ask.amount, &q.from, q.call.to, user),
        "txData": {"kind": "evm_tx", "object": {"chainId": ask.from_chain, "to": q.call.to,
            "data": hex0x(&q.call.data), "value": q.call.value.to_string()}},
        "gasFee": {"gasToken": {"chainId": ask.from_chain, "address": "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
                                "symbol": "ETH", "name": "Ether", "decimals": 18, "icon": "", "logoURI": ""},
                   "gasLimit": DEPOSIT_GAS.to_string(), "gasPrice": "1000000000",
                   "estimatedFee": (u128::from(DEPOSIT_GAS) * 1_000_000_000).to_string(), "feeInUsd": 0.2},
        "statusCheck": {"endpoint": format!("/v3/swap/status?quoteId={quote_id}"), "method": "GET",
                        "intervalSec": 5, "maxDurationSec": DURATION_SECS * 20},
    })
}

fn approval(amount: U256, token: &TokenInfo, spender: Address, owner: Address) -> Value {
    if token.is_native() {
        return Value::Null;
    }
    json!({"amount": amount.to_string(), "tokenAddress": format!("{:#x}", token.address),
           "spenderAddress": spender, "userAddress": format!("{owner:#x}")})
}

#[tracing::instrument(skip_all, fields(simulator = "bungee"))]
async fn status(State(s): State<Bungee>, headers: HeaderMap, Query(q): Query<Params>) -> Answer {
    gate(&s, &headers).await?;
    let id: B256 = param(&q, "quoteId")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| error(StatusCode::BAD_REQUEST, "quoteId is required"))?;
    let quoted = s.routes.lock().expect("routes lock").get(&id).cloned();
    let quoted = quoted.ok_or_else(|| error(StatusCode::NOT_FOUND, "Quote not found"))?;
    let transfer = s.ctx.settle.transfers_for(id).pop();
    let (status, origin, dest, src_tx, dest_tx, refund) =
        match transfer.as_ref().map(|t| (t, t.outcome())) {
            None => ("PENDING", "PENDING", "PENDING", None, None, Value::Null),
            Some((t, Outcome::Pending)) => (
                "IN_PROGRESS",
                "COMPLETED",
                "PENDING",
                Some(t.src_tx.clone()),
                None,
                Value::Null,
            ),
            Some((t, Outcome::Delivered(h))) => (
                "COMPLETED",
                "COMPLETED",
                "COMPLETED",
                Some(t.src_tx.clone()),
                Some(h.to_string()),
                Value::Null,
            ),
            Some((
                t,
                Outcome::Failed {
                    refund_tx: Some(r), ..
                },
            )) => (
                "REFUNDED",
                "COMPLETED",
                "REFUNDED",
                Some(t.src_tx.clone()),
                None,
                json!({"chainId": quoted.from_chain, "txHash": r}),
            ),
            Some((
                t,
                Outcome::Failed {
                    refund_tx: None, ..
                },
            )) => (
                "FAILED",
                "COMPLETED",
                "FAILED",
                Some(t.src_tx.clone()),
                None,
                Value::Null,
            ),
        };
    let out = quoted.quote.priced.out.to_string();
    ok(json!({
        "quoteId": format!("{id:#x}"), "userOp": "tx", "status": status, "statusCode": status,
        "origin": {"chainId": quoted.from_chain, "status": origin, "txHash": src_tx,
                   "timestamp": transfer.as_ref().map(|t| t.seen_unix),
                   "userAddress": format!("{:#x}", quoted.owner),
                   "input": [{"token": asset_json(&quoted.quote.from, quoted.from_chain),
                              "amount": quoted.quote.amount.to_string(), "priceInUsd": 1, "valueInUsd": 0}]},
        "destination": {"chainId": quoted.to_chain, "status": dest, "txHash": dest_tx, "timestamp": null,
                        "receiverAddress": format!("{:#x}", quoted.recipient),
                        "output": [{"token": asset_json(&quoted.quote.to, quoted.to_chain),
                                    "amount": out, "minAmountOut": out, "priceInUsd": 1, "valueInUsd": 0}]},
        "routeDetails": {"name": TOOL, "logoURI": ""},
        "refund": refund,
    }))
}
