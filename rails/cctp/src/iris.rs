//! Circle's attestation service ("Iris"), CCTP API v2:
//! `GET {attestation_base}/v2/messages/{sourceDomainId}?transactionHash=0x…`
//! (developers.circle.com, CCTP OpenAPI 1.0, "Get messages and
//! attestations").
//!
//! The answer is `{"messages": [{"message", "eventNonce", "attestation",
//! "cctpVersion", "status", "decodedMessage", "delayReason"}]}`, one entry per
//! `MessageSent` of the transaction in log order. `status` is
//! `pending_confirmations` (attestation `"PENDING"`, message possibly `"0x"`,
//! `decodedMessage` null) until the source reaches the requested finality,
//! then `complete` with the message bytes and the attestation signature(s).
//! `delayReason` (e.g. `insufficient_fee`) says why an attestation waits.
//! Circle's own Go client (`circlefin/cctp-go`) also names the pending word
//! `pending`. A 404 is Circle's documented "not observed yet — keep
//! polling", not a failure; 429 means the caller exceeded the rate limit.
//!
//! | Circle's answer | [`Attestation`] |
//! |---|---|
//! | 404, or 200 with `messages: []` | `NotObserved` |
//! | the entry for our destination, `pending_confirmations` or `pending` | `Pending` (with `delayReason`) |
//! | the entry for our destination, another `status` (or none) | `Unknown` (pending, reported) |
//! | the entry for our destination, `complete` with message and 65·n-byte attestation | `Complete` |
//! | `complete` without a hex attestation, or with a message too short for a CCTP header | `UPSTREAM_MALFORMED` |
//! | entries whose message is not available yet (`"0x"`, absent), none for our destination | `Pending` |
//! | every entry readable, none for our destination | `UPSTREAM_MALFORMED` |
//! | a 200 body that is not `{messages: [...]}`, a message that is not hex | `UPSTREAM_MALFORMED` |
//! | 400 | `INVALID_INPUT` |
//! | 429, 5xx | `UPSTREAM`, retryable |

use relay_plugin_api::{Host, HttpRequest, RailError, RailErrorKind};
use relay_rail_sdk::{
    evm_abi::decode_hex,
    upstream::{error_report, query_string},
    Upstream,
};
use serde::Deserialize;

/// The attestation API.
pub const IRIS: Upstream = Upstream {
    name: "Circle attestation API",
    default_base: "https://iris-api.circle.com",
};

/// Circle's sandbox (testnet) attestation API host.
pub const IRIS_SANDBOX_HOST: &str = "iris-api-sandbox.circle.com";

/// Byte offset of `destinationDomain` in a CCTP v2 message header.
const DESTINATION_DOMAIN_AT: usize = 8;

/// The base URL: `attestation_base` from the rail's configuration, else Circle's.
pub fn base_url(host: &dyn Host) -> String {
    host.config("attestation_base")
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| IRIS.default_base.to_string())
}

/// The request for the messages of `tx_hash` burned on `source_domain`.
pub fn messages_request(host: &dyn Host, source_domain: u32, tx_hash: &str) -> HttpRequest {
    let query = query_string(&[("transactionHash", tx_hash.to_string())]);
    HttpRequest::get(format!(
        "{}/v2/messages/{source_domain}{query}",
        base_url(host)
    ))
}

/// One entry of `messages` (the fields the rail reads; Circle's examples
/// show every one of them absent, null or a placeholder at some stage).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    attestation: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    delay_reason: Option<String>,
}

impl Message {
    fn status(&self) -> &str {
        self.status.as_deref().unwrap_or("")
    }
}

/// Circle's status word for a signed message.
const COMPLETE: &str = "complete";
/// Circle's status words for an observed message waiting for finality: the
/// documented one, and the one Circle's Go client uses.
const PENDING_WORDS: [&str; 2] = ["pending_confirmations", "pending"];

#[derive(Clone, Debug, Deserialize)]
struct Messages {
    messages: Vec<Message>,
}

