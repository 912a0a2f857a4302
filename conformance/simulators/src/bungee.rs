//! Bungee (Socket) simulator, following the public Socket/Bungee v2 API
//! (docs.socket.tech, "v2" — quote, build-tx, bridge-status; `API-KEY`
//! header; every answer in a `{success, result}` envelope):
//! `GET /v2/quote?fromChainId&fromTokenAddress&toChainId&toTokenAddress&fromAmount&userAddress&recipient`
//! → `result.routes[{routeId, fromAmount, toAmount, usedBridgeNames, serviceTime, totalGasFeesInUsd}]`;
//! `POST /v2/build-tx {route}` → `result{txTarget, txData, value, chainId, approvalData{minimumApprovalAmount, approvalTokenAddress, allowanceTarget, owner}}`;
//! `GET /v2/bridge-status?transactionHash&fromChainId&toChainId` →
//! `result{sourceTxStatus, destinationTxStatus: PENDING|COMPLETED, destinationTransactionHash}`.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

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
    aggregator::{self, hex0x, EvmAsk, EvmQuote},
    faults::Faults,
    settle::{Settlement, TransferState},
    tokens::TokenBook,
};

/// A quoted route: source chain, user, the quote.
pub type QuotedRoute = (u64, Address, EvmQuote);

/// Shared state of the Bungee simulator.
#[derive(Clone)]
pub struct Bungee {
    /// Settlement engine.
    pub settle: Arc<Settlement>,
    /// Tokens per chain.
    pub tokens: Arc<TokenBook>,
    /// Faults.
    pub faults: Arc<Faults>,
    /// Quoted routes by id, waiting for build-tx.
    pub routes: Arc<Mutex<HashMap<String, QuotedRoute>>>,
}

fn fail(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"success": false, "error": {"message": message}})),
    )
        .into_response()
}

fn ok(result: Value) -> Response {
    Json(json!({"success": true, "result": result})).into_response()
}

fn server_error() -> (StatusCode, Value) {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        json!({"success": false, "error": {"message": "Internal server error"}}),
    )
}

/// The router: `/v2/quote`, `/v2/build-tx`, `/v2/bridge-status`.
pub fn routes(s: Bungee) -> Router {
    Router::new()
        .route("/v2/quote", get(quote))
        .route("/v2/build-tx", post(build_tx))
        .route("/v2/bridge-status", get(bridge_status))
        .with_state(s)
}

fn keyed(headers: &HeaderMap) -> Option<Response> {
    (!headers.contains_key("api-key"))
        .then(|| fail(StatusCode::UNAUTHORIZED, "API-KEY header is required"))
}

async fn quote(
    State(s): State<Bungee>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(r) = s
        .faults
        .intercept(server_error())
        .await
        .or_else(|| keyed(&headers))
    {
        return r;
    }
    let get = |k: &str| q.get(k).map(String::as_str);
    let parsed = (|| {
        let from_chain: u64 = get("fromChainId")?.parse().ok()?;
        let to_chain: u64 = get("toChainId")?.parse().ok()?;
        let amount: U256 = get("fromAmount")?.parse().ok()?;
        let user: Address = get("userAddress")?.parse().ok()?;
        let recipient: Address = get("recipient")
            .and_then(|a| a.parse().ok())
            .unwrap_or(user);
        Some((from_chain, to_chain, amount, user, recipient))
    })();
    let Some((from_chain, to_chain, amount, user, recipient)) = parsed else {
        return fail(
            StatusCode::BAD_REQUEST,
            "fromChainId, toChainId, fromAmount and userAddress are required",
        );
    };
    let ask = EvmAsk {
        from_chain,
        to_chain,
        from_token: get("fromTokenAddress").unwrap_or_default(),
        to_token: get("toTokenAddress").unwrap_or_default(),
        amount,
        recipient,
    };
    let Some(eq) = aggregator::quote(&s.tokens, &s.settle, &ask) else {
        return ok(json!({"routes": [], "fromChainId": from_chain, "toChainId": to_chain}));
    };
    let route_id = format!("{:#x}", eq.id);
    let route = json!({
        "routeId": route_id, "isOnlySwapRoute": false,
        "fromAmount": amount.to_string(), "toAmount": eq.to_amount.to_string(),
        "usedBridgeNames": ["relaydevnet"], "totalUserTx": 1, "serviceTime": 60, "maxServiceTime": 600,
        "totalGasFeesInUsd": 0.2, "recipient": recipient, "sender": user,
    });
    s.routes
        .lock()
        .expect("routes lock")
        .insert(route_id, (from_chain, user, eq));
    ok(json!({"routes": [route], "fromChainId": from_chain, "toChainId": to_chain}))
}

async fn build_tx(State(s): State<Bungee>, headers: HeaderMap, Json(b): Json<Value>) -> Response {
    if let Some(r) = s
        .faults
        .intercept(server_error())
        .await
        .or_else(|| keyed(&headers))
    {
        return r;
    }
    let id = b["route"]["routeId"].as_str().unwrap_or_default();
    let Some((chain, owner, q)) = s.routes.lock().expect("routes lock").get(id).cloned() else {
        return fail(StatusCode::BAD_REQUEST, "unknown route");
    };
    ok(json!({
        "userTxType": "fund-movr", "txType": "eth_sendTransaction",
        "txTarget": q.bridge, "txData": hex0x(&q.data), "value": "0x00", "chainId": chain, "totalUserTx": 1,
        "approvalData": {
            "minimumApprovalAmount": b["route"]["fromAmount"], "approvalTokenAddress": q.from.address,
            "allowanceTarget": q.bridge, "owner": owner,
        },
    }))
}

async fn bridge_status(
    State(s): State<Bungee>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(r) = s
        .faults
        .intercept(server_error())
        .await
        .or_else(|| keyed(&headers))
    {
        return r;
    }
    let Some(tx) = q.get("transactionHash") else {
        return fail(StatusCode::BAD_REQUEST, "transactionHash is required");
    };
    let Some(t) = s.settle.transfer(tx) else {
        return ok(
            json!({"sourceTxStatus": "PENDING", "destinationTxStatus": "PENDING", "sourceTransactionHash": tx}),
        );
    };
    let (dest_status, dest_tx) = match &t.state {
        TransferState::Pending => ("PENDING", Value::Null),
        TransferState::Done(h) => ("COMPLETED", json!(h)),
        TransferState::Refunded(h) => ("REFUNDED", json!(format!("{h:#x}"))),
    };
    ok(json!({
        "sourceTxStatus": "COMPLETED", "sourceTransactionHash": tx,
        "destinationTxStatus": dest_status, "destinationTransactionHash": dest_tx,
        "fromChainId": t.from_chain, "toChainId": t.to,
    }))
}
