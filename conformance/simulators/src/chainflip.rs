//! Chainflip **simulator**, following the two public surfaces a Chainflip
//! integration uses: the SDK's swap backend v2 (`@chainflip/sdk` `getQuoteV2`
//! / `getStatusV2`, `https://chainflip-swap.chainflip.io`) and the Broker API
//! JSON-RPC (docs.chainflip.io "Broker API"):
//!
//! - `GET /v2/quote?srcChain&srcAsset&destChain&destAsset&amount` → an array
//!   of quotes `[{type: "REGULAR", srcAsset{chain, asset}, destAsset{chain, asset},
//!   depositAmount, egressAmount, includedFees[{type, chain, asset, amount}],
//!   estimatedDurationSeconds, estimatedDurationsSeconds, estimatedPrice, …}]`;
//! - `POST /broker` (also `POST /`), JSON-RPC 2.0:
//!   `broker_request_swap_deposit_address` (alias `broker_requestSwapDepositAddress`;
//!   params `[source_asset, destination_asset, destination_address,
//!   broker_commission, channel_metadata, boost_fee, affiliate_fees,
//!   refund_parameters]`) → `{address, issued_block, channel_id,
//!   source_chain_expiry_block, channel_opening_fee}`; and
//!   `broker_request_swap_parameter_encoding` (vault swaps from EVM chains;
//!   `extra_parameters{chain, input_amount, refund_parameters}`) →
//!   `{chain, calldata, value, to, source_token_address}`;
//! - `GET /v2/swaps/{id}` (id: the channel id `issuedBlock-Chain-channelId`,
//!   or the vault swap's transaction hash) → the SDK's `SwapStatusResponseV2`
//!   as the backend writes it (chainflip-sdk-monorepo
//!   `packages/swap/src/routes/v2/swap.ts`, `utils.ts` `getSwapState`):
//!   `{state: WAITING | RECEIVING | SWAPPING | SENDING | SENT | COMPLETED |
//!   FAILED, swapId, srcChain, srcAsset, destChain, destAsset, destAddress,
//!   depositChannel{…}, deposit{amount, txRef, witnessedAt, …}, swap{…},
//!   swapEgress?, refundEgress?, fillOrKillParams{…}, fees[]}`, each egress
//!   `{amount, scheduledAt, scheduledBlockIndex, txRef, witnessedAt,
//!   witnessedBlockIndex, failure?{failedAt, failedBlockIndex, mode,
//!   reason{name, message}}}`;
//! - errors: `{message}` with 400/404/500; JSON-RPC errors `{code, message}`.
//!
//! How settled transfers read, the vendor's way:
//!
//! | settlement | Chainflip status |
//! |---|---|
//! | delivered | `COMPLETED`, witnessed `swapEgress` |
//! | `accept-then-fail` (the fill-or-kill refund: no swap at the minimum price in time) | `COMPLETED`, witnessed `refundEgress` to the refund address, no `swapEgress`, swapped output 0 |
//! | a channel deposit it cannot swap (wrong asset, nothing), refunded | `FAILED`, `deposit.failure` (`DEPOSIT_REJECTED`), witnessed `refundEgress` |
//! | payout failed, refunded | `FAILED`, `swapEgress.failure` (`SENDING_FAILED`), witnessed `refundEgress` |
//! | `fail-on-destination` | `FAILED`, `swapEgress.failure` (`SENDING_FAILED`), no refund |
//! | neither payout nor refund went through | `FAILED`, `refundEgress.failure` (the refund failed) |
//!
//! `accept-then-fail` is selected as every simulator's fault mode is
//! (`POST /simulator/faults {"mode": "accept-then-fail"}` on this simulator,
//! or `Simulators::set_faults`). A vault swap's refund goes back on chain to
//! the Vault call's sender (the relay names itself as the refund address);
//! a deposit channel's to its `refund_parameters.refund_address` on the
//! bitcoin ledger.
//!
//! Simulator specifics: chains Ethereum (1) and Arbitrum (42161) are the
//! devnet's, Bitcoin is the simulated bitcoin ledger; assets ETH (the
//! chain's native coin, 18 decimals, as Chainflip names it on Ethereum and
//! Arbitrum), USDC, USDT (EVM) and BTC at the devnet's fixed prices
//! ([`crate::pricing::usd_price`]). Bitcoin → EVM: open a deposit
//! channel, then "send BTC" to its address with `POST
//! /simulator/bitcoin/send {to, amountSats}`; the EVM asset is paid out on
//! the destination anvil. EVM → Bitcoin: a vault swap whose `to` is the
//! devnet's `BridgeDeposit` (approve it for the source token); the
//! simulated ledger is credited once the deposit is seen. EVM deposit
//! channels are not simulated.

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
    faults::ErrorShape,
    http::{hex0x, Answer, Early},
    ledger::Node,
    pricing::{Rate, BTC_DECIMALS},
    settle::{ChannelSpec, Destination, QuoteSpec, RefundCause, Transfer, TransferState},
    SimContext, Upstream,
};

