//! Allbridge Core **simulator**, following the Allbridge Core REST API
//! (github.com/allbridge-io/allbridge-core-rest-api — the REST front of
//! `@allbridge/bridge-core-sdk` 3.x, Swagger at `/api`; response types from
//! the SDK: `ChainDetailsMap`, `TokenWithChainDetails`, `BridgeQuoteResponse`,
//! `GasFeeOptions`, `TransferStatusResponse`):
//!
//! - `GET /chains`, `GET /tokens` — chains and tokens (EVM devnet chains,
//!   plus SOL, TRX and SRB with simulated token ids);
//! - `GET /bridge/quote?amount&sourceToken&destinationToken` →
//!   `{amountInt, amountFloat, sourceTokenAddress, destinationTokenAddress,
//!   options[{messenger, messengerIndex, estimatedTimeMs, paymentMethods[{feePaymentMethod,
//!   fee, estimatedAmount{min, max}, relayerFeeInStable, lpFeeTotal}]}]}`;
//! - `GET /bridge/receive/calculate?amount&sourceToken&destinationToken&messenger`
//!   → `{amountInFloat, amountReceivedInFloat}`;
//! - `GET /gas/fee?sourceToken&destinationToken&messenger` → `{native{int,float}, stablecoin{int,float}}`;
//! - `GET /raw/bridge?amount&sender&recipient&sourceToken&destinationToken&messenger&feePaymentMethod[&fee]`
//!   → an EVM raw transaction `{from, to, value, data}`, or (non-EVM source)
//!   a string;
//! - `GET /transfer/status?chain&txId` → `{txId, sourceChainSymbol,
//!   destinationChainSymbol, sendAmount, stableFee, senderAddress,
//!   recipientAddress, signaturesCount, signaturesNeeded, send{…}, receive?{…}}`;
//! - errors: NestJS `{statusCode, message}`, 400 for anything refused; the
//!   REST API (>= 3.28, `rest-api/src/error/errors.ts`) words only its own
//!   refusals (`Source token not found`, `Invalid chain`, …) and answers
//!   every other failure with the generic `{"statusCode":400,"message":"Bad
//!   request"}` — among them the status of a transaction Allbridge's core
//!   API has not indexed yet (its 404).
//!
//! Tokens are identified by address, as in the real API; symbols are also
//! accepted. Every devnet chain deploys its tokens at the same address, so
//! EVM tokens need `sourceChain` / `destinationChain` (Allbridge chain
//! symbols) alongside.
//!
//! Indexing: `/transfer/status` answers that generic 400 for a transaction
//! the simulator has not seen yet, and for the first
//! [`crate::AllbridgeConfig::not_indexed_polls`] polls (default 1) of each
//! transfer it has seen, as the real API does right after a send.
//!
//! Simulator specifics: the fee is paid in the stablecoin (`WITH_STABLECOIN`
//! only); EVM → SOL/TRX/SRB credits the simulated ledger once the EVM
//! deposit is seen; SOL/TRX → EVM answers a simulated raw transaction (a
//! payment to a simulated deposit address) that `POST /simulator/ledger/submit`
//! executes, after which the EVM side pays out; SRB → anything is refused,
//! as on the live mesh. A transfer the simulator failed has no `receive`
//! (Allbridge's status has no failed or refunded notion); the simulator
//! says what happened in the simulator-only response headers
//! `x-simulator-refund-tx` (the refund, when it went through) and
//! `x-simulator-failure` (why), never in the body.
//!
//! Every answer is valid against the Swagger Allbridge publishes
//! (`cli/api/swagger.json`, recorded in
//! `rails/stablebridge/tests/fixtures/vendor/schema.json`:
//! `BridgeQuoteResponse`, `TransferStatusResponse`,
//! `EssentialWeb3Transaction`, `HttpExceptionBody` — no fields beyond
//! theirs). A status leg's `messenger` is the number of the SDK's
//! `Messenger` enum, as the Swagger's schema says (its example shows the
//! string; the quote's `messenger` is the string in both).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

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
    faults::ErrorShape,
    http::{hex0x, param, Answer, Early, Params},
    ledger::{Node, SimAsset, SimulatedPayment},
    pricing::{format_units, Priced, Rate},
    settle::{ChannelSpec, Destination, Outcome, QuoteSpec, Transfer},
    tokens::TokenInfo,
    AllbridgeConfig, SimContext, Upstream,
};

