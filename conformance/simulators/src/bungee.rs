//! Bungee (Socket) **simulator**, following the public Socket API v2, the
//! single-transaction bridging flow (docs.socket.tech/socket-api/v2 and the
//! models of SocketDotTech/socket-v2-sdk: `QuoteOutputDTO`, `Route`, `UserTx`,
//! `SingleTxResponse`, `ApprovalData`, `BridgeStatusResponse`, `TxStatus`).
//! Every call needs the `API-KEY` header; every answer is a `{success,
//! result}` envelope:
//!
//! - `GET /v2/quote?fromChainId&fromTokenAddress&toChainId&toTokenAddress&fromAmount&userAddress[&recipient&uniqueRoutesPerBridge&sort&singleTxOnly]`
//!   → `result{routes[{routeId, isOnlySwapRoute, fromAmount, toAmount,
//!   usedBridgeNames, totalUserTx, totalGasFeesInUsd, recipient, sender,
//!   userTxs[{userTxType, txType, chainId, toAmount, steps[{protocol,
//!   protocolFees, minAmountOut, …}], gasFees, approvalData}], serviceTime,
//!   maxServiceTime, integratorFee}], fromChainId, fromAsset, toChainId,
//!   toAsset, bridgeRouteErrors}`;
//! - `POST /v2/build-tx {route}` → `result{userTxType, txType, txTarget,
//!   chainId, txData, value, totalUserTx, approvalData{minimumApprovalAmount,
//!   approvalTokenAddress, allowanceTarget, owner}}`;
//! - `GET /v2/bridge-status?transactionHash&fromChainId&toChainId[&bridgeName]`
//!   → `result{sourceTx, sourceTxStatus, destinationTransactionHash,
//!   destinationTxStatus: PENDING|COMPLETED|FAILED, fromChainId, toChainId}`;
//! - errors: `{success: false, statusCode, message}` (the public docs show no
//!   error body; this is the NestJS shape Socket's gateway answers with).
//!
//! Simulator specifics: the bridge is `devnet-simulator`, `txTarget` and
//! `allowanceTarget` are the devnet's `BridgeDeposit`, and a transfer the
//! simulator failed reports `destinationTxStatus: FAILED` once refunded.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use alloy::primitives::{Address, U256};
use axum::{
    extract::{Query, State},
    http::{HeaderMap, StatusCode},
    response::IntoResponse,
    routing::{get, post},
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
        401 => "API-KEY header is missing or invalid",
        404 => "Not Found",
        429 => "ThrottlerException: Too Many Requests",
        _ => "Internal server error",
    };
    json!({"success": false, "statusCode": status.as_u16(), "message": message})
}

/// Socket's error answers and truncated body.
pub const SHAPE: ErrorShape = ErrorShape {
    body: error_body,
    garbage: r#"{"success":true,"result":{"routes":[{"routeId":"0x","fromAmount":"1000000","toAmount":"99"#,
};

fn error(status: StatusCode, message: &str) -> Early {
    let body = json!({"success": false, "statusCode": status.as_u16(), "message": message});
    (status, Json(body)).into_response().into()
}

fn ok(result: Value) -> Answer {
    Ok(Json(json!({"success": true, "result": result})).into_response())
}

/// A quoted route waiting for build-tx.
#[derive(Clone, Debug)]
struct Quoted {
    from_chain: u64,
    owner: Address,
    quote: EvmQuote,
}

#[derive(Clone, Debug)]
struct Bungee {
    ctx: SimContext,
    routes: Arc<Mutex<HashMap<String, Quoted>>>,
}

/// The router: `GET /v2/quote`, `POST /v2/build-tx`, `GET /v2/bridge-status`.
pub fn routes(ctx: SimContext) -> Router {
    let s = Bungee {
        ctx,
        routes: Arc::default(),
    };
    Router::new()
        .route("/v2/quote", get(quote))
        .route("/v2/build-tx", post(build_tx))
        .route("/v2/bridge-status", get(bridge_status))
        .with_state(s)
}