/// Devnet chains by Chainflip chain name.
const EVM: [(&str, u64); 2] = [("Ethereum", 1), ("Arbitrum", 42161)];
const DURATIONS: (u64, u64, u64) = (60, 12, 30);

fn error_body(status: StatusCode) -> Value {
    let message = match status.as_u16() {
        400 => "invalid request",
        404 => "resource not found",
        429 => "too many requests",
        _ => "internal server error",
    };
    json!({ "message": message })
}

/// Chainflip's error answers and truncated body.
pub const SHAPE: ErrorShape = ErrorShape {
    body: error_body,
    garbage: r#"[{"type":"REGULAR","srcAsset":{"chain":"Ethereum","asset":"USDC"},"egressAmount":"99"#,
};

fn fail(status: StatusCode, message: &str) -> Early {
    (status, Json(json!({ "message": message })))
        .into_response()
        .into()
}

/// An asset on a Chainflip chain, as the simulator prices it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Asset {
    chain: String,
    asset: String,
    decimals: u8,
    /// The devnet chain id, for EVM chains.
    evm: Option<u64>,
}

impl Asset {
    fn parse(chain: &str, asset: &str) -> Option<Asset> {
        let asset = asset.to_ascii_uppercase();
        let evm = EVM
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(chain))
            .map(|e| e.1);
        let decimals = match (evm, asset.as_str()) {
            (Some(_), "USDC" | "USDT") => 6,
            (Some(_), "ETH") => 18,
            (None, "BTC") if chain.eq_ignore_ascii_case("Bitcoin") => BTC_DECIMALS,
            _ => return None,
        };
        let chain = EVM
            .iter()
            .map(|e| e.0)
            .chain(["Bitcoin"])
            .find(|n| n.eq_ignore_ascii_case(chain))?
            .to_string();
        Some(Asset {
            chain,
            asset,
            decimals,
            evm,
        })
    }

    fn json(&self) -> Value {
        json!({"chain": self.chain, "asset": self.asset})
    }
}

/// A swap the simulator knows: a deposit channel or a vault swap.
#[derive(Clone, Debug)]
struct Swap {
    id: String,
    src: Asset,
    dest: Asset,
    dest_address: String,
    /// The settlement quote / channel id.
    settle_id: B256,
    /// The channel's deposit address (deposit channels only).
    deposit_address: Option<String>,
    issued_block: u64,
    /// `refund_parameters` as asked (the fill-or-kill parameters).
    refund: Refund,
}

/// The fill-or-kill parameters a swap was opened with.
#[derive(Clone, Debug)]
struct Refund {
    address: Option<String>,
    retry_duration: Option<u64>,
}

#[derive(Clone, Debug)]
struct Chainflip {
    ctx: SimContext,
    swaps: Arc<Mutex<HashMap<String, Swap>>>,
}

/// The router: `GET /v2/quote`, `GET /v2/swaps/{id}`, `POST /broker` (and `POST /`).
pub fn routes(ctx: SimContext) -> Router {
    let s = Chainflip {
        ctx,
        swaps: Arc::default(),
    };
    Router::new()
        .route("/v2/quote", get(quote))
        .route("/v2/swaps/{id}", get(swap_status))
        .route("/broker", post(broker))
        .route("/", post(broker))
        .with_state(s)
}

/// `GET /v2/quote` parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuoteAsk {
    src_chain: String,
    src_asset: String,
    dest_chain: String,
    dest_asset: String,
    amount: String,
}

fn priced(src: &Asset, dest: &Asset) -> Option<Rate> {
    Rate::between((&src.asset, src.decimals), (&dest.asset, dest.decimals))
        .filter(|_| src.chain != dest.chain)
}

