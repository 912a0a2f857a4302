//! Chainflip simulator, following the Chainflip SDK / broker swap API v2
//! (docs.chainflip.io, "Swap API v2"): `GET /v2/quote?srcChain&srcAsset&destChain&destAsset&amount`
//! → `[{type: REGULAR, depositAmount, egressAmount, includedFees[{type,chain,asset,amount}], estimatedDurationSeconds}]`;
//! `POST /v2/swaps {srcChain, srcAsset, destChain, destAsset, destAddress, amount}` opens a
//! deposit channel → `{id, depositAddress, srcChainExpiryBlock, estimatedExpiryTime}`;
//! `GET /v2/swaps/{id}` → `{state: WAITING|RECEIVING|SWAPPING|SENDING|SENT|COMPLETED|FAILED, depositAddress, egress{txRef, amount}}`.
//!
//! Bitcoin is a simulated ledger: `POST /simulator/bitcoin/send {to, amountSats}`
//! "sends BTC" to a deposit address, after which the EVM asset is paid out on
//! the destination anvil. EVM-side deposits go through the devnet's
//! `BridgeDeposit` (the channel answer carries the deposit transaction);
//! per-channel EVM deposit addresses are not simulated. Prices are fixed:
//! 1 BTC = 100 000 USD, stablecoins at par, WBTC 1:1 with BTC.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use alloy::primitives::{Address, B256, U256};
use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{
    aggregator::hex0x,
    faults::Faults,
    settle::{Destination, Settlement, TransferState},
    tokens::TokenBook,
};

/// Sats per stablecoin smallest unit: 1e8 sats / (1e6 units × 100 000).
const UNITS_PER_SAT: u64 = 1_000;

/// A deposit channel.
#[derive(Clone, Debug)]
struct Channel {
    quote_id: B256,
    deposit_address: String,
}

/// Shared state of the Chainflip simulator.
#[derive(Clone)]
pub struct Chainflip {
    /// Settlement engine.
    pub settle: Arc<Settlement>,
    /// Tokens per chain.
    pub tokens: Arc<TokenBook>,
    /// Faults.
    pub faults: Arc<Faults>,
    channels: Arc<Mutex<HashMap<String, Channel>>>,
}

impl Chainflip {
    /// A simulator over `settle`.
    pub fn new(settle: Arc<Settlement>, tokens: Arc<TokenBook>, faults: Arc<Faults>) -> Self {
        Chainflip {
            settle,
            tokens,
            faults,
            channels: Default::default(),
        }
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"message": message}))).into_response()
}

/// The router: `/v2/quote`, `/v2/swaps`, `/v2/swaps/{id}`, `/simulator/bitcoin/send`.
pub fn routes(s: Chainflip) -> Router {
    Router::new()
        .route("/v2/quote", get(quote))
        .route("/v2/swaps", post(open_channel))
        .route("/v2/swaps/{id}", get(swap_status))
        .route("/simulator/bitcoin/send", post(send_btc))
        .with_state(s)
}

/// A swap request, from query or body.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SwapAsk {
    src_chain: String,
    src_asset: String,
    dest_chain: String,
    dest_asset: String,
    amount: String,
    #[serde(default)]
    dest_address: Option<String>,
}

/// EVM chain ids by Chainflip chain name (the devnet maps Ethereum and Arbitrum).
fn evm(chain: &str) -> Option<u64> {
    match chain {
        "Ethereum" => Some(1),
        "Arbitrum" => Some(42161),
        _ => None,
    }
}

/// `(egress amount, network fee)` of `amount` from `src` asset to `dest` asset.
fn convert(amount: U256, src: &str, dest: &str) -> Option<(U256, U256)> {
    let fee = amount * U256::from(crate::FEE_BPS) / U256::from(10_000u64);
    let net = amount - fee;
    let k = U256::from(UNITS_PER_SAT);
    let out = match (src, dest) {
        ("USDC" | "USDT", "BTC") => net / k,
        ("BTC", "USDC" | "USDT") => net * k,
        ("WBTC", "BTC") | ("BTC", "WBTC") => net,
        _ => return None,
    };
    Some((out, fee))
}

async fn quote(State(s): State<Chainflip>, Query(a): Query<SwapAsk>) -> Response {
    if let Some(r) = s.faults.intercept_500("internal error").await {
        return r;
    }
    let amount: U256 = match a.amount.parse() {
        Ok(v) => v,
        Err(_) => return error(StatusCode::BAD_REQUEST, "invalid amount"),
    };
    let Some((egress, fee)) = convert(amount, &a.src_asset, &a.dest_asset) else {
        return error(StatusCode::BAD_REQUEST, "unsupported asset pair");
    };
    Json(json!([{
        "type": "REGULAR",
        "srcAsset": {"chain": a.src_chain, "asset": a.src_asset},
        "destAsset": {"chain": a.dest_chain, "asset": a.dest_asset},
        "depositAmount": amount.to_string(),
        "egressAmount": egress.to_string(),
        "includedFees": [{"type": "NETWORK", "chain": a.src_chain, "asset": a.src_asset, "amount": fee.to_string()}],
        "estimatedDurationSeconds": 600,
    }]))
    .into_response()
}

