//! Circle's attestation service ("Iris"), CCTP API v2:
//! `GET {attestation_base}/v2/messages/{sourceDomainId}?transactionHash=0x…`
//! (developers.circle.com, CCTP OpenAPI 1.0, "Get messages and
//! attestations").
//!
//! The answer is `{"messages": [{"message", "eventNonce", "attestation",
//! "cctpVersion", "status", "decodedMessage", "delayReason"}]}`, one entry per
//! `MessageSent` of the transaction in log order. `status` is
//! `pending_confirmations` (attestation `"PENDING"`, message possibly `"0x"`)
//! until the source reaches the requested finality, then `complete` with the
//! message bytes and the attestation signature(s). A 404 is Circle's
//! documented "not observed yet — keep polling", not a failure; 429 means the
//! caller exceeded the rate limit.

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

/// One entry of `messages`.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    message: String,
    #[serde(default)]
    attestation: Option<String>,
    status: String,
}

#[derive(Clone, Debug, Deserialize)]
struct Messages {
    messages: Vec<Message>,
}

/// Where the attestation of a burn stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attestation {
    /// Circle has not observed the burn yet (404).
    NotObserved,
    /// Observed, waiting for finality; the upstream's status word.
    Pending(String),
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
        let bytes = decode_hex(&entry.message).ok_or_else(|| {
            IRIS.malformed(format!("message {:?} is not 0x-hex", clip(&entry.message)))
        })?;
        let Some(dest) = header_u32(&bytes, DESTINATION_DOMAIN_AT) else {
            pending.get_or_insert_with(|| entry.status.clone());
            continue;
        };
        if dest != destination_domain {
            continue;
        }
        if entry.status != "complete" {
            return Ok(Attestation::Pending(entry.status.clone()));
        }
        let attestation = entry
            .attestation
            .as_deref()
            .and_then(decode_hex)
            .filter(|a| !a.is_empty() && a.len().is_multiple_of(65))
            .ok_or_else(|| IRIS.malformed("a complete message without a hex attestation"))?;
        return Ok(Attestation::Complete {
            message: bytes,
            attestation,
        });
    }
    match pending {
        Some(status) => Ok(Attestation::Pending(status)),
        None => Err(RailError::new(
            RailErrorKind::UpstreamMalformed,
            format!("Circle attestation API: the transaction holds no message for domain {destination_domain}"),
        )),
    }
}

fn header_u32(message: &[u8], at: usize) -> Option<u32> {
    let b = message.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn clip(s: &str) -> String {
    s.chars().take(24).collect()
}