#[tracing::instrument(skip_all, fields(simulator = "chainflip"))]
async fn quote(
    State(s): State<Chainflip>,
    q: Result<Query<QuoteAsk>, axum::extract::rejection::QueryRejection>,
) -> Answer {
    s.ctx.faults.gate(&SHAPE).await?;
    let bad = |m: &str| fail(StatusCode::BAD_REQUEST, m);
    let Query(a) =
        q.map_err(|_| bad("srcChain, srcAsset, destChain, destAsset and amount are required"))?;
    let src = Asset::parse(&a.src_chain, &a.src_asset)
        .ok_or_else(|| bad("invalid request: unsupported srcAsset"))?;
    let dest = Asset::parse(&a.dest_chain, &a.dest_asset)
        .ok_or_else(|| bad("invalid request: unsupported destAsset"))?;
    let amount: U256 = a
        .amount
        .parse()
        .map_err(|_| bad("invalid request: amount"))?;
    let rate = priced(&src, &dest).ok_or_else(|| bad("invalid request: unsupported asset pair"))?;
    let p = rate.price(amount);
    let (deposit, swap, egress) = DURATIONS;
    Ok(Json(json!([{
        "type": "REGULAR",
        "srcAsset": src.json(), "destAsset": dest.json(),
        "depositAmount": amount.to_string(), "intermediateAmount": null, "egressAmount": p.out.to_string(),
        "recommendedSlippageTolerancePercent": 1,
        "includedFees": [
            {"type": "NETWORK", "chain": src.chain, "asset": src.asset, "amount": p.fee.to_string()},
            {"type": "BROKER", "chain": src.chain, "asset": src.asset, "amount": "0"},
        ],
        "poolInfo": [], "lowLiquidityWarning": false,
        "estimatedDurationSeconds": deposit + swap + egress,
        "estimatedDurationsSeconds": {"deposit": deposit, "swap": swap, "egress": egress},
        "estimatedPrice": "1",
    }]))
    .into_response())
}

/// A JSON-RPC 2.0 request.
#[derive(Debug, Deserialize)]
struct Rpc {
    #[serde(default)]
    id: Value,
    method: String,
    #[serde(default)]
    params: Value,
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
        .into_response()
}

#[tracing::instrument(skip_all, fields(simulator = "chainflip", method))]
async fn broker(State(s): State<Chainflip>, body: axum::body::Bytes) -> Answer {
    s.ctx.faults.gate(&SHAPE).await?;
    let Ok(rpc) = serde_json::from_slice::<Rpc>(&body) else {
        return Ok(rpc_error(&Value::Null, -32700, "Parse error"));
    };
    tracing::Span::current().record("method", rpc.method.as_str());
    let result = match rpc.method.as_str() {
        "broker_request_swap_deposit_address" | "broker_requestSwapDepositAddress" => {
            s.open_channel(&rpc.params)
        }
        "broker_request_swap_parameter_encoding" | "broker_requestSwapParameterEncoding" => {
            s.vault_swap(&rpc.params)
        }
        _ => Err((-32601, "Method not found".to_string())),
    };
    Ok(match result {
        Ok(v) => Json(json!({"jsonrpc": "2.0", "id": rpc.id, "result": v})).into_response(),
        Err((code, m)) => rpc_error(&rpc.id, code, &m),
    })
}

type RpcResult = Result<Value, (i64, String)>;

/// The broker parameters the simulator reads, positional or named.
struct BrokerAsk {
    src: Asset,
    dest: Asset,
    dest_address: String,
    refund_address: Option<String>,
    retry_duration: Option<u64>,
    input_amount: Option<U256>,
}

impl BrokerAsk {
    fn refund(&self) -> Refund {
        Refund {
            address: self.refund_address.clone(),
            retry_duration: self.retry_duration,
        }
    }
}

fn invalid(m: impl Into<String>) -> (i64, String) {
    (-32602, m.into())
}

