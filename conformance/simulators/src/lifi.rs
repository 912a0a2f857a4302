//! LI.FI simulator, following the public LI.FI API v1 (docs.li.fi, API
//! reference "GET /v1/quote" and "GET /v1/status", 2025–2026 shape):
//! `estimate{fromAmount,toAmount,toAmountMin,approvalAddress,feeCosts,gasCosts,executionDuration}`,
//! `transactionRequest{from,to,chainId,data,value,gasLimit,gasPrice}`;
//! status `NOT_FOUND|PENDING|DONE|FAILED` with `substatus`, `sending`,
//! `receiving`. Errors are `{message, code}` with LI.FI's codes
//! (1002 no quote, 1011 invalid input).
//!
//! Settlement is real: the transaction request deposits into the devnet's
//! `BridgeDeposit`, and the payout happens on the destination anvil.

use std::{collections::HashMap, sync::Arc};

use alloy::primitives::{Address, B256, U256};
use axum::{
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
    Json, Router,
};
use serde_json::{json, Value};

use crate::{
    faults::Faults,
    settle::{Settlement, TransferState},
    tokens::TokenBook,
};

use crate::{
    aggregator::{self, EvmAsk, EvmQuote},
    FEE_BPS,
};
/// Gas the deposit costs.
pub const DEPOSIT_GAS: u64 = 150_000;

/// Shared state of the LI.FI simulator.
#[derive(Clone)]
pub struct Lifi {
    /// Settlement engine.
    pub settle: Arc<Settlement>,
    /// Tokens per chain.
    pub tokens: Arc<TokenBook>,
    /// Faults.
    pub faults: Arc<Faults>,
}

/// A LI.FI error answer: `{message, code}` with an HTTP status.
#[derive(Debug)]
pub struct LifiError {
    status: StatusCode,
    code: u32,
    message: String,
}

impl IntoResponse for LifiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({ "message": self.message, "code": self.code })),
        )
            .into_response()
    }
}

fn error(status: StatusCode, code: u32, message: &str) -> LifiError {
    LifiError {
        status,
        code,
        message: message.to_string(),
    }
}

fn no_quote() -> (StatusCode, Value) {
    (
        StatusCode::NOT_FOUND,
        json!({"message": "No available quotes for the requested transfer", "code": 1002}),
    )
}

/// The router: `/v1/quote`, `/v1/status`.
pub fn routes(s: Lifi) -> Router {
    Router::new()
        .route("/v1/quote", get(quote))
        .route("/v1/status", get(status))
        .with_state(s)
}

fn param<'a>(q: &'a HashMap<String, String>, k: &str) -> Result<&'a str, LifiError> {
    q.get(k).map(String::as_str).ok_or_else(|| {
        error(
            StatusCode::BAD_REQUEST,
            1011,
            &format!("Invalid request: {k} is required"),
        )
    })
}