/// Faults first, then the `API-KEY` check.
async fn gate(s: &Bungee, headers: &HeaderMap) -> Answer<()> {
    s.ctx.faults.gate(&SHAPE).await?;
    match headers.get("api-key") {
        Some(v) if !v.is_empty() => Ok(()),
        _ => Err(SHAPE.respond(StatusCode::UNAUTHORIZED).into()),
    }
}

fn asset_json(t: &TokenInfo, chain: u64) -> Value {
    json!({"chainId": chain, "address": t.address, "symbol": t.symbol, "name": t.name,
           "decimals": t.decimals, "icon": "", "logoURI": ""})
}

#[tracing::instrument(skip_all, fields(simulator = "bungee"))]
async fn quote(State(s): State<Bungee>, headers: HeaderMap, Query(q): Query<Params>) -> Answer {
    gate(&s, &headers).await?;
    let num = |k: &str| param(&q, k).and_then(|v| v.parse::<u64>().ok());
    let parsed = (|| {
        let amount: U256 = param(&q, "fromAmount")?.parse().ok()?;
        let user: Address = param(&q, "userAddress")?.parse().ok()?;
        let recipient = param(&q, "recipient")
            .and_then(|a| a.parse().ok())
            .unwrap_or(user);
        Some((
            num("fromChainId")?,
            num("toChainId")?,
            amount,
            user,
            recipient,
        ))
    })();
    let (from_chain, to_chain, amount, user, recipient) = parsed.ok_or_else(|| {
        error(
            StatusCode::BAD_REQUEST,
            "fromChainId, toChainId, fromAmount and userAddress are required",
        )
    })?;
    let ask = EvmAsk {
        upstream: Upstream::Bungee,
        from_chain,
        to_chain,
        from_token: param(&q, "fromTokenAddress").unwrap_or_default(),
        to_token: param(&q, "toTokenAddress").unwrap_or_default(),
        amount,
        recipient,
    };
    let mut result = json!({"routes": [], "fromChainId": from_chain, "toChainId": to_chain, "bridgeRouteErrors": {}});
    match aggregator::quote(&s.ctx.tokens, &s.ctx.settle, &ask) {
        Ok(eq) => {
            result["fromAsset"] = asset_json(&eq.from, from_chain);
            result["toAsset"] = asset_json(&eq.to, to_chain);
            result["routes"] = json!([render_route(&ask, &eq, user)]);
            let quoted = Quoted {
                from_chain,
                owner: user,
                quote: eq.clone(),
            };
            let id = format!("{:#x}", eq.call.quote_id);
            s.routes.lock().expect("routes lock").insert(id, quoted);
        }
        Err(NoQuote::NoRoute) => {
            result["bridgeRouteErrors"] = json!({TOOL: {"status": "ASSET_NOT_SUPPORTED"}});
        }
        Err(e) => return Err(error(StatusCode::BAD_REQUEST, &e.to_string())),
    }
    ok(result)
}

fn render_route(ask: &EvmAsk<'_>, q: &EvmQuote, user: Address) -> Value {
    let (from, to) = (
        asset_json(&q.from, ask.from_chain),
        asset_json(&q.to, ask.to_chain),
    );
    let protocol = json!({"name": TOOL, "displayName": "Relay devnet bridge (simulator)", "icon": "", "securityScore": 0});
    let gas = json!({"gasAmount": (u128::from(DEPOSIT_GAS) * 1_000_000_000).to_string(), "gasLimit": DEPOSIT_GAS,
                     "asset": {"chainId": ask.from_chain, "address": Address::ZERO, "symbol": "ETH", "decimals": 18},
                     "feesInUsd": 0.2});
    let step = json!({
        "type": "bridge", "protocol": protocol, "fromChainId": ask.from_chain, "fromAsset": from,
        "fromAmount": ask.amount.to_string(), "toChainId": ask.to_chain, "toAsset": to,
        "toAmount": q.priced.out.to_string(), "minAmountOut": q.priced.out.to_string(),
        "protocolFees": {"amount": q.priced.fee.to_string(), "feesInUsd": 0, "asset": from},
        "gasFees": gas, "serviceTime": DURATION_SECS, "maxServiceTime": DURATION_SECS * 20,
    });
    json!({
        "routeId": format!("{:#x}", q.call.quote_id), "isOnlySwapRoute": false,
        "fromAmount": ask.amount.to_string(), "toAmount": q.priced.out.to_string(),
        "usedBridgeNames": [TOOL], "totalUserTx": 1, "totalGasFeesInUsd": 0.2,
        "recipient": ask.recipient, "sender": user,
        "userTxs": [{
            "userTxType": "fund-movr", "txType": "eth_sendTransaction", "chainId": ask.from_chain,
            "toAmount": q.priced.out.to_string(), "toAsset": to, "stepCount": 1, "routePath": "0-0",
            "sender": user, "recipient": ask.recipient, "userTxIndex": 0, "steps": [step], "gasFees": gas,
            "serviceTime": DURATION_SECS, "maxServiceTime": DURATION_SECS * 20,
            "approvalData": approval(ask.amount, &q.from, q.call.to, user),
        }],
        "serviceTime": DURATION_SECS, "maxServiceTime": DURATION_SECS * 20,
        "inputValueInUsd": 0, "outputValueInUsd": 0,
        "integratorFee": {"amount": "0", "asset": from},
        "chainGasBalances": {}, "minimumGasBalances": {},
    })
}