fn read_ask(params: &Value) -> Result<BrokerAsk, (i64, String)> {
    let named = |k: &str, i: usize| match params {
        Value::Object(o) => o.get(k).cloned().unwrap_or(Value::Null),
        Value::Array(a) => a.get(i).cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let asset = |v: Value| Asset::parse(v["chain"].as_str()?, v["asset"].as_str()?);
    let src = asset(named("source_asset", 0)).ok_or_else(|| invalid("unsupported source_asset"))?;
    let dest = asset(named("destination_asset", 1))
        .ok_or_else(|| invalid("unsupported destination_asset"))?;
    let dest_address = named("destination_address", 2)
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| invalid("destination_address is required"))?;
    // Vault swaps carry extra_parameters at index 4; deposit channels carry
    // refund_parameters at index 7.
    let extra = named("extra_parameters", 4);
    let refund = match &extra["refund_parameters"] {
        Value::Null => named("refund_parameters", 7),
        r => r.clone(),
    };
    let input_amount = extra["input_amount"]
        .as_str()
        .and_then(|a| a.parse::<U256>().ok());
    Ok(BrokerAsk {
        src,
        dest,
        dest_address,
        refund_address: refund["refund_address"].as_str().map(str::to_string),
        retry_duration: refund["retry_duration"].as_u64(),
        input_amount,
    })
}

impl Chainflip {
    fn evm_destination(&self, a: &BrokerAsk) -> Result<Destination, (i64, String)> {
        let chain = a
            .dest
            .evm
            .ok_or_else(|| invalid("destination is not an EVM chain"))?;
        let token = self
            .ctx
            .tokens
            .resolve(chain, &a.dest.asset)
            .ok_or_else(|| invalid(format!("{} is not on this devnet", a.dest.chain)))?;
        let recipient: Address = a
            .dest_address
            .parse()
            .map_err(|_| invalid("invalid destination_address"))?;
        Ok(Destination::Evm {
            chain,
            token: token.address,
            recipient,
        })
    }

    fn open_channel(&self, params: &Value) -> RpcResult {
        let a = read_ask(params)?;
        if a.src.evm.is_some() {
            return Err(invalid(
                "simulator: EVM deposit channels are not simulated; use broker_request_swap_parameter_encoding",
            ));
        }
        let rate = priced(&a.src, &a.dest).ok_or_else(|| invalid("unsupported asset pair"))?;
        let spec = ChannelSpec {
            upstream: Upstream::Chainflip,
            node: Node::Bitcoin,
            asset: "BTC",
            dest: self.evm_destination(&a)?,
            rate,
            refund_address: a.refund_address.clone(),
        };
        let ch = self.ctx.settle.open_channel(spec);
        let mut swaps = self.swaps.lock().expect("swaps lock");
        let (issued_block, channel_id) = (1_000 + swaps.len() as u64, swaps.len() as u64 + 1);
        let id = format!("{issued_block}-{}-{channel_id}", a.src.chain);
        let refund = a.refund();
        let swap = Swap {
            id: id.clone(),
            src: a.src,
            dest: a.dest,
            dest_address: a.dest_address,
            settle_id: ch.id,
            deposit_address: Some(ch.address.clone()),
            issued_block,
            refund,
        };
        swaps.insert(id, swap);
        Ok(
            json!({"address": ch.address, "issued_block": issued_block, "channel_id": channel_id,
                  "source_chain_expiry_block": 1_000_000, "channel_opening_fee": "0x0"}),
        )
    }

    fn vault_swap(&self, params: &Value) -> RpcResult {
        let a = read_ask(params)?;
        let chain = a
            .src
            .evm
            .ok_or_else(|| invalid("vault swaps are encoded for EVM source chains here"))?;
        let amount = a
            .input_amount
            .filter(|v| !v.is_zero())
            .ok_or_else(|| invalid("extra_parameters.input_amount is required"))?;
        let node_asset = (a.dest.chain == "Bitcoin")
            .then_some("BTC")
            .ok_or_else(|| invalid("destination must be Bitcoin"))?;
        let rate = priced(&a.src, &a.dest).ok_or_else(|| invalid("unsupported asset pair"))?;
        let token = self
            .ctx
            .tokens
            .resolve(chain, &a.src.asset)
            .ok_or_else(|| invalid("unknown source asset"))?;
        let spec = QuoteSpec {
            upstream: Upstream::Chainflip,
            from_chain: chain,
            token: token.address,
            amount_in: amount,
            dest: Destination::Ledger {
                node: Node::Bitcoin,
                address: a.dest_address.clone(),
                asset: node_asset,
            },
            amount_out: rate.price(amount).out,
        };
        let call = self
            .ctx
            .settle
            .quote_deposit(spec)
            .map_err(|e| invalid(e.to_string()))?;
        let id = format!("{:#x}", call.quote_id);
        let refund = a.refund();
        let swap = Swap {
            id: id.clone(),
            src: a.src.clone(),
            dest: a.dest,
            dest_address: a.dest_address,
            settle_id: call.quote_id,
            deposit_address: None,
            issued_block: 0,
            refund,
        };
        self.swaps.lock().expect("swaps lock").insert(id, swap);
        Ok(
            json!({"chain": a.src.chain, "calldata": hex0x(&call.data), "value": format!("{:#x}", call.value),
                  "to": call.to, "source_token_address": token.address}),
        )
    }