/// Allbridge chain symbols of EVM chains: (symbol, chain id, name).
const EVM_CHAINS: [(&str, u64, &str); 11] = [
    ("ETH", 1, "Ethereum"),
    ("BSC", 56, "BNB Chain"),
    ("POL", 137, "Polygon"),
    ("ARB", 42161, "Arbitrum"),
    ("AVA", 43114, "Avalanche"),
    ("BAS", 8453, "Base"),
    ("OPT", 10, "Optimism"),
    ("CEL", 42220, "Celo"),
    ("SNC", 146, "Sonic"),
    ("UNI", 130, "Unichain"),
    ("LIN", 59144, "Linea"),
];

/// Allbridge chain symbols of the simulated ledgers.
const LEDGERS: [(&str, Node, &str); 3] = [
    ("SOL", Node::Solana, "Solana (simulated)"),
    ("TRX", Node::Tron, "Tron (simulated)"),
    ("SRB", Node::Stellar, "Stellar Soroban (simulated)"),
];

/// The one messenger the simulator offers, as the quote names it
/// (`BridgeQuoteOption.messenger`, a string).
const MESSENGER: &str = "ALLBRIDGE";
/// The same messenger as a transfer's status names it: the Swagger's
/// `BridgeTransaction.messenger` is the SDK's numeric `Messenger` enum
/// (`ALLBRIDGE = 1`), which the SDK's own status mock sends, though the
/// Swagger's example shows the string.
const MESSENGER_INDEX: u8 = 1;
/// The response header naming the refund of a transfer the simulator
/// failed and refunded (simulator-only: Allbridge's status has no such
/// field, and its schema allows no extra one).
pub const REFUND_HEADER: &str = "x-simulator-refund-tx";
/// The response header saying why the simulator failed a transfer.
pub const FAILURE_HEADER: &str = "x-simulator-failure";
const TRANSFER_TIME_MS: u64 = 60_000;

fn error_body(status: StatusCode) -> Value {
    let message = match status.as_u16() {
        400 => GENERIC_BAD_REQUEST,
        429 => "ThrottlerException: Too Many Requests",
        _ => "Internal server error",
    };
    json!({"statusCode": status.as_u16(), "message": message})
}

/// Allbridge's error answers and truncated body.
pub const SHAPE: ErrorShape = ErrorShape {
    body: error_body,
    garbage: r#"{"amountInt":"1000000","amountFloat":"1","options":[{"messenger":"ALLBRIDGE","paymentMethods":[{"fee"#,
};

/// The REST API's message for every failure it does not word itself.
const GENERIC_BAD_REQUEST: &str = "Bad request";

fn refuse(message: impl std::fmt::Display) -> Early {
    let body = json!({"statusCode": 400, "message": message.to_string()});
    (StatusCode::BAD_REQUEST, Json(body)).into_response().into()
}

/// One side of a transfer.
#[derive(Clone, Debug)]
enum Side {
    Evm {
        symbol: &'static str,
        chain: u64,
        token: TokenInfo,
    },
    Ledger {
        symbol: &'static str,
        node: Node,
        asset: SimAsset,
    },
}

impl Side {
    fn chain_symbol(&self) -> &'static str {
        match self {
            Side::Evm { symbol, .. } | Side::Ledger { symbol, .. } => symbol,
        }
    }
    fn decimals(&self) -> u8 {
        match self {
            Side::Evm { token, .. } => token.decimals,
            Side::Ledger { asset, .. } => asset.decimals,
        }
    }
    fn asset_symbol(&self) -> &'static str {
        match self {
            Side::Evm { token, .. } => token.symbol,
            Side::Ledger { asset, .. } => asset.symbol,
        }
    }
    fn token_address(&self) -> String {
        match self {
            Side::Evm { token, .. } => format!("{:#x}", token.address),
            Side::Ledger { asset, .. } => asset.token_id.unwrap_or_default().to_string(),
        }
    }
    /// The numeric chain id of a transfer leg (`BridgeTransaction`
    /// `sourceChainId` / `destinationChainId`, numbers in the Swagger): the
    /// EVM chain id where there is one, as in the Swagger's example (ETH 1,
    /// TRX 728126428); else Allbridge's own chain number as the SDK's tests
    /// use it (SOL 4, SRB 7).
    fn leg_chain_id(&self) -> u64 {
        match self {
            Side::Ledger {
                node: Node::Solana, ..
            } => 4,
            Side::Ledger {
                node: Node::Stellar,
                ..
            } => 7,
            other => other.chain_id().unwrap_or_default(),
        }
    }
    fn chain_id(&self) -> Option<u64> {
        match self {
            Side::Evm { chain, .. } => Some(*chain),
            Side::Ledger {
                node: Node::Tron, ..
            } => Some(728_126_428),
            Side::Ledger { .. } => None,
        }
    }
}

