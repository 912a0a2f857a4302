//! Devnet control endpoints every simulator serves. They are simulator-only
//! — no upstream has them — and never subject to fault injection:
//!
//! - `GET /simulator` → `{simulator: true, upstream, follows}`;
//! - `GET /simulator/ledger?node&address&asset` → a simulated ledger balance
//!   and the address's simulated transactions;
//! - `POST /simulator/ledger/send {node, from?, to, asset, amount}` → pay from
//!   a user's own simulated wallet (to a deposit address: the transfer runs);
//! - `POST /simulator/ledger/submit {rawTx}` → submit a simulated raw
//!   transaction a simulator handed out (see [`SimulatedPayment`]);
//! - `POST /simulator/bitcoin/send {to, amountSats, from?}` → "send BTC" on the
//!   simulated bitcoin ledger (to a Chainflip deposit address: the swap runs);
//! - `POST /simulator/mint {chain, token, to, amount}` → mint devnet test
//!   tokens (USDC, USDT, WBTC — symbol or address) to any address.
//! - `POST /simulator/price {chain, pair, answer}` → DEVNET ONLY: move a
//!   devnet Chainlink-style feed (`ETH/USD`, `BTC/USD`, `USDC/USD`, …) to
//!   `answer`, an integer string in the feed's decimals (8): a new round
//!   sent by the deployer (`updateAnswer`).
//! - `GET`/`POST /simulator/faults` → see [`crate::faults`].
//! - `GET /simulator/requests` → see [`crate::requests`].

use alloy::primitives::{Address, U256};
use axum::{
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use serde::Deserialize;
use serde_json::json;

use crate::{
    error::SettleError,
    http::{param, Params},
    ledger::{Node, SimulatedPayment},
    SimContext, Upstream,
};

#[derive(Clone, Debug)]
struct Control {
    ctx: SimContext,
    upstream: Upstream,
}

fn bad(message: impl std::fmt::Display) -> Response {
    let body = json!({"simulator": true, "message": message.to_string()});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

fn sent(r: Result<String, SettleError>) -> Response {
    match r {
        Ok(tx) => Json(json!({"simulated": true, "txId": tx})).into_response(),
        Err(e) => bad(e),
    }
}

async fn info(State(c): State<Control>) -> Response {
    Json(json!({"simulator": true, "upstream": c.upstream.name(), "follows": c.upstream.follows()}))
        .into_response()
}

async fn ledger(State(c): State<Control>, Query(q): Query<Params>) -> Response {
    let (Some(node), Some(address)) = (
        param(&q, "node").and_then(Node::parse),
        param(&q, "address"),
    ) else {
        return bad("node (bitcoin, solana, tron, stellar) and address are required");
    };
    let asset = param(&q, "asset")
        .or_else(|| node.assets().first().map(|a| a.symbol))
        .unwrap_or_default();
    let l = c.ctx.settle.ledger();
    Json(json!({
        "simulated": true, "node": node, "address": address, "asset": asset.to_ascii_uppercase(),
        "balance": l.balance(node, address, asset).to_string(),
        "transactions": l.history(node, address),
    }))
    .into_response()
}

/// `POST /simulator/ledger/send`.
#[derive(Debug, Deserialize)]
struct Send {
    node: String,
    #[serde(default)]
    from: Option<String>,
    to: String,
    asset: String,
    amount: String,
}

async fn ledger_send(State(c): State<Control>, Json(b): Json<Send>) -> Response {
    let (Some(node), Ok(amount)) = (Node::parse(&b.node), b.amount.parse::<u128>()) else {
        return bad("node must be bitcoin, solana, tron or stellar and amount a decimal integer");
    };
    sent(
        c.ctx
            .settle
            .ledger_send(node, b.from.as_deref(), &b.to, &b.asset, amount),
    )
}

/// `POST /simulator/ledger/submit`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Submit {
    raw_tx: String,
}

async fn ledger_submit(State(c): State<Control>, Json(b): Json<Submit>) -> Response {
    let Some(p) = SimulatedPayment::decode(&b.raw_tx) else {
        return bad("rawTx is not a simulated transaction a simulator handed out");
    };
    let Ok(amount) = p.amount.parse::<u128>() else {
        return bad("rawTx carries a bad amount");
    };
    sent(
        c.ctx
            .settle
            .ledger_send(p.node, Some(&p.from), &p.to, &p.asset, amount),
    )
}

/// `POST /simulator/bitcoin/send`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BtcSend {
    to: String,
    amount_sats: u64,
    #[serde(default)]
    from: Option<String>,
}

async fn bitcoin_send(State(c): State<Control>, Json(b): Json<BtcSend>) -> Response {
    let r = c.ctx.settle.ledger_send(
        Node::Bitcoin,
        b.from.as_deref(),
        &b.to,
        "BTC",
        u128::from(b.amount_sats),
    );
    sent(r)
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
    let token = c
        .ctx
        .tokens
        .resolve(b.chain, &b.token)
        .filter(|t| !t.is_native());
    let (Some(t), Ok(amount)) = (token, b.amount.parse::<U256>()) else {
        return bad("unknown chain or token (USDC, USDT, WBTC), or a bad amount");
    };
    match c.ctx.settle.mint(b.chain, t.address, b.to, amount).await {
        Ok(tx) => {
            Json(json!({"txHash": tx, "token": t.address, "symbol": t.symbol})).into_response()
        }
        Err(e) => bad(e),
    }
}

/// `POST /simulator/price`.
#[derive(Debug, Deserialize)]
struct Price {
    chain: u64,
    pair: String,
    answer: String,
}

async fn price(State(c): State<Control>, Json(b): Json<Price>) -> Response {
    let Ok(answer) = b.answer.trim().parse::<alloy::primitives::I256>() else {
        return bad("answer must be an integer string in the feed's decimals (8: \"300000000000\" is 3000 USD)");
    };
    match c.ctx.feeds.set(b.chain, &b.pair, answer).await {
        Ok((feed, tx)) => Json(json!({
            "simulated": true, "txHash": tx, "chain": b.chain, "pair": feed.pair,
            "feed": feed.address, "decimals": feed.decimals, "answer": answer.to_string(),
        }))
        .into_response(),
        Err(e) => bad(format!(
            "{e} (pairs: ETH/USD, BTC/USD, USDC/USD, USDT/USD and the chain's native pair)"
        )),
    }
}

/// The control routes of the simulator for `upstream`.
pub fn routes(ctx: SimContext, upstream: Upstream) -> Router {
    Router::new()
        .route("/simulator", get(info))
        .route("/simulator/ledger", get(ledger))
        .route("/simulator/ledger/send", post(ledger_send))
        .route("/simulator/ledger/submit", post(ledger_submit))
        .route("/simulator/bitcoin/send", post(bitcoin_send))
        .route("/simulator/mint", post(mint))
        .route("/simulator/price", post(price))
        .with_state(Control { ctx, upstream })
}
