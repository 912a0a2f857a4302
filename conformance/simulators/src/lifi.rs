//! LI.FI **simulator**, following the public LI.FI API v1 (docs.li.fi, API
//! reference "Get a quote for a token transfer" and "Check the status of a
//! cross-chain transfer", OpenAPI 1.0.0; status enums as in `@lifi/types`
//! 17.x):
//!
//! - `GET /v1/quote?fromChain&toChain&fromToken&toToken&fromAmount&fromAddress[&toAddress&slippage]`
//!   → a `lifi` step: `{id, type, tool, toolDetails, action{…}, estimate{fromAmount,
//!   toAmount, toAmountMin, approvalAddress, executionDuration, feeCosts[], gasCosts[]},
//!   transactionRequest{from, to, chainId, data, value, gasLimit, gasPrice}}`;
//!   `slippage` is a fraction (default 0.005);
//! - `GET /v1/status?txHash[&fromChain&toChain&bridge]` → `{status:
//!   NOT_FOUND|PENDING|DONE|FAILED, substatus, substatusMessage, sending{txHash,
//!   txLink, amount, chainId, token, gas…}, receiving{…}, tool, feeCosts,
//!   fromAddress, toAddress, lifiExplorerLink, metadata[, transactionId]}`;
//! - errors: `{message, code}` with LI.FI's codes (1002 no quote, 1005 rate
//!   limit, 1006 server error, 1011 validation).
//!
//! Same-chain requests (`fromChain == toChain`, different tokens) are
//! quoted as swaps: the same step shape with one `includedSteps` entry of
//! type `swap` (cross-chain quotes carry one of type `cross`).
//!
//! Simulator specifics: the tool is `devnet-simulator`, the approval address
//! and transaction target are the devnet's `BridgeDeposit`. A transfer the
//! simulator failed (accept-then-fail, unmatched deposit, failed payout) and
//! refunded reports what LI.FI reports for a refund, `DONE` / `REFUNDED`
//! with `receiving` = the refund on the source chain (`@lifi/types`
//! `SubstatusDone`: "The transfer was not successful but it has been
//! refunded"); one neither paid out nor refunded reports `FAILED` /
//! `UNKNOWN_ERROR`.
//!
//! Every answer is valid against LI.FI's published OpenAPI (`Step`,
//! `StatusResponse`, `QuoteNotFound`; recorded in
//! `rails/lifi/tests/fixtures/vendor/schema.json`) and against the types of
//! `@lifi/types` (`LiFiStep`, `StatusResponse`) where the two disagree: a
//! pending `receiving` is `PendingReceivingInfo` there and a full
//! `TransactionInfo` in the OpenAPI, so it carries both (empty `txHash`,
//! amount "0"); `NOT_FOUND` is `{status}` there and needs `sending` and
//! `tool` in the OpenAPI; the types' `UNKNOWN_FAILED_ERROR` is not in the
//! OpenAPI enum, so a failure without refund is `UNKNOWN_ERROR` (in both,
//! and listed under FAILED by LI.FI's status guide). The 404 of a quote is
//! `{message, code}` without `errors` (the OpenAPI types `errors` as an
//! object, LI.FI's error-codes page shows an array).

use alloy::primitives::{Address, B256, U256};
use axum::{
    extract::{Query, State},
    http::StatusCode,
    response::IntoResponse,
    routing::get,
    Json, Router,
};
use serde_json::{json, Value};

use crate::{
    aggregator::{self, EvmAsk, EvmQuote, NoQuote, DEPOSIT_GAS, DURATION_SECS, GAS_PRICE, TOOL},
    faults::ErrorShape,
    http::{hex0x, param, Answer, Early, Params},
    pricing::{fee_bps, less_bps, usd_price},
    settle::{Destination, Outcome, Transfer},
    tokens::TokenInfo,
    SimContext, Upstream,
};

/// LI.FI's error code for a status.
fn code(status: StatusCode) -> u32 {
    match status.as_u16() {
        400 => 1011,
        404 => 1002,
        429 => 1005,
        _ => 1006,
    }
}

fn error_body(status: StatusCode) -> Value {
    let message = match status.as_u16() {
        400 => "Invalid request",
        404 => "No available quotes for the requested transfer",
        429 => "Rate limit exceeded",
        _ => "Internal server error",
    };
    json!({"message": message, "code": code(status)})
}