/// A transfer built by `/raw/bridge`, kept for `/transfer/status`.
#[derive(Clone, Debug)]
struct Route {
    from: Side,
    to: Side,
    sender: String,
    recipient: String,
    fee: U256,
}

#[derive(Clone, Debug)]
struct Allbridge {
    ctx: SimContext,
    config: AllbridgeConfig,
    routes: Arc<Mutex<HashMap<B256, Route>>>,
    /// Status polls so far, per seen source transaction (lower case).
    polls: Arc<Mutex<HashMap<String, u32>>>,
}

/// The router: `/chains`, `/tokens`, `/bridge/quote`, `/bridge/receive/calculate`,
/// `/gas/fee`, `/raw/bridge`, `/transfer/status`; `config` sets the window
/// in which a seen transfer is not indexed yet.
pub fn routes(ctx: SimContext, config: AllbridgeConfig) -> Router {
    let s = Allbridge {
        ctx,
        config,
        routes: Arc::default(),
        polls: Arc::default(),
    };
    Router::new()
        .route("/chains", get(chains))
        .route("/tokens", get(tokens))
        .route("/bridge/quote", get(quote))
        .route("/bridge/receive/calculate", get(receive_calculate))
        .route("/gas/fee", get(gas_fee))
        .route("/raw/bridge", get(raw_bridge))
        .route("/transfer/status", get(status))
        .with_state(s)
}

impl Allbridge {
    /// Applies this simulator's faults.
    async fn gate(&self) -> Answer<()> {
        self.ctx.faults.gate(&SHAPE).await
    }

    /// Counts a status poll of the seen transfer `src_tx`; whether it is
    /// past the not-indexed window.
    fn indexed(&self, src_tx: &str) -> bool {
        let mut polls = self.polls.lock().expect("polls lock");
        let n = polls.entry(src_tx.to_ascii_lowercase()).or_default();
        *n = n.saturating_add(1);
        *n > self.config.not_indexed_polls
    }

    /// Every side the simulator serves: the devnet's stablecoins on each EVM
    /// chain with an Allbridge symbol, and the simulated ledgers' tokens.
    fn sides(&self) -> Vec<Side> {
        let mut v = Vec::new();
        for (symbol, chain, _) in EVM_CHAINS {
            for t in self.ctx.tokens.on_chain(chain) {
                if matches!(t.symbol, "USDC" | "USDT") {
                    v.push(Side::Evm {
                        symbol,
                        chain,
                        token: t.clone(),
                    });
                }
            }
        }
        for (symbol, node, _) in LEDGERS {
            for asset in node.assets() {
                v.push(Side::Ledger {
                    symbol,
                    node,
                    asset: *asset,
                });
            }
        }
        v
    }

    /// The side `token` names (address, simulated/mainnet id, or symbol),
    /// on `chain` when given; it must be unique.
    fn side(&self, chain: Option<&str>, token: &str, which: &str) -> Answer<Side> {
        let matches = |s: &Side| match s {
            Side::Evm { token: t, .. } => {
                t.symbol.eq_ignore_ascii_case(token)
                    || token.parse::<Address>().ok() == Some(t.address)
            }
            Side::Ledger { asset, .. } => {
                asset.symbol.eq_ignore_ascii_case(token) || asset.is_token(token)
            }
        };
        let found: Vec<Side> = self
            .sides()
            .into_iter()
            .filter(|s| chain.is_none_or(|c| s.chain_symbol().eq_ignore_ascii_case(c)))
            .filter(matches)
            .collect();
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(refuse(format!("{which} token not found"))),
            _ => Err(refuse(format!(
                "{which} token not found: ambiguous on the devnet (every chain uses the same address); pass {}Chain",
                which.to_ascii_lowercase()
            ))),
        }
    }

    /// The two sides and the amount of a request.
    fn leg(&self, q: &Params) -> Answer<(Side, Side, U256)> {
        let token = |k: &str| param(q, k).ok_or_else(|| refuse(format!("{k} is required")));
        let from = self.side(param(q, "sourceChain"), token("sourceToken")?, "Source")?;
        let to = self.side(
            param(q, "destinationChain"),
            token("destinationToken")?,
            "Destination",
        )?;
        let amount = param(q, "amount")
            .and_then(|a| a.parse::<U256>().ok())
            .filter(|a| !a.is_zero())
            .ok_or_else(|| refuse("Invalid amount"))?;
        if from.chain_symbol() == "SRB" {
            return Err(refuse(
                "Unsupported source chain SRB: transfers from Stellar are not available",
            ));
        }
        if matches!((&from, &to), (Side::Ledger { .. }, Side::Ledger { .. }))
            || from.chain_symbol() == to.chain_symbol()
        {
            return Err(refuse("Unsupported route between these tokens"));
        }
        Ok((from, to, amount))
    }
}

