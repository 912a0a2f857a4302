//! Allbridge Core simulator, following the Allbridge Core REST API
//! (allbridge-core-rest-api, the REST front of the Allbridge Core SDK v3):
//! `GET /bridge/quote?amount&sourceChain&sourceToken&destinationChain&destinationToken`
//! → `{amountInt, sourceTokenAddress, options: [{messenger, paymentMethods: [{feePaymentMethod: WITH_NATIVE_CURRENCY|WITH_STABLECOIN, fee, estimatedAmount{min,max}}]}]}`;
//! `GET /raw/bridge?amount&sender&recipient&sourceChain&sourceToken&destinationChain&destinationToken&messenger&feePaymentMethod`
//! → a raw EVM transaction `{from, to, value, data}`;
//! `GET /transfer/status?chain&txId` → `{txId, sourceChainSymbol, destinationChainSymbol, sendAmount, receiveAmount, receive{txId}}`.
//! Chains use Allbridge's symbols (ETH, BAS, ARB, OPT, POL, BSC, AVA; SOL, TRX, SRB).
//! Destinations stellar (SRB), solana (SOL) and tron (TRX) are simulated
//! ledgers; solana and tron → EVM pay a simulated deposit address (`POST
//! /simulator/ledger/send`); stellar → EVM is unavailable, as on the live mesh.

use std::{collections::HashMap, sync::Arc};

use alloy::primitives::{Address, U256};
use axum::{
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
    Json, Router,
};
use serde_json::{json, Value};

use crate::{
    aggregator::hex0x,
    faults::Faults,
    settle::{Destination, Settlement, TransferState},
    tokens::TokenBook,
};

/// Shared state of the Allbridge simulator.
#[derive(Clone)]
pub struct Allbridge {
    /// Settlement engine.
    pub settle: Arc<Settlement>,
    /// Tokens per chain.
    pub tokens: Arc<TokenBook>,
    /// Faults.
    pub faults: Arc<Faults>,
}

/// Allbridge chain symbol → EVM chain id.
fn evm_chain(symbol: &str) -> Option<u64> {
    Some(match symbol {
        "ETH" => 1,
        "BAS" => 8453,
        "ARB" => 42161,
        "OPT" => 10,
        "POL" => 137,
        "BSC" => 56,
        "AVA" => 43114,
        _ => return None,
    })
}

/// Allbridge chain symbol → simulated ledger.
fn ledger_node(symbol: &str) -> Option<&'static str> {
    Some(match symbol {
        "SOL" => "solana",
        "TRX" => "tron",
        "SRB" => "stellar",
        _ => return None,
    })
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"message": message}))).into_response()
}

/// An error answer, boxed: responses are large.
type Refusal = Box<Response>;

fn refuse(status: StatusCode, message: &str) -> Refusal {
    Box::new(error(status, message))
}

/// The router: `/bridge/quote`, `/raw/bridge`, `/transfer/status`.
pub fn routes(s: Allbridge) -> Router {
    Router::new()
        .route("/bridge/quote", get(quote))
        .route("/raw/bridge", get(raw_bridge))
        .route("/transfer/status", get(status))
        .with_state(s)
}

/// One priced transfer between an EVM chain and a simulated ledger.
struct Leg {
    /// The EVM side's chain and token.
    evm_chain: u64,
    token: crate::tokens::TokenInfo,
    /// The ledger side.
    node: &'static str,
    asset: String,
    /// Whether funds flow from the ledger to the EVM chain.
    reverse: bool,
    amount: U256,
    receive: U256,
    fee: U256,
}

fn leg(s: &Allbridge, q: &HashMap<String, String>) -> Result<Leg, Refusal> {
    let get = |k: &str| q.get(k).map(String::as_str).unwrap_or_default();
    let (src, dst) = (get("sourceChain"), get("destinationChain"));
    if src == "SRB" {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "Unsupported source chain: transfers from Stellar are not available",
        ));
    }
    let (evm_symbol, ledger_symbol, evm_token, reverse) = match (ledger_node(src), ledger_node(dst))
    {
        (None, Some(_)) => (src, dst, get("sourceToken"), false),
        (Some(_), None) => (dst, src, get("destinationToken"), true),
        _ => {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "Invalid sourceChain or destinationChain",
            ))
        }
    };
    let evm_chain =
        evm_chain(evm_symbol).ok_or_else(|| refuse(StatusCode::BAD_REQUEST, "Invalid chain"))?;
    let node = ledger_node(ledger_symbol).unwrap_or("solana");
    let token = s
        .tokens
        .resolve(evm_chain, evm_token)
        .ok_or_else(|| refuse(StatusCode::BAD_REQUEST, "Invalid token"))?;
    let asset = if reverse {
        get("sourceToken")
    } else {
        get("destinationToken")
    }
    .to_ascii_uppercase();
    if !matches!(asset.as_str(), "USDC" | "USDT") || asset != token.symbol {
        return Err(refuse(StatusCode::BAD_REQUEST, "Invalid token"));
    }
    let amount: U256 = get("amount")
        .parse()
        .ok()
        .filter(|a: &U256| !a.is_zero())
        .ok_or_else(|| refuse(StatusCode::BAD_REQUEST, "Invalid amount"))?;
    // The fee is paid in the stablecoin (feePaymentMethod WITH_STABLECOIN).
    let (receive, fee) = crate::price(amount, token.decimals, token.decimals);
    Ok(Leg {
        evm_chain,
        token,
        node,
        asset,
        reverse,
        amount,
        receive,
        fee,
    })
}