async fn open_channel(State(s): State<Chainflip>, Json(a): Json<SwapAsk>) -> Response {
    if let Some(r) = s.faults.intercept_500("internal error").await {
        return r;
    }
    let (Ok(amount), Some(dest_address)) = (a.amount.parse::<U256>(), a.dest_address.clone())
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "amount and destAddress are required",
        );
    };
    let Some((egress, _)) = convert(amount, &a.src_asset, &a.dest_asset) else {
        return error(StatusCode::BAD_REQUEST, "unsupported asset pair");
    };
    let (dest, deposit) = match (a.src_chain.as_str(), evm(&a.dest_chain)) {
        ("Bitcoin", Some(chain)) => {
            let Some(token) = s.tokens.resolve(chain, &a.dest_asset) else {
                return error(StatusCode::BAD_REQUEST, "unknown asset");
            };
            let Ok(recipient) = dest_address.parse::<Address>() else {
                return error(StatusCode::BAD_REQUEST, "invalid destAddress");
            };
            (
                Destination::Evm {
                    chain,
                    token: token.address,
                    recipient,
                },
                None,
            )
        }
        (src, None) if a.dest_chain == "Bitcoin" && evm(src).is_some() => {
            let dest = Destination::Ledger {
                node: "bitcoin",
                address: dest_address,
                asset: "BTC".into(),
            };
            (dest, evm(src))
        }
        _ => return error(StatusCode::BAD_REQUEST, "unsupported route"),
    };
    let id = format!(
        "{}-Bitcoin-{}",
        s.channels.lock().expect("channels").len() + 1,
        a.src_asset
    );
    let (quote_id, deposit_address, tx) = match deposit {
        Some(chain) => {
            let Some(token) = s.tokens.resolve(chain, &a.src_asset) else {
                return error(StatusCode::BAD_REQUEST, "unknown asset");
            };
            let Some((qid, bridge, data)) =
                s.settle
                    .quote_deposit(chain, token.address, amount, dest, egress)
            else {
                return error(StatusCode::BAD_REQUEST, "unsupported route");
            };
            (
                qid,
                format!("{bridge:#x}"),
                json!({"to": bridge, "data": hex0x(&data), "value": "0", "chainId": chain}),
            )
        }
        None => {
            let (qid, address) = s.settle.open_ledger_channel("bitcoin", dest, egress);
            (qid, address, Value::Null)
        }
    };
    let ch = Channel {
        quote_id,
        deposit_address: deposit_address.clone(),
    };
    s.channels.lock().expect("channels").insert(id.clone(), ch);
    Json(json!({
        "id": id, "depositAddress": deposit_address, "srcChainExpiryBlock": 1_000_000,
        "estimatedExpiryTime": 86_400, "egressAmount": egress.to_string(), "depositTransaction": tx,
    }))
    .into_response()
}

/// `POST /simulator/bitcoin/send {to, amountSats}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BtcSend {
    to: String,
    amount_sats: u64,
}

async fn send_btc(State(s): State<Chainflip>, Json(b): Json<BtcSend>) -> Response {
    match s
        .settle
        .ledger_send("bitcoin", &b.to, "BTC", b.amount_sats as u128)
        .await
    {
        Ok(tx_id) => Json(json!({"txId": tx_id, "simulated": true})).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

async fn swap_status(State(s): State<Chainflip>, Path(id): Path<String>) -> Response {
    if let Some(r) = s.faults.intercept_500("internal error").await {
        return r;
    }
    let Some(ch) = s.channels.lock().expect("channels").get(&id).cloned() else {
        return error(StatusCode::NOT_FOUND, "swap not found");
    };
    let transfer = s.settle.transfer_for_quote(ch.quote_id);
    let (state, egress) = match transfer.map(|t| (t.state, t.amount_out)) {
        None => ("WAITING", Value::Null),
        Some((TransferState::Pending, _)) => ("SWAPPING", Value::Null),
        Some((TransferState::Done(tx), amount)) => (
            "COMPLETED",
            json!({"txRef": tx, "amount": amount.to_string()}),
        ),
        Some((TransferState::Refunded(_), _)) => ("FAILED", Value::Null),
    };
    Json(json!({"id": id, "state": state, "depositAddress": ch.deposit_address, "egress": egress}))
        .into_response()
}