    /// The swap `id` names: a channel id, or a vault swap's transaction hash.
    fn find(&self, id: &str) -> Option<(Swap, Option<Transfer>)> {
        let swaps = self.swaps.lock().expect("swaps lock");
        if let Some(sw) = swaps.get(id) {
            let t = self.ctx.settle.transfers_for(sw.settle_id).pop();
            return Some((sw.clone(), t));
        }
        let t = self.ctx.settle.transfer(id)?;
        let sw = swaps
            .values()
            .find(|sw| Some(sw.settle_id) == t.quote_id)?
            .clone();
        Some((sw, Some(t)))
    }
}

#[tracing::instrument(skip_all, fields(simulator = "chainflip"))]
async fn swap_status(State(s): State<Chainflip>, Path(id): Path<String>) -> Answer {
    s.ctx.faults.gate(&SHAPE).await?;
    let (sw, t) = s
        .find(&id)
        .ok_or_else(|| Early::from(SHAPE.respond(StatusCode::NOT_FOUND)))?;
    Ok(Json(render_status(&sw, t.as_ref(), s.ctx.settle.delay())).into_response())
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
        * 1000
}

/// Block index and time the simulator gives a settlement step: Unix ms and
/// a `{block}-{index}` made of the transfer's time.
fn stamp(unix: u64, step: u64) -> (u64, String) {
    (
        (unix + step * 6) * 1000,
        format!("{}-{step}", unix / 6 + step),
    )
}

/// An egress the vendor's way; `witnessed` once its broadcast succeeded.
fn egress(amount: U256, unix: u64, tx: Option<&str>, failure: Option<Value>) -> Value {
    let (scheduled_at, scheduled_idx) = stamp(unix, 2);
    let (done_at, done_idx) = stamp(unix, 3);
    let mut e = json!({"amount": amount.to_string(), "scheduledAt": scheduled_at,
                       "scheduledBlockIndex": scheduled_idx});
    if let Some(tx) = tx {
        e["txRef"] = json!(tx);
    }
    match failure {
        Some(f) => {
            e["failedAt"] = json!(done_at);
            e["failedBlockIndex"] = json!(done_idx);
            e["failure"] = f;
        }
        None if tx.is_some() => {
            e["witnessedAt"] = json!(done_at);
            e["witnessedBlockIndex"] = json!(done_idx);
        }
        None => {}
    }
    e
}

/// `failure` as `getEgressFailureState` / `getDepositFailedState` write it.
fn failure(unix: u64, mode: &str, name: &str, message: &str) -> Value {
    let (at, idx) = stamp(unix, 3);
    json!({"failedAt": at, "failedBlockIndex": idx, "mode": mode,
           "reason": {"name": name, "message": message}})
}

fn aborted(unix: u64, what: &str) -> Value {
    failure(
        unix,
        "SENDING_FAILED",
        "BroadcastAborted",
        &format!("The {what} broadcast was aborted"),
    )
}

/// `swap`: how much was swapped (`out` is `None` when nothing was).
fn swap_fields(t: &Transfer, out: Option<U256>, unix: u64) -> Value {
    let (at, idx) = stamp(unix, 1);
    let input = t.amount_in.to_string();
    let mut regular = json!({"inputAmount": input, "retryCount": 0, "scheduledAt": at,
                             "scheduledBlockIndex": idx});
    let (swapped, remaining, output) = match out {
        Some(o) => {
            regular["outputAmount"] = json!(o.to_string());
            regular["executedAt"] = json!(at);
            regular["executedBlockIndex"] = json!(idx);
            (input.clone(), "0".to_string(), o.to_string())
        }
        None => ("0".to_string(), input.clone(), "0".to_string()),
    };
    json!({"originalInputAmount": input, "remainingInputAmount": remaining,
           "swappedInputAmount": swapped, "swappedIntermediateAmount": "0",
           "swappedOutputAmount": output, "regular": regular})
}