fn price(from: &Side, to: &Side, amount: U256) -> Priced {
    Rate::Par {
        from: from.decimals(),
        to: to.decimals(),
    }
    .price(amount)
}

fn amount_json(v: U256, decimals: u8) -> Value {
    json!({"int": v.to_string(), "float": format_units(v, decimals)})
}

fn token_json(s: &Side) -> Value {
    let chain_name = EVM_CHAINS
        .iter()
        .find(|c| c.0 == s.chain_symbol())
        .map(|c| c.2)
        .or_else(|| {
            LEDGERS
                .iter()
                .find(|l| l.0 == s.chain_symbol())
                .map(|l| l.2)
        })
        .unwrap_or_default();
    let chain_type = match s {
        Side::Evm { .. } => "EVM",
        Side::Ledger {
            node: Node::Solana, ..
        } => "SOLANA",
        Side::Ledger {
            node: Node::Tron, ..
        } => "TRX",
        Side::Ledger { .. } => "SRB",
    };
    json!({
        "symbol": s.asset_symbol(), "name": s.asset_symbol(), "decimals": s.decimals(),
        "tokenAddress": s.token_address(), "poolAddress": s.token_address(),
        "chainSymbol": s.chain_symbol(), "chainType": chain_type, "chainName": chain_name,
        "chainId": s.chain_id().map(|c| format!("{c:#x}")), "allbridgeChainId": s.chain_id(),
        "feeShare": "0.001", "confirmations": 1, "transferTime": {MESSENGER: TRANSFER_TIME_MS},
        "txCostAmount": {"transfer": "0", "swap": "0", "maxAmount": "0"},
        "flags": {"swap": true, "pool": true},
    })
}

async fn chains(State(s): State<Allbridge>) -> Answer {
    s.gate().await?;
    let mut map = serde_json::Map::new();
    for side in s.sides() {
        let entry = map.entry(side.chain_symbol()).or_insert_with(|| {
            json!({"chainSymbol": side.chain_symbol(), "chainId": side.chain_id().map(|c| format!("{c:#x}")),
                   "bridgeAddress": side_bridge(&s, &side), "transferTime": {MESSENGER: TRANSFER_TIME_MS},
                   "confirmations": 1, "txCostAmount": {"transfer": "0", "swap": "0", "maxAmount": "0"},
                   "tokens": []})
        });
        if let Some(list) = entry["tokens"].as_array_mut() {
            list.push(token_json(&side));
        }
    }
    Ok(Json(Value::Object(map)).into_response())
}

fn side_bridge(s: &Allbridge, side: &Side) -> Value {
    match side {
        Side::Evm { chain, .. } => json!(s.ctx.settle.bridge(*chain)),
        Side::Ledger { .. } => Value::Null,
    }
}

async fn tokens(State(s): State<Allbridge>) -> Answer {
    s.gate().await?;
    let list: Vec<Value> = s.sides().iter().map(token_json).collect();
    Ok(Json(list).into_response())
}

#[tracing::instrument(skip_all, fields(simulator = "allbridge"))]
async fn quote(State(s): State<Allbridge>, Query(q): Query<Params>) -> Answer {
    s.gate().await?;
    let (from, to, amount) = s.leg(&q)?;
    let p = price(&from, &to, amount);
    let out = p.out.to_string();
    Ok(Json(json!({
        "amountInt": amount.to_string(),
        "amountFloat": format_units(amount, from.decimals()),
        "sourceTokenAddress": from.token_address(),
        "destinationTokenAddress": to.token_address(),
        "options": [{
            "messenger": MESSENGER, "messengerIndex": 1, "estimatedTimeMs": TRANSFER_TIME_MS,
            "paymentMethods": [{
                "feePaymentMethod": "WITH_STABLECOIN", "fee": p.fee.to_string(),
                "pendingTxs": 0, "pendingAmount": "0",
                "estimatedAmount": {"min": out, "max": out},
                "relayerFeeInStable": p.fee.to_string(), "lpFeeTotal": "0",
            }],
        }],
    }))
    .into_response())
}