/// LI.FI's error answers and truncated body.
pub const SHAPE: ErrorShape = ErrorShape {
    body: error_body,
    garbage: r#"{"type":"lifi","id":"0x5f","tool":"devnet-simulator","estimate":{"fromAmount":"1000000","toAmount":"99"#,
};

fn invalid(message: String) -> Early {
    let status = StatusCode::BAD_REQUEST;
    (
        status,
        Json(json!({"message": message, "code": code(status)})),
    )
        .into_response()
        .into()
}

/// The router: `GET /v1/quote`, `GET /v1/status`.
pub fn routes(ctx: SimContext) -> Router {
    Router::new()
        .route("/v1/quote", get(quote))
        .route("/v1/status", get(status))
        .with_state(ctx)
}

fn token_json(t: &TokenInfo, chain: u64) -> Value {
    let price = usd_price(t.symbol).unwrap_or(1).to_string();
    json!({"address": t.address, "chainId": chain, "symbol": t.symbol, "decimals": t.decimals,
           "name": t.name, "coinKey": t.symbol, "priceUSD": price, "logoURI": ""})
}

fn required<'a, T: std::str::FromStr>(q: &'a Params, k: &str) -> Answer<(T, &'a str)> {
    let raw = param(q, k).ok_or_else(|| invalid(format!("Invalid request: {k} is required")))?;
    let v = raw
        .parse()
        .map_err(|_| invalid(format!("Invalid request: {k} is invalid")))?;
    Ok((v, raw))
}

#[tracing::instrument(skip_all, fields(simulator = "lifi"))]
async fn quote(State(s): State<SimContext>, Query(q): Query<Params>) -> Answer {
    s.faults.gate(&SHAPE).await?;
    build_quote(&s, &q)
}

fn build_quote(s: &SimContext, q: &Params) -> Answer {
    let (from_chain, _) = required::<u64>(q, "fromChain")?;
    let (to_chain, _) = required::<u64>(q, "toChain")?;
    let (amount, _) = required::<U256>(q, "fromAmount")?;
    let (sender, _) = required::<Address>(q, "fromAddress")?;
    let (_, from_token) = required::<String>(q, "fromToken")?;
    let (_, to_token) = required::<String>(q, "toToken")?;
    let recipient = match param(q, "toAddress") {
        Some(a) => a
            .parse()
            .map_err(|_| invalid("Invalid request: toAddress is invalid".into()))?,
        None => sender,
    };
    let slippage: f64 = param(q, "slippage")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.005);
    let ask = EvmAsk {
        upstream: Upstream::Lifi,
        from_chain,
        to_chain,
        from_token,
        to_token,
        amount,
        recipient,
    };
    let quote = aggregator::quote(&s.tokens, &s.settle, &ask).map_err(|e| match e {
        NoQuote::FromToken(_) | NoQuote::ToToken(_) | NoQuote::ZeroAmount => {
            invalid(format!("Invalid request: {e}"))
        }
        NoQuote::NoRoute => SHAPE.respond(StatusCode::NOT_FOUND).into(),
    })?;
    Ok(Json(render_quote(&ask, &quote, sender, slippage)).into_response())
}