/// Where the attestation of a burn stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attestation {
    /// Circle has not observed the burn yet (404, or no messages).
    NotObserved,
    /// Observed, waiting for finality (`pending_confirmations`).
    Pending {
        /// The upstream's status word.
        status: String,
        /// Circle's `delayReason`, when it gives one.
        delay_reason: Option<String>,
    },
    /// Observed with a status word Circle does not document: pending,
    /// reported.
    Unknown(String),
    /// Signed: the message and attestation `receiveMessage` takes.
    Complete {
        /// The message bytes.
        message: Vec<u8>,
        /// The attestation (one or more 65-byte signatures).
        attestation: Vec<u8>,
    },
}

/// Asks Circle about `tx_hash` and reads the message bound for
/// `destination_domain`.
pub fn fetch(
    host: &dyn Host,
    source_domain: u32,
    destination_domain: u32,
    tx_hash: &str,
) -> Result<Attestation, RailError> {
    let resp = IRIS.send(host, messages_request(host, source_domain, tx_hash))?;
    match resp.status {
        200 => parse(&resp.body, destination_domain),
        404 => Ok(Attestation::NotObserved),
        429 => Err(RailError::upstream(
            "Circle attestation API: rate limit exceeded (429); back off before polling again",
        )),
        _ => Err(IRIS.status_error(&error_report(&resp))),
    }
}

/// Reads a 200 body: the entry whose message header names
/// `destination_domain` (entries whose message is not yet available count as
/// pending).
pub fn parse(body: &[u8], destination_domain: u32) -> Result<Attestation, RailError> {
    let m: Messages = IRIS.parse("messages", body)?;
    if m.messages.is_empty() {
        return Ok(Attestation::NotObserved);
    }
    let mut pending = None;
    for entry in &m.messages {
        let raw = entry
            .message
            .as_deref()
            .filter(|m| !m.is_empty())
            .unwrap_or("0x");
        let bytes = decode_hex(raw)
            .ok_or_else(|| IRIS.malformed(format!("message {:?} is not 0x-hex", clip(raw))))?;
        let Some(dest) = header_u32(&bytes, DESTINATION_DOMAIN_AT) else {
            if entry.status() == COMPLETE {
                return Err(IRIS.malformed(format!(
                    "a complete message of {} bytes is too short for a CCTP header",
                    bytes.len()
                )));
            }
            pending.get_or_insert_with(|| waiting(entry));
            continue;
        };
        if dest == destination_domain {
            return read_entry(entry, bytes);
        }
    }
    pending.ok_or_else(|| {
        RailError::new(
            RailErrorKind::UpstreamMalformed,
            format!("Circle attestation API: the transaction holds no message for domain {destination_domain}"),
        )
    })
}

/// The entry bound for the route's destination.
fn read_entry(entry: &Message, message: Vec<u8>) -> Result<Attestation, RailError> {
    if entry.status() != COMPLETE {
        return Ok(waiting(entry));
    }
    let attestation = entry
        .attestation
        .as_deref()
        .and_then(decode_hex)
        .filter(|a| !a.is_empty() && a.len().is_multiple_of(65))
        .ok_or_else(|| IRIS.malformed("a complete message without a hex attestation"))?;
    Ok(Attestation::Complete {
        message,
        attestation,
    })
}

/// An entry that is not signed yet: pending when Circle says so, else
/// an unknown status, reported.
fn waiting(entry: &Message) -> Attestation {
    let status = entry.status();
    if PENDING_WORDS.contains(&status) {
        Attestation::Pending {
            status: status.to_string(),
            delay_reason: entry.delay_reason.clone().filter(|d| !d.is_empty()),
        }
    } else {
        Attestation::Unknown(clip(status))
    }
}

fn header_u32(message: &[u8], at: usize) -> Option<u32> {
    let b = message.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn clip(s: &str) -> String {
    s.chars().take(24).collect()
}