async fn receive_calculate(State(s): State<Allbridge>, Query(q): Query<Params>) -> Answer {
    s.gate().await?;
    let (from, to, amount) = s.leg(&q)?;
    Ok(Json(json!({
        "amountInFloat": format_units(amount, from.decimals()),
        "amountReceivedInFloat": format_units(price(&from, &to, amount).out, to.decimals()),
    }))
    .into_response())
}

async fn gas_fee(State(s): State<Allbridge>, Query(mut q): Query<Params>) -> Answer {
    s.gate().await?;
    // The simulated fee is proportional to the amount; without one, this
    // reports the fee of a one-token (10^6 units) transfer.
    q.entry("amount".into()).or_insert_with(|| "1000000".into());
    let (from, to, amount) = s.leg(&q)?;
    let fee = price(&from, &to, amount).fee;
    let body = json!({"native": amount_json(U256::ZERO, 18), "stablecoin": amount_json(fee, from.decimals()),
                      "adminFeeShareWithExtras": "0"});
    Ok(Json(body).into_response())
}

#[tracing::instrument(skip_all, fields(simulator = "allbridge"))]
async fn raw_bridge(State(s): State<Allbridge>, Query(q): Query<Params>) -> Answer {
    s.gate().await?;
    build_raw(&s, &q)
}

fn build_raw(s: &Allbridge, q: &Params) -> Answer {
    let (from, to, amount) = s.leg(q)?;
    let (Some(sender), Some(recipient)) = (param(q, "sender"), param(q, "recipient")) else {
        return Err(refuse("sender and recipient are required"));
    };
    if param(q, "messenger").is_some_and(|m| m != MESSENGER) {
        return Err(refuse("Invalid messenger"));
    }
    if param(q, "feePaymentMethod").is_some_and(|m| m != "WITH_STABLECOIN") {
        return Err(refuse(
            "simulator: only feePaymentMethod WITH_STABLECOIN is simulated",
        ));
    }
    let p = price(&from, &to, amount);
    let dest = destination(&to, recipient)?;
    let route = Route {
        from: from.clone(),
        to,
        sender: sender.to_string(),
        recipient: recipient.to_string(),
        fee: p.fee,
    };
    let (id, body) = match &from {
        Side::Evm { chain, token, .. } => {
            let sender: Address = sender
                .parse()
                .map_err(|_| refuse("Invalid sender address"))?;
            let spec = QuoteSpec {
                upstream: Upstream::Allbridge,
                from_chain: *chain,
                token: token.address,
                amount_in: amount,
                dest,
                amount_out: p.out,
            };
            let call = s.ctx.settle.quote_deposit(spec).map_err(refuse)?;
            let raw =
                json!({"from": sender, "to": call.to, "value": "0", "data": hex0x(&call.data)});
            (call.quote_id, raw)
        }
        Side::Ledger { node, asset, .. } => {
            let spec = ChannelSpec {
                upstream: Upstream::Allbridge,
                node: *node,
                asset: asset.symbol,
                dest,
                rate: Rate::Par {
                    from: from.decimals(),
                    to: route.to.decimals(),
                },
                refund_address: Some(sender.to_string()),
            };
            let ch = s.ctx.settle.open_channel(spec);
            let payment = SimulatedPayment {
                simulated: true,
                node: *node,
                from: sender.to_string(),
                to: ch.address,
                asset: asset.symbol.to_string(),
                amount: amount.to_string(),
            };
            (ch.id, json!(payment.encode()))
        }
    };
    s.routes.lock().expect("routes lock").insert(id, route);
    Ok(Json(body).into_response())
}

fn destination(to: &Side, recipient: &str) -> Answer<Destination> {
    Ok(match to {
        Side::Evm { chain, token, .. } => Destination::Evm {
            chain: *chain,
            token: token.address,
            recipient: recipient
                .parse()
                .map_err(|_| refuse("Invalid recipient address"))?,
        },
        Side::Ledger { node, asset, .. } => Destination::Ledger {
            node: *node,
            address: recipient.to_string(),
            asset: asset.symbol,
        },
    })
}