/// The step kind LI.FI names in `includedSteps`: `swap` on one chain,
/// `cross` between chains.
fn step_type(ask: &EvmAsk<'_>) -> &'static str {
    if ask.is_same_chain() {
        "swap"
    } else {
        "cross"
    }
}

fn render_quote(ask: &EvmAsk<'_>, q: &EvmQuote, sender: Address, slippage: f64) -> Value {
    let call = &q.call;
    let action = json!({
        "fromChainId": ask.from_chain, "toChainId": ask.to_chain,
        "fromToken": token_json(&q.from, ask.from_chain), "toToken": token_json(&q.to, ask.to_chain),
        "fromAmount": ask.amount.to_string(), "slippage": slippage,
        "fromAddress": sender, "toAddress": ask.recipient,
    });
    let estimate = render_estimate(ask, q, slippage);
    let tool_details =
        json!({"key": TOOL, "name": "Relay devnet bridge (simulator)", "logoURI": ""});
    json!({
        "type": "lifi",
        "id": format!("{:#x}", call.quote_id),
        "tool": TOOL,
        "toolDetails": tool_details,
        "action": action,
        "estimate": estimate,
        "includedSteps": [{
            "id": format!("{:#x}", call.quote_id), "type": step_type(ask), "tool": TOOL,
            "toolDetails": tool_details, "action": action, "estimate": estimate,
        }],
        "transactionRequest": {
            "from": sender, "to": call.to, "chainId": ask.from_chain,
            "data": hex0x(&call.data), "value": format!("{:#x}", call.value),
            "gasLimit": format!("{DEPOSIT_GAS:#x}"), "gasPrice": format!("{GAS_PRICE:#x}"),
        },
    })
}

/// The `estimate` of a quote and of its included step.
fn render_estimate(ask: &EvmAsk<'_>, q: &EvmQuote, slippage: f64) -> Value {
    let EvmQuote {
        from, priced, call, ..
    } = q;
    let slip_bps = (slippage.clamp(0.0, 1.0) * 10_000.0).round() as u64;
    let gas_token = native_token(ask.from_chain);
    let (fee_name, fee_description) = if ask.is_same_chain() {
        ("Swap fee", "Simulated devnet swap fee")
    } else {
        ("Bridge fee", "Simulated devnet bridge fee")
    };
    json!({
        "tool": TOOL,
        "fromAmount": ask.amount.to_string(),
        "toAmount": priced.out.to_string(),
        "toAmountMin": less_bps(priced.out, slip_bps).to_string(),
        "approvalAddress": call.to,
        "executionDuration": DURATION_SECS,
        "fromAmountUSD": "0.00", "toAmountUSD": "0.00",
        "feeCosts": [{
            "name": fee_name, "description": fee_description,
            "token": token_json(from, ask.from_chain), "amount": priced.fee.to_string(), "amountUSD": "0.00",
            "percentage": format!("{}", fee_bps(Upstream::Lifi) as f64 / 10_000.0), "included": true,
        }],
        "gasCosts": [{
            "type": "SEND", "price": GAS_PRICE.to_string(), "estimate": DEPOSIT_GAS.to_string(),
            "limit": DEPOSIT_GAS.to_string(), "amount": (u128::from(DEPOSIT_GAS) * u128::from(GAS_PRICE)).to_string(),
            "amountUSD": "0.00", "token": gas_token,
        }],
    })
}

#[tracing::instrument(skip_all, fields(simulator = "lifi"))]
async fn status(State(s): State<SimContext>, Query(q): Query<Params>) -> Answer {
    s.faults.gate(&SHAPE).await?;
    let tx = param(&q, "txHash")
        .filter(|h| h.parse::<B256>().is_ok())
        .ok_or_else(|| invalid("Invalid request: txHash is required".into()))?;
    Ok(match s.settle.transfer(tx) {
        None => Json(not_found(tx, &q)).into_response(),
        Some(t) => Json(render_status(&s, &t)).into_response(),
    })
}

/// `NOT_FOUND`. `@lifi/types` types it `BaseStatusData` (`{status}` only),
/// while the OpenAPI `StatusResponse` requires `sending` (a full
/// `TransactionInfo`) and `tool` on every answer: this serves both — the
/// queried hash on the `fromChain` asked for (0 when not given), nothing
/// sent yet (`amount` "0", the chain's native token as `token`), and the
/// `bridge` asked for (else the simulator's tool).
fn not_found(tx: &str, q: &Params) -> Value {
    let chain = param(q, "fromChain")
        .and_then(|c| c.parse::<u64>().ok())
        .unwrap_or(0);
    let tool = param(q, "bridge").unwrap_or(TOOL);
    json!({
        "status": "NOT_FOUND", "tool": tool,
        "sending": {"txHash": tx, "txLink": "", "amount": "0", "token": native_token(chain), "chainId": chain},
    })
}

/// The native gas token of `chain` (every devnet chain runs on ETH).
fn native_token(chain: u64) -> Value {
    token_json(
        &TokenInfo {
            symbol: "ETH",
            name: "Ether",
            address: Address::ZERO,
            decimals: 18,
        },
        chain,
    )
}

/// `chain` as LI.FI's numeric `chainId` (a simulated node's name as is).
fn chain_id(chain: &str) -> Value {
    chain.parse::<u64>().map_or(json!(chain), |c| json!(c))
}

/// A `sending` / `receiving` leg: the transaction (when there is one), the
/// amount and token on `chain` (a chain id, or a simulated node's name).
/// Valid as the OpenAPI `TransactionInfo` (`txHash`, `txLink`, `amount`,
/// `token`, `chainId` required) and as `@lifi/types`
/// `ExtendedTransactionInfo` (`gasPrice`, `gasUsed`, `gasToken`,
/// `gasAmount`, `gasAmountUSD` required). No `includedSteps`: the two
/// disagree on its `fromToken` (a string in the OpenAPI, a `Token` in the
/// types).
fn leg(s: &SimContext, tx: Option<&str>, amount: U256, chain: &str, token: &str, at: u64) -> Value {
    let id = chain_id(chain);
    let token = chain
        .parse::<u64>()
        .ok()
        .and_then(|c| Some((c, s.tokens.resolve(c, token)?)))
        .map_or(
            json!({"address": token, "chainId": id, "symbol": token, "name": token, "decimals": 0}),
            |(c, t)| token_json(&t, c),
        );
    let gas_token = chain.parse::<u64>().map_or(Value::Null, native_token);
    json!({
        "txHash": tx, "txLink": "", "amount": amount.to_string(), "token": token, "chainId": id,
        "gasPrice": GAS_PRICE.to_string(), "gasUsed": DEPOSIT_GAS.to_string(), "gasToken": gas_token,
        "gasAmount": (u128::from(DEPOSIT_GAS) * u128::from(GAS_PRICE)).to_string(), "gasAmountUSD": "0.00",
        "amountUSD": "0.00", "timestamp": at,
    })
}

fn render_status(s: &SimContext, t: &Transfer) -> Value {
    let sending = leg(
        s,
        Some(&t.src_tx),
        t.amount_in,
        &t.from,
        &t.token,
        t.seen_unix,
    );
    let (dest, dest_token) = match &t.dest {
        Some(Destination::Evm { chain, token, .. }) => (chain.to_string(), format!("{token:#x}")),
        Some(d @ Destination::Ledger { asset, .. }) => (d.label(), asset.to_string()),
        None => (t.from.clone(), t.token.clone()),
    };
    let (status, substatus, message, receiving) = match t.outcome() {
        Outcome::Pending => (
            "PENDING",
            "WAIT_DESTINATION_TRANSACTION",
            "The bridge is waiting to send the destination transaction.",
            pending_leg(s, &dest, &dest_token),
        ),
        Outcome::Delivered(tx) => (
            "DONE",
            "COMPLETED",
            "The transfer is complete.",
            leg(s, Some(tx), t.amount_out, &dest, &dest_token, t.seen_unix),
        ),
        Outcome::Failed {
            refund_tx: Some(refund),
            reason,
        } => (
            "DONE",
            "REFUNDED",
            reason,
            leg(s, Some(refund), t.amount_in, &t.from, &t.token, t.seen_unix),
        ),
        // `@lifi/types` names this `UNKNOWN_FAILED_ERROR` (`SubstatusFailed`),
        // a value the OpenAPI `substatus` enum lacks; its `UNKNOWN_ERROR` is
        // in both (and LI.FI's status guide lists it under FAILED).
        Outcome::Failed {
            refund_tx: None,
            reason,
        } => (
            "FAILED",
            "UNKNOWN_ERROR",
            reason,
            pending_leg(s, &dest, &dest_token),
        ),
    };
    let to = t
        .dest
        .as_ref()
        .map_or_else(|| t.sender.clone(), Destination::recipient);
    // `@lifi/types` `FullStatusData` also requires `feeCosts`,
    // `fromAddress`, `toAddress`, `lifiExplorerLink` and `metadata`.
    let mut body = json!({
        "sending": sending, "receiving": receiving, "feeCosts": [], "lifiExplorerLink": "",
        "fromAddress": t.sender, "toAddress": to,
        "tool": TOOL, "status": status, "substatus": substatus, "substatusMessage": message,
        "metadata": {"integrator": "relay-devnet-simulator"},
    });
    if let Some(q) = t.quote_id {
        body["transactionId"] = json!(format!("{q:#x}"));
    }
    body
}

/// `receiving` before anything arrived. `@lifi/types` types it
/// `PendingReceivingInfo` (`{chainId}`), the OpenAPI a full
/// `TransactionInfo`: this is both — the destination chain, no
/// transaction yet (`txHash` and `txLink` empty), nothing received
/// (`amount` "0") and the token that will arrive.
fn pending_leg(s: &SimContext, chain: &str, token: &str) -> Value {
    let mut v = leg(s, Some(""), U256::ZERO, chain, token, 0);
    if let Value::Object(o) = &mut v {
        o.retain(|k, _| {
            matches!(
                k.as_str(),
                "txHash" | "txLink" | "amount" | "token" | "chainId"
            )
        });
    }
    v
}
