//! Circle attestation service **simulator**, following Circle's CCTP v2 API
//! (developers.circle.com, "Get messages and attestations",
//! `GET /v2/messages/{sourceDomainId}`, CCTP OpenAPI 1.0; "Resolve
//! attestation issues" for the 404-until-indexed behaviour):
//!
//! - `?transactionHash=0x…` (or `?nonce=0x…`) → `{"messages": [{message,
//!   eventNonce, attestation, cctpVersion, status: "pending_confirmations" |
//!   "complete", decodedMessage, delayReason}]}`, messages in log order;
//!   while pending, `attestation` is `"PENDING"` and `message` `"0x"`;
//! - 404 `{code, message}` until the burn is indexed; errors are `{code, message}`.
//!
//! It watches `MessageSent` on every CCTP devnet chain (the devnet's
//! `MessageTransmitter`) and signs keccak256(message) with the devnet
//! attester key — the scheme the devnet's `receiveMessage` verifies — so
//! the attestation it serves really mints on the destination chain. A
//! message stays pending for the first [`crate::CircleConfig::pending_polls`]
//! polls and until [`crate::CircleConfig::confirmations`] blocks are mined on
//! top of it. Accept-then-fail has no meaning here and is ignored.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use alloy::{
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::{Filter, Log},
    sol_types::SolEvent,
};
use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    response::IntoResponse,
    routing::get,
    Json, Router,
};
use relay_devnet::{
    contracts::{attest_cctp_message, MessageTransmitter},
    keys, Devnet,
};
use serde_json::{json, Value};

use crate::{
    error::SimError,
    faults::ErrorShape,
    http::{hex0x, param, Answer, Params},
    watch::watch_logs,
    CircleConfig, SimContext,
};

fn error_body(status: StatusCode) -> Value {
    let message = match status.as_u16() {
        400 => "Invalid transactionHash format",
        404 => "Message hash not found",
        429 => "Too Many Requests",
        _ => "Internal Server Error",
    };
    json!({"code": status.as_u16(), "message": message})
}

/// Circle's error answers and truncated body.
pub const SHAPE: ErrorShape = ErrorShape {
    body: error_body,
    garbage: r#"{"messages":[{"message":"0x000000010000000600000003","eventNonce":"0x"#,
};

/// A `MessageSent` the simulator has indexed.
#[derive(Clone, Debug)]
struct Indexed {
    message: Vec<u8>,
    block: u64,
    polls: u32,
}

/// (source domain, burn transaction) → its messages, in log order.
type Index = HashMap<(u32, B256), Vec<Indexed>>;

/// The Circle simulator's state: per CCTP domain the chain's provider, and
/// the messages seen so far.
#[derive(Clone)]
pub struct CircleSimulator {
    ctx: SimContext,
    config: CircleConfig,
    domains: Arc<HashMap<u32, DynProvider>>,
    index: Arc<Mutex<Index>>,
}