async fn quote(State(s): State<Lifi>, Query(q): Query<HashMap<String, String>>) -> Response {
    if let Some(r) = s.faults.intercept(no_quote()).await {
        return r;
    }
    match build_quote(&s, &q) {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

fn build_quote(s: &Lifi, q: &HashMap<String, String>) -> Result<Value, LifiError> {
    let bad = |m: &str| error(StatusCode::BAD_REQUEST, 1011, m);
    let from_chain: u64 = param(q, "fromChain")?
        .parse()
        .map_err(|_| bad("Invalid fromChain"))?;
    let to_chain: u64 = param(q, "toChain")?
        .parse()
        .map_err(|_| bad("Invalid toChain"))?;
    let amount: U256 = param(q, "fromAmount")?
        .parse()
        .map_err(|_| bad("Invalid fromAmount"))?;
    let sender: Address = param(q, "fromAddress")?
        .parse()
        .map_err(|_| bad("Invalid fromAddress"))?;
    let recipient: Address = match q.get("toAddress") {
        Some(a) => a.parse().map_err(|_| bad("Invalid toAddress"))?,
        None => sender,
    };
    let slippage: f64 = q
        .get("slippage")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.005);
    let ask = EvmAsk {
        from_chain,
        to_chain,
        from_token: param(q, "fromToken")?,
        to_token: param(q, "toToken")?,
        amount,
        recipient,
    };
    let no_quote = || {
        error(
            StatusCode::NOT_FOUND,
            1002,
            "No available quotes for the requested transfer",
        )
    };
    let EvmQuote {
        id,
        from,
        to,
        to_amount,
        fee,
        bridge,
        data,
    } = aggregator::quote(&s.tokens, &s.settle, &ask).ok_or_else(no_quote)?;
    let slip_bps = (slippage.clamp(0.0, 0.5) * 10_000.0) as u64;
    let to_min = to_amount * U256::from(10_000 - slip_bps) / U256::from(10_000u64);
    let token_json = |t: &crate::tokens::TokenInfo, chain: u64| json!({"address": t.address, "chainId": chain, "symbol": t.symbol, "decimals": t.decimals, "name": t.symbol, "priceUSD": "1"});
    Ok(json!({
        "type": "lifi",
        "id": format!("{id:#x}"),
        "tool": "relaydevnet",
        "toolDetails": {"key": "relaydevnet", "name": "relay devnet bridge (simulator)"},
        "action": {
            "fromChainId": from_chain, "toChainId": to_chain,
            "fromToken": token_json(&from, from_chain), "toToken": token_json(&to, to_chain),
            "fromAmount": amount.to_string(), "slippage": slippage,
            "fromAddress": sender, "toAddress": recipient,
        },
        "estimate": {
            "tool": "relaydevnet",
            "fromAmount": amount.to_string(),
            "toAmount": to_amount.to_string(),
            "toAmountMin": to_min.to_string(),
            "approvalAddress": bridge,
            "executionDuration": 30,
            "feeCosts": [{
                "name": "Bridge fee", "description": "simulated bridge fee",
                "percentage": format!("{}", FEE_BPS as f64 / 10_000.0),
                "token": token_json(&from, from_chain), "amount": fee.to_string(), "amountUSD": "0", "included": true,
            }],
            "gasCosts": [{
                "type": "SEND", "price": "1000000000", "estimate": DEPOSIT_GAS.to_string(), "limit": (DEPOSIT_GAS * 4 / 3).to_string(),
                "amount": (DEPOSIT_GAS as u128 * 1_000_000_000).to_string(), "amountUSD": "0",
                "token": {"address": Address::ZERO, "chainId": from_chain, "symbol": "ETH", "decimals": 18, "name": "ETH", "priceUSD": "3000"},
            }],
        },
        "transactionRequest": {
            "from": sender, "to": bridge, "chainId": from_chain,
            "data": aggregator::hex0x(&data), "value": "0x0",
            "gasLimit": format!("{:#x}", DEPOSIT_GAS * 4 / 3), "gasPrice": "0x3b9aca00",
        },
    }))
}

async fn status(State(s): State<Lifi>, Query(q): Query<HashMap<String, String>>) -> Response {
    let invalid = (
        StatusCode::BAD_REQUEST,
        json!({"message": "Invalid request", "code": 1011}),
    );
    if let Some(r) = s.faults.intercept(invalid).await {
        return r;
    }
    let Some(tx) = q.get("txHash").filter(|h| h.parse::<B256>().is_ok()) else {
        return error(
            StatusCode::BAD_REQUEST,
            1011,
            "Invalid request: txHash is required",
        )
        .into_response();
    };
    let Some(t) = s.settle.transfer(tx) else {
        return Json(json!({"status": "NOT_FOUND", "substatus": "NOT_PROCESSABLE_REFUND_NEEDED"}))
            .into_response();
    };
    let sending = json!({"txHash": tx, "amount": t.amount_in.to_string(), "chainId": t.from_chain});
    let body = match t.state {
        TransferState::Pending => {
            json!({"status": "PENDING", "substatus": "WAIT_DESTINATION_TRANSACTION", "sending": sending})
        }
        TransferState::Done(h) => json!({
            "status": "DONE", "substatus": "COMPLETED", "sending": sending, "tool": "relaydevnet",
            "receiving": {"txHash": h, "amount": t.amount_out.to_string(), "chainId": t.to},
        }),
        TransferState::Refunded(h) => json!({
            "status": "DONE", "substatus": "REFUNDED", "sending": sending, "tool": "relaydevnet",
            "receiving": {"txHash": h, "amount": t.amount_out.to_string(), "chainId": t.from_chain},
        }),
    };
    Json(body).into_response()
}