#[tracing::instrument(skip_all, fields(simulator = "allbridge"))]
async fn status(State(s): State<Allbridge>, Query(q): Query<Params>) -> Answer {
    s.gate().await?;
    let (Some(chain), Some(tx)) = (param(&q, "chain"), param(&q, "txId")) else {
        return Err(refuse("Invalid chain"));
    };
    let known = EVM_CHAINS.iter().any(|c| c.0 == chain) || LEDGERS.iter().any(|l| l.0 == chain);
    if !known {
        return Err(refuse("Invalid chain"));
    }
    // Not indexed yet: the core API's 404 reaches the client as the REST
    // API's generic 400.
    let not_indexed = || refuse(GENERIC_BAD_REQUEST);
    let t = s.ctx.settle.transfer(tx).ok_or_else(not_indexed)?;
    let route = t
        .quote_id
        .and_then(|id| s.routes.lock().expect("routes lock").get(&id).cloned())
        .ok_or_else(not_indexed)?;
    if !s.indexed(&t.src_tx) {
        return Err(not_indexed());
    }
    Ok(render_status(&t, &route))
}

fn bridge_tx(t: &Transfer, r: &Route, tx: &str, amount: U256, decimals: u8) -> Value {
    json!({
        "txId": tx, "sourceChainId": r.from.leg_chain_id(), "destinationChainId": r.to.leg_chain_id(),
        "fee": "0", "feeFormatted": 0, "stableFee": r.fee.to_string(),
        "stableFeeFormatted": format_units(r.fee, r.from.decimals()).parse::<f64>().unwrap_or(0.0),
        "amount": amount.to_string(),
        "amountFormatted": format_units(amount, decimals).parse::<f64>().unwrap_or(0.0),
        "virtualAmount": t.amount_out.to_string(), "bridgeContract": "", "sender": r.sender,
        "recipient": r.recipient, "sourceTokenAddress": r.from.token_address(),
        "destinationTokenAddress": r.to.token_address(), "hash": tx, "messenger": MESSENGER_INDEX,
        "blockTime": 0, "blockId": "", "confirmations": 1, "confirmationsNeeded": 1,
    })
}

/// The `TransferStatusResponse` of `t` (the Swagger's, which allows no
/// field beyond its own), and for a transfer the simulator failed the
/// simulator-only headers [`REFUND_HEADER`] and [`FAILURE_HEADER`].
fn render_status(t: &Transfer, r: &Route) -> axum::response::Response {
    let send = bridge_tx(t, r, &t.src_tx, t.amount_in, r.from.decimals());
    let mut v = json!({
        "txId": t.src_tx, "sourceChainSymbol": r.from.chain_symbol(),
        "destinationChainSymbol": r.to.chain_symbol(),
        "sendAmount": t.amount_in.to_string(),
        "sendAmountFormatted": format_units(t.amount_in, r.from.decimals()).parse::<f64>().unwrap_or(0.0),
        "stableFee": r.fee.to_string(),
        "stableFeeFormatted": format_units(r.fee, r.from.decimals()).parse::<f64>().unwrap_or(0.0),
        "sourceTokenAddress": r.from.token_address(), "destinationTokenAddress": r.to.token_address(),
        "senderAddress": r.sender, "recipientAddress": r.recipient,
        "signaturesCount": 0, "signaturesNeeded": 2, "send": send, "responseTime": 1,
    });
    let mut headers = Vec::new();
    match t.outcome() {
        Outcome::Pending => {}
        Outcome::Delivered(tx) => {
            v["signaturesCount"] = json!(2);
            v["receive"] = bridge_tx(t, r, tx, t.amount_out, r.to.decimals());
        }
        Outcome::Failed { refund_tx, reason } => {
            if let Some(tx) = refund_tx {
                headers.push((REFUND_HEADER, tx.to_string()));
            }
            headers.push((FAILURE_HEADER, reason.to_string()));
        }
    }
    let mut resp = Json(v).into_response();
    for (k, value) in headers {
        if let Some(h) = header_value(&value) {
            resp.headers_mut().insert(k, h);
        }
    }
    resp
}

/// `text` as a header value, anything but printable ASCII replaced by `?`.
fn header_value(text: &str) -> Option<axum::http::HeaderValue> {
    let printable: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect();
    axum::http::HeaderValue::from_str(&printable).ok()
}
