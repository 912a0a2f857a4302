//! Squid simulator, following the public Squid v2 API (docs.squidrouter.com,
//! "v2" routing API): `POST /v2/route` (header `x-integrator-id`) →
//! `{route: {estimate{fromAmount,toAmount,toAmountMin,feeCosts,gasCosts,estimatedRouteDuration}, transactionRequest{routeType,target,data,value,gasLimit,gasPrice}, quoteId}}`
//! with an `x-request-id` response header; `GET /v2/status?transactionId&requestId&fromChainId&toChainId`
//! → `{id, squidTransactionStatus: success|ongoing|partial_success|needs_gas|not_found, fromChain, toChain{transactionId}}`.
//! Errors: `{message, type}` with the HTTP status.

use std::{collections::HashMap, sync::Arc};

use alloy::primitives::{Address, U256};
use axum::{
    extract::{Query, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use serde_json::{json, Value};

use crate::{
    aggregator::{self, hex0x, EvmAsk},
    faults::Faults,
    settle::{Settlement, TransferState},
    tokens::TokenBook,
};

/// Shared state of the Squid simulator.
#[derive(Clone)]
pub struct Squid {
    /// Settlement engine.
    pub settle: Arc<Settlement>,
    /// Tokens per chain.
    pub tokens: Arc<TokenBook>,
    /// Faults.
    pub faults: Arc<Faults>,
}

fn err(status: StatusCode, kind: &str, message: &str) -> Response {
    (status, Json(json!({"message": message, "type": kind}))).into_response()
}

/// The router: `/v2/route`, `/v2/status`.
pub fn routes(s: Squid) -> Router {
    Router::new()
        .route("/v2/route", post(route))
        .route("/v2/status", get(status))
        .with_state(s)
}

fn field<'a>(b: &'a Value, k: &str) -> Option<&'a str> {
    b.get(k).and_then(Value::as_str)
}

async fn route(State(s): State<Squid>, headers: HeaderMap, Json(b): Json<Value>) -> Response {
    let fault = (
        StatusCode::INTERNAL_SERVER_ERROR,
        json!({"message": "Internal server error", "type": "SERVER_ERROR"}),
    );
    if let Some(r) = s.faults.intercept(fault).await {
        return r;
    }
    if !headers.contains_key("x-integrator-id") {
        return err(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "x-integrator-id header is required",
        );
    }
    let parsed = (|| {
        let from_chain: u64 = field(&b, "fromChain")?.parse().ok()?;
        let to_chain: u64 = field(&b, "toChain")?.parse().ok()?;
        let amount: U256 = field(&b, "fromAmount")?.parse().ok()?;
        let sender: Address = field(&b, "fromAddress")?.parse().ok()?;
        let recipient: Address = field(&b, "toAddress")
            .and_then(|a| a.parse().ok())
            .unwrap_or(sender);
        Some((from_chain, to_chain, amount, recipient))
    })();
    let Some((from_chain, to_chain, amount, recipient)) = parsed else {
        return err(
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            "fromChain, toChain, fromAmount and fromAddress are required",
        );
    };
    let ask = EvmAsk {
        from_chain,
        to_chain,
        from_token: field(&b, "fromToken").unwrap_or_default(),
        to_token: field(&b, "toToken").unwrap_or_default(),
        amount,
        recipient,
    };
    let Some(q) = aggregator::quote(&s.tokens, &s.settle, &ask) else {
        return err(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "No route found for the requested swap",
        );
    };
    let min = q.to_amount * U256::from(9_950u64) / U256::from(10_000u64);
    let body = json!({"route": {
        "quoteId": format!("{:#x}", q.id),
        "estimate": {
            "fromAmount": amount.to_string(),
            "toAmount": q.to_amount.to_string(),
            "toAmountMin": min.to_string(),
            "estimatedRouteDuration": 20,
            "feeCosts": [{"name": "Bridge fee", "description": "simulated bridge fee", "amount": q.fee.to_string(),
                          "token": {"address": q.from.address, "symbol": q.from.symbol, "decimals": q.from.decimals, "chainId": from_chain.to_string()}}],
            "gasCosts": [{"type": "executeCall", "amount": "200000000000000", "gasLimit": "200000",
                          "token": {"symbol": "ETH", "decimals": 18, "chainId": from_chain.to_string()}}],
        },
        "transactionRequest": {
            "routeType": "CALL_BRIDGE", "target": q.bridge, "data": hex0x(&q.data),
            "value": "0", "gasLimit": "200000", "gasPrice": "1000000000",
        },
    }});
    let mut resp = Json(body).into_response();
    if let Ok(v) = format!("{:#x}", q.id).parse() {
        resp.headers_mut().insert("x-request-id", v);
    }
    resp
}

async fn status(State(s): State<Squid>, Query(q): Query<HashMap<String, String>>) -> Response {
    let fault = (
        StatusCode::INTERNAL_SERVER_ERROR,
        json!({"message": "Internal server error", "type": "SERVER_ERROR"}),
    );
    if let Some(r) = s.faults.intercept(fault).await {
        return r;
    }
    let Some(tx) = q.get("transactionId") else {
        return err(
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            "transactionId is required",
        );
    };
    let Some(t) = s.settle.transfer(tx) else {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"id": tx, "squidTransactionStatus": "not_found"})),
        )
            .into_response();
    };
    let (status, to_tx) = match &t.state {
        TransferState::Pending => ("ongoing", Value::Null),
        TransferState::Done(h) => ("success", json!(h)),
        TransferState::Refunded(h) => ("refunded", json!(format!("{h:#x}"))),
    };
    Json(json!({
        "id": tx,
        "status": status,
        "squidTransactionStatus": status,
        "fromChain": {"transactionId": tx, "chainId": t.from_chain.to_string()},
        "toChain": {"transactionId": to_tx, "chainId": t.to},
    }))
    .into_response()
}