impl std::fmt::Debug for CircleSimulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircleSimulator")
            .field("domains", &self.domains.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl CircleSimulator {
    /// Starts watching every CCTP chain of `devnet`.
    pub async fn start(
        devnet: &Devnet,
        ctx: SimContext,
        config: CircleConfig,
        poll: Duration,
    ) -> Result<(Self, Vec<tokio::task::JoinHandle<()>>), SimError> {
        let index: Arc<Mutex<Index>> = Arc::default();
        let mut domains = HashMap::new();
        let mut tasks = Vec::new();
        for c in devnet.chains() {
            let Some(cctp) = c.deployment.cctp.as_ref() else {
                continue;
            };
            let filter = Filter::new()
                .address(cctp.message_transmitter)
                .event_signature(MessageTransmitter::MessageSent::SIGNATURE_HASH);
            let (idx, domain) = (index.clone(), cctp.domain);
            let on_log = move |log: Log| {
                index_log(&idx, domain, log);
                async {}
            };
            tasks.push(watch_logs(c.chain_id, c.provider(), filter, poll, on_log).await?);
            domains.insert(cctp.domain, c.provider());
        }
        let circle = CircleSimulator {
            ctx,
            config,
            domains: Arc::new(domains),
            index,
        };
        Ok((circle, tasks))
    }
}

fn index_log(index: &Mutex<Index>, domain: u32, log: Log) {
    let (Some(tx), Some(block), Ok(ev)) = (
        log.transaction_hash,
        log.block_number,
        log.log_decode::<MessageTransmitter::MessageSent>(),
    ) else {
        return;
    };
    let message = ev.inner.data.message.to_vec();
    tracing::info!(domain, %tx, "circle simulator indexed a MessageSent");
    let entry = Indexed {
        message,
        block,
        polls: 0,
    };
    index
        .lock()
        .expect("circle index lock")
        .entry((domain, tx))
        .or_default()
        .push(entry);
}

/// The router: `GET /v2/messages/{sourceDomainId}`.
pub fn routes(c: CircleSimulator) -> Router {
    Router::new()
        .route("/v2/messages/{domain}", get(messages))
        .with_state(c)
}

#[tracing::instrument(skip_all, fields(simulator = "circle", domain))]
async fn messages(
    State(c): State<CircleSimulator>,
    Path(domain): Path<String>,
    Query(q): Query<Params>,
) -> Answer {
    c.ctx.faults.gate(&SHAPE).await?;
    let answer = |status| Err(SHAPE.respond(status).into());
    let Some((domain, provider)) = domain
        .parse::<u32>()
        .ok()
        .and_then(|d| Some((d, c.domains.get(&d)?)))
    else {
        let body = json!({"code": 400, "message": "Invalid sourceDomainId"});
        return Ok((StatusCode::BAD_REQUEST, Json(body)).into_response());
    };
    let head = provider.get_block_number().await.unwrap_or(0);
    let found = match (param(&q, "transactionHash"), param(&q, "nonce")) {
        (Some(h), _) => match h.parse::<B256>() {
            Ok(tx) => c.take_by_tx(domain, tx),
            Err(_) => return answer(StatusCode::BAD_REQUEST),
        },
        (None, Some(n)) => c.take_by_nonce(domain, n),
        (None, None) => return answer(StatusCode::BAD_REQUEST),
    };
    if found.is_empty() {
        return answer(StatusCode::NOT_FOUND);
    }
    let messages: Vec<Value> = found.iter().map(|m| c.render(m, head)).collect();
    Ok(Json(json!({ "messages": messages })).into_response())
}

impl CircleSimulator {
    /// The messages of burn `tx`, counting this poll.
    fn take_by_tx(&self, domain: u32, tx: B256) -> Vec<Indexed> {
        let mut idx = self.index.lock().expect("circle index lock");
        idx.get_mut(&(domain, tx))
            .map(|v| poll(v))
            .unwrap_or_default()
    }

    /// The message with `nonce` (hex), counting this poll.
    fn take_by_nonce(&self, domain: u32, nonce: &str) -> Vec<Indexed> {
        let Ok(nonce) = nonce.parse::<B256>() else {
            return Vec::new();
        };
        let mut idx = self.index.lock().expect("circle index lock");
        idx.iter_mut()
            .filter(|((d, _), _)| *d == domain)
            .flat_map(|(_, v)| v.iter_mut())
            .filter(|m| m.message.get(12..44) == Some(nonce.as_slice()))
            .map(|m| {
                m.polls += 1;
                m.clone()
            })
            .collect()
    }

    fn render(&self, m: &Indexed, head: u64) -> Value {
        let confirmed = head >= m.block + self.config.confirmations;
        if m.polls <= self.config.pending_polls || !confirmed {
            return json!({"message": "0x", "eventNonce": "", "attestation": "PENDING", "cctpVersion": 2,
                          "status": "pending_confirmations", "decodedMessage": null, "delayReason": null});
        }
        let attestation = attest_cctp_message(&keys::attester(), &m.message);
        json!({
            "message": hex0x(&m.message),
            "eventNonce": m.message.get(12..44).map(hex0x).unwrap_or_default(),
            "attestation": hex0x(&attestation),
            "cctpVersion": 2,
            "status": "complete",
            "decodedMessage": decode(&m.message),
            "delayReason": null,
        })
    }
}

fn poll(v: &mut [Indexed]) -> Vec<Indexed> {
    v.iter_mut()
        .map(|m| {
            m.polls += 1;
            m.clone()
        })
        .collect()
}

/// Circle's `decodedMessage` for a CCTP v2 message (layout in the devnet's
/// `Cctp.sol`), or null when it is too short.
fn decode(m: &[u8]) -> Value {
    let u32_at = |o: usize| {
        m.get(o..o + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let word = |o: usize| m.get(o..o + 32);
    let addr = |o: usize| word(o).map(|w| Address::from_slice(&w[12..]));
    let uint = |o: usize| word(o).map(|w| U256::from_be_slice(w).to_string());
    let body = m.get(148..).unwrap_or_default();
    let b = |o: usize| 148 + o;
    let decoded_body = json!({
        "burnToken": addr(b(4)), "mintRecipient": addr(b(36)), "amount": uint(b(68)),
        "messageSender": addr(b(100)), "maxFee": uint(b(132)), "feeExecuted": uint(b(164)),
        "expirationBlock": uint(b(196)), "hookData": m.get(b(228)..).map(hex0x),
    });
    if m.len() < 148 {
        return Value::Null;
    }
    json!({
        "sourceDomain": u32_at(4).map(|d| d.to_string()),
        "destinationDomain": u32_at(8).map(|d| d.to_string()),
        "nonce": word(12).map(hex0x),
        "sender": addr(44), "recipient": addr(76), "destinationCaller": addr(108),
        "minFinalityThreshold": u32_at(140).map(|d| d.to_string()),
        "finalityThresholdExecuted": u32_at(144).map(|d| d.to_string()),
        "messageBody": hex0x(body),
        "decodedMessageBody": decoded_body,
    })
}
