//! Devnet control endpoints every simulator serves (simulator-only, not
//! part of any upstream's API):
//!
//! - `GET /simulator/ledger?node&address&asset`: a simulated ledger balance
//!   and history;
//! - `POST /simulator/ledger/send {node, to, asset, amount}`: pay from a
//!   user's own simulated wallet (to a deposit address: the transfer
//!   executes);
//! - `POST /simulator/mint {chain, token, to, amount}`: mint devnet test
//!   tokens (USDC, USDT, WBTC — symbol or address) to any address.

use std::{collections::HashMap, sync::Arc};

use alloy::primitives::{Address, U256};
use axum::{
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{settle::Settlement, tokens::TokenBook};

/// What the control endpoints reach.
#[derive(Clone)]
pub struct Control {
    /// Settlement (ledgers, chains).
    pub settle: Arc<Settlement>,
    /// Tokens per chain.
    pub tokens: Arc<TokenBook>,
}

async fn ledger(State(c): State<Control>, Query(q): Query<HashMap<String, String>>) -> Json<Value> {
    let get = |k: &str| q.get(k).map(String::as_str).unwrap_or_default();
    let l = &c.settle.ledger;
    Json(json!({
        "simulated": true,
        "node": get("node"),
        "address": get("address"),
        "asset": get("asset"),
        "balance": l.balance(get("node"), get("address"), get("asset")).to_string(),
        "history": l.history(),
    }))
}

/// `POST /simulator/ledger/send`.
#[derive(Debug, Deserialize)]
struct Send {
    node: String,
    to: String,
    asset: String,
    amount: String,
}

fn bad(message: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"message": message}))).into_response()
}

async fn ledger_send(State(c): State<Control>, Json(b): Json<Send>) -> Response {
    let Ok(amount) = b.amount.parse::<u128>() else {
        return bad("amount must be a decimal integer");
    };
    match c
        .settle
        .ledger_send(&b.node, &b.to, &b.asset.to_ascii_uppercase(), amount)
        .await
    {
        Ok(tx) => Json(json!({"txId": tx, "simulated": true})).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"message": e})),
        )
            .into_response(),
    }
}

/// `POST /simulator/mint`.
#[derive(Debug, Deserialize)]
struct Mint {
    chain: u64,
    token: String,
    to: Address,
    amount: String,
}

async fn mint(State(c): State<Control>, Json(b): Json<Mint>) -> Response {
    let (Some(t), Ok(amount)) = (
        c.tokens.resolve(b.chain, &b.token),
        b.amount.parse::<U256>(),
    ) else {
        return bad("unknown chain or token, or a bad amount");
    };
    match c.settle.mint(b.chain, t.address, b.to, amount).await {
        Ok(tx) => {
            Json(json!({"txHash": tx, "token": t.address, "symbol": t.symbol})).into_response()
        }
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"message": e})),
        )
            .into_response(),
    }
}

/// The control routes.
pub fn routes(c: Control) -> Router {
    Router::new()
        .route("/simulator/ledger", get(ledger))
        .route("/simulator/ledger/send", post(ledger_send))
        .route("/simulator/mint", post(mint))
        .with_state(c)
}