fn approval(amount: U256, token: &TokenInfo, spender: Address, owner: Address) -> Value {
    if token.is_native() {
        return Value::Null;
    }
    json!({"minimumApprovalAmount": amount.to_string(), "approvalTokenAddress": token.address,
           "allowanceTarget": spender, "owner": owner})
}

#[tracing::instrument(skip_all, fields(simulator = "bungee"))]
async fn build_tx(State(s): State<Bungee>, headers: HeaderMap, body: axum::body::Bytes) -> Answer {
    gate(&s, &headers).await?;
    let b: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = b["route"]["routeId"].as_str().unwrap_or_default();
    let quoted = s.routes.lock().expect("routes lock").get(id).cloned();
    let quoted = quoted.ok_or_else(|| {
        error(
            StatusCode::BAD_REQUEST,
            "route.routeId is unknown or missing",
        )
    })?;
    let Quoted {
        from_chain,
        owner,
        quote,
    } = quoted;
    ok(json!({
        "userTxType": "fund-movr", "txType": "eth_sendTransaction",
        "txTarget": quote.call.to, "chainId": from_chain, "txData": hex0x(&quote.call.data),
        "value": format!("{:#x}", quote.call.value), "totalUserTx": 1,
        "approvalData": approval(quote.amount, &quote.from, quote.call.to, owner),
    }))
}

#[tracing::instrument(skip_all, fields(simulator = "bungee"))]
async fn bridge_status(
    State(s): State<Bungee>,
    headers: HeaderMap,
    Query(q): Query<Params>,
) -> Answer {
    gate(&s, &headers).await?;
    let tx = param(&q, "transactionHash")
        .ok_or_else(|| error(StatusCode::BAD_REQUEST, "transactionHash is required"))?;
    let num = |k: &str| param(&q, k).and_then(|v| v.parse::<u64>().ok());
    let Some(t) = s.ctx.settle.transfer(tx) else {
        return ok(
            json!({"sourceTx": tx, "sourceTxStatus": "PENDING", "destinationTxStatus": "PENDING",
                         "fromChainId": num("fromChainId"), "toChainId": num("toChainId")}),
        );
    };
    let (dest_status, dest_tx) = match t.outcome() {
        Outcome::Pending => ("PENDING", None),
        Outcome::Delivered(h) => ("COMPLETED", Some(h)),
        Outcome::Failed { .. } => ("FAILED", None),
    };
    let mut result = json!({
        "sourceTx": t.src_tx, "sourceTxStatus": "COMPLETED",
        "destinationTransactionHash": dest_tx, "destinationTxStatus": dest_status,
        "fromChainId": t.from.parse::<u64>().ok(),
        "toChainId": t.dest.as_ref().and_then(|d| d.label().parse::<u64>().ok()),
    });
    if let Outcome::Failed { refund_tx, reason } = t.outcome() {
        result["refund"] = json!({"txHash": refund_tx, "reason": reason});
    }
    ok(result)
}