async fn quote(State(s): State<Allbridge>, Query(q): Query<HashMap<String, String>>) -> Response {
    if let Some(r) = s.faults.intercept_500("Internal server error").await {
        return r;
    }
    let l = match leg(&s, &q) {
        Ok(l) => l,
        Err(r) => return *r,
    };
    let amounts = json!({"min": l.receive.to_string(), "max": l.receive.to_string()});
    Json(json!({
        "amountInt": l.amount.to_string(),
        "sourceTokenAddress": if l.reverse { json!(null) } else { json!(l.token.address) },
        "ledger": l.node,
        "options": [{"messenger": "ALLBRIDGE", "paymentMethods": [
            {"feePaymentMethod": "WITH_STABLECOIN", "fee": l.fee.to_string(), "estimatedAmount": amounts},
        ]}],
    }))
    .into_response()
}

async fn raw_bridge(
    State(s): State<Allbridge>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(r) = s.faults.intercept_500("Internal server error").await {
        return r;
    }
    let l = match leg(&s, &q) {
        Ok(l) => l,
        Err(r) => return *r,
    };
    let recipient = q.get("recipient").filter(|r| !r.is_empty());
    let sender = q.get("sender").filter(|r| !r.is_empty());
    let (Some(sender), Some(recipient)) = (sender, recipient) else {
        return error(StatusCode::BAD_REQUEST, "sender and recipient are required");
    };
    if l.reverse {
        // Ledger → EVM: the user pays a simulated deposit address from their
        // own (simulated) wallet with POST /simulator/ledger/send.
        let Ok(to) = recipient.parse::<Address>() else {
            return error(StatusCode::BAD_REQUEST, "recipient must be an EVM address");
        };
        let dest = Destination::Evm {
            chain: l.evm_chain,
            token: l.token.address,
            recipient: to,
        };
        let (_, address) = s.settle.open_ledger_channel(l.node, dest, l.receive);
        return Json(json!({
            "simulated": true, "node": l.node, "from": sender, "depositAddress": address,
            "asset": l.asset, "amount": l.amount.to_string(),
        }))
        .into_response();
    }
    let Ok(sender) = sender.parse::<Address>() else {
        return error(StatusCode::BAD_REQUEST, "sender must be an EVM address");
    };
    let dest = Destination::Ledger {
        node: l.node,
        address: recipient.clone(),
        asset: l.asset.clone(),
    };
    let Some((_, bridge, data)) =
        s.settle
            .quote_deposit(l.evm_chain, l.token.address, l.amount, dest, l.receive)
    else {
        return error(StatusCode::BAD_REQUEST, "Unsupported route");
    };
    Json(json!({"from": sender, "to": bridge, "value": "0", "data": hex0x(&data)})).into_response()
}

async fn status(State(s): State<Allbridge>, Query(q): Query<HashMap<String, String>>) -> Response {
    if let Some(r) = s.faults.intercept_500("Internal server error").await {
        return r;
    }
    let tx = q.get("txId").map(String::as_str).unwrap_or_default();
    let Some(t) = s.settle.transfer(tx) else {
        return error(StatusCode::NOT_FOUND, "Transfer not found");
    };
    let receive: Value = match &t.state {
        TransferState::Done(id) => json!({"txId": id}),
        _ => Value::Null,
    };
    Json(json!({
        "txId": tx,
        "sourceChainSymbol": q.get("chain"),
        "destinationChainSymbol": t.to,
        "sendAmount": t.amount_in.to_string(),
        "receiveAmount": t.amount_out.to_string(),
        "refunded": matches!(t.state, TransferState::Refunded(_)),
        "receive": receive,
    }))
    .into_response()
}