fn render_status(sw: &Swap, t: Option<&Transfer>, delay: std::time::Duration) -> Value {
    let (deposit, swap, egress_secs) = DURATIONS;
    let mut v = json!({
        "state": "WAITING", "swapId": sw.id, "srcChain": sw.src.chain, "srcAsset": sw.src.asset,
        "destChain": sw.dest.chain, "destAsset": sw.dest.asset, "destAddress": sw.dest_address,
        "fees": [], "brokers": [], "boost": null, "ccmParams": null, "dcaParams": null,
        "estimatedDurationSeconds": deposit + swap + egress_secs,
        "estimatedDurationsSeconds": {"deposit": deposit, "swap": swap, "egress": egress_secs},
        "srcChainRequiredBlockConfirmations": if sw.src.evm.is_some() { 1 } else { 3 },
        "fillOrKillParams": {"refundAddress": sw.refund.address, "minPrice": "0",
                             "retryDurationBlocks": sw.refund.retry_duration},
        "lastStatechainUpdateAt": unix_ms(),
    });
    if let Some(address) = &sw.deposit_address {
        v["depositChannel"] = json!({
            "id": sw.id, "createdAt": 0, "depositAddress": address, "srcChainExpiryBlock": "1000000",
            "estimatedExpiryTime": 86_400, "expectedDepositAmount": null, "isExpired": false,
            "openedThroughBackend": false, "brokerCommissionBps": 0, "affiliateBrokers": [],
            "issuedBlock": sw.issued_block,
        });
    }
    let Some(t) = t else {
        return v;
    };
    let unix = t.seen_unix;
    let (seen_at, seen_idx) = stamp(unix, 0);
    v["deposit"] = json!({"amount": t.amount_in.to_string(), "txRef": t.src_tx, "txConfirmations": 1,
                          "witnessedAt": seen_at, "witnessedBlockIndex": seen_idx});
    let fee = |kind: &str| {
        json!({"type": kind, "chain": sw.src.chain, "asset": sw.src.asset,
               "amount": crate::pricing::fee(t.amount_in).to_string()})
    };
    v["fees"] = json!([fee("NETWORK")]);
    let out = t.amount_out;
    match &t.state {
        TransferState::Pending => {
            let p = t.progress(delay);
            v["state"] = json!(if p < 1.0 / 3.0 {
                "RECEIVING"
            } else if p < 2.0 / 3.0 {
                "SWAPPING"
            } else {
                "SENDING"
            });
            if p >= 1.0 / 3.0 {
                v["swap"] = swap_fields(t, (p >= 2.0 / 3.0).then_some(out), unix);
            }
            if p >= 2.0 / 3.0 {
                v["swapEgress"] = egress(out, unix, None, None);
            }
        }
        TransferState::Delivered(tx) => {
            v["state"] = json!("COMPLETED");
            v["swap"] = swap_fields(t, Some(out), unix);
            v["swapEgress"] = egress(out, unix, Some(tx.as_str()), None);
        }
        TransferState::Refunded { tx, cause } => {
            // `amount_out` is the refunded amount once refunded.
            v["refundEgress"] = egress(t.amount_in, unix, Some(tx.as_str()), None);
            v["fees"] = json!([fee("REFUND")]);
            match cause {
                RefundCause::AcceptThenFail => {
                    v["state"] = json!("COMPLETED");
                    v["swap"] = swap_fields(t, None, unix);
                }
                RefundCause::Unmatched => {
                    v["state"] = json!("FAILED");
                    v["deposit"]["failure"] = failure(
                        unix,
                        "DEPOSIT_REJECTED",
                        "TransactionRejectedByBroker",
                        "The deposit was rejected by the broker",
                    );
                }
                RefundCause::PayoutFailed => {
                    v["state"] = json!("FAILED");
                    v["swap"] = swap_fields(t, Some(out), unix);
                    v["swapEgress"] = egress(out, unix, None, Some(aborted(unix, "swap")));
                }
            }
        }
        TransferState::FailedOnDestination => {
            v["state"] = json!("FAILED");
            v["swap"] = swap_fields(t, Some(out), unix);
            v["swapEgress"] = egress(out, unix, None, Some(aborted(unix, "swap")));
        }
        TransferState::Stuck(_) => {
            v["state"] = json!("FAILED");
            v["refundEgress"] = egress(t.amount_in, unix, None, Some(aborted(unix, "refund")));
        }
    }
    v
}
