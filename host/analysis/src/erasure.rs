//! Erasure requests and statements (spec §8.2: "erasure statements after
//! 7 days").
//!
//! An address's owner asks for its routes to be erased by signing, as an
//! EIP-191 personal message, exactly
//! `relay-erasure:v1:address=<lower-case address>:issuedAt=<epoch ms>`
//! ([`request_text`]) within [`REQUEST_WINDOW_MS`] of the host's clock.
//! Then:
//!
//! 1. at once, and at every retention tick after, each settled route that
//!    names the address (as sender or recipient, as itself or as its
//!    retention tag) is erased: both counterparties that are the address
//!    become [`ERASED`] and everything else [`crate::retention::scrub`]
//!    drops goes too (signatures, plan, journal payloads, outbox payloads,
//!    the idempotent response). A route still in flight keeps the address
//!    until it settles — it needs it to deliver — and is erased at the
//!    first tick after;
//! 2. the request keeps the address (to find those routes) only until it
//!    completes, then only its keyed tag;
//! 3. the request completes at its first tick at or after
//!    [`STATEMENT_AFTER_MS`] (7 days) once no route in flight names the
//!    address; from then on `GET /api/erasure/status` answers the signed
//!    erasure statement ([`Statement`], scheme [`SCHEME`]): canonical JSON
//!    signed by the relayer key as an EIP-191 personal message, like the
//!    spend statement. The 7 days are the operator's bound on backups and
//!    logs that may still hold the address: the statement attests the
//!    state after they have aged out.
//!
//! The erased routes keep their amounts, fees, chains and transaction
//! hashes (the service's own accounts); nothing in them names or recovers
//! to the address.

use alloy::primitives::Address;
use relay_chain::signer::RelayerSigner;
use relay_engine::attest::AttestError;
use relay_store::{ErasureRow, Store, StoreError};
use relay_types::route::RouteRecord;
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::retention::{scrub_with, Tagger};

/// The statement scheme.
pub const SCHEME: &str = "relay-erasure-v1";
/// What an erased counterparty becomes (a tag no address maps to).
pub const ERASED: &str = "tag_erased";
/// How far a request's `issuedAt` may be from the host's clock, ms.
pub const REQUEST_WINDOW_MS: u64 = 600_000;
/// When the statement is issued after the request, ms (7 days).
pub const STATEMENT_AFTER_MS: u64 = 7 * 86_400_000;
/// Routes looked at per pass.
const PASS_LIMIT: u32 = 5_000;

/// Why a request is refused.
#[derive(Debug, thiserror::Error)]
pub enum ErasureError {
    /// `address` is not an address.
    #[error("address: not a 0x-prefixed 20-byte address")]
    Address,
    /// `issuedAt` is too far from now.
    #[error("issuedAt: must be within 10 minutes of the host's clock ({now_ms} ms now)")]
    Stale {
        /// The host's clock.
        now_ms: u64,
    },
    /// The signature does not parse, is high-s, or is not the address's.
    #[error("signature: {0}")]
    Signature(String),
}

/// The exact text an erasure request signs.
pub fn request_text(address: &Address, issued_at_ms: u64) -> String {
    format!(
        "relay-erasure:v1:address={}:issuedAt={issued_at_ms}",
        format!("{address:#x}").to_lowercase()
    )
}

/// Checks a request: the address parses, `issued_at_ms` is within the
/// window, and `signature` (65 bytes hex, low-s) recovers to the address
/// over [`request_text`].
pub fn verify_request(
    address: &str,
    issued_at_ms: u64,
    signature: &str,
    now_ms: u64,
) -> Result<Address, ErasureError> {
    let a: Address = address.parse().map_err(|_| ErasureError::Address)?;
    if now_ms.abs_diff(issued_at_ms) > REQUEST_WINDOW_MS {
        return Err(ErasureError::Stale { now_ms });
    }
    let signer = relay_chain::personal::signer(&request_text(&a, issued_at_ms), signature)
        .map_err(|e| ErasureError::Signature(e.to_string()))?;
    if signer != a {
        return Err(ErasureError::Signature(format!(
            "recovers to {signer}, not to the address"
        )));
    }
    Ok(a)
}

/// A new pending request for `address` made at `now_ms`.
pub fn new_request(address: &Address, tagger: &Tagger, now_ms: u64) -> ErasureRow {
    let text = format!("{address:#x}");
    let tag = tagger.tag(&text);
    let id = Sha256::new()
        .chain_update(tag.as_bytes())
        .chain_update(now_ms.to_be_bytes())
        .finalize();
    ErasureRow {
        id: format!("er_{}", hex::encode(&id[..12])),
        tag,
        address: text,
        requested_ms: now_ms,
        due_ms: now_ms.saturating_add(STATEMENT_AFTER_MS),
        routes_erased: 0,
        in_flight: 0,
        completed_ms: None,
    }
}

/// `r` with every counterparty that is `address` erased.
pub fn erase(r: &RouteRecord, address: &str, tagger: &Tagger) -> RouteRecord {
    scrub_with(r, |who| {
        if tagger.matches(who, address) {
            ERASED.to_string()
        } else {
            who.to_string()
        }
    })
}

/// One pass over a pending request at `now_ms`: erases its settled routes,
/// counts those in flight, completes it when due and none is in flight.
/// Returns the request as it stands after the pass.
pub async fn pass(
    store: &Store,
    tagger: &Tagger,
    row: &ErasureRow,
    now_ms: u64,
) -> Result<ErasureRow, StoreError> {
    let needles = [row.address.clone(), row.tag.clone()];
    let found = store.routes_mentioning(&needles, PASS_LIMIT).await?;
    let (mut erased, mut in_flight) = (0u64, 0u64);
    for (r, version, terminal) in found {
        let names =
            tagger.matches(&r.sender, &row.address) || tagger.matches(&r.recipient, &row.address);
        if !names {
            continue;
        }
        if !terminal {
            in_flight += 1;
        } else if store
            .scrub_route(&erase(&r, &row.address, tagger), version)
            .await?
        {
            erased += 1;
        } else {
            // It moved on between read and write: the next tick sees it.
            in_flight += 1;
        }
    }
    let completed = (now_ms >= row.due_ms && in_flight == 0).then_some(now_ms);
    store
        .advance_erasure(&row.id, (erased, in_flight), completed)
        .await?;
    Ok(store.erasure(&row.id).await?.unwrap_or_else(|| row.clone()))
}

/// Passes over every pending request (the retention job's tick). Returns
/// how many routes were erased.
pub async fn tick(store: &Store, tagger: &Tagger, now_ms: u64) -> Result<u64, StoreError> {
    let mut total = 0;
    for row in store.pending_erasures().await? {
        let before = row.routes_erased;
        total += pass(store, tagger, &row, now_ms)
            .await?
            .routes_erased
            .saturating_sub(before);
    }
    Ok(total)
}

/// The erasure statement that is signed.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Statement {
    /// [`SCHEME`].
    pub scheme: String,
    /// The request.
    pub id: String,
    /// The address (as the owner asked for the statement).
    pub address: String,
    /// When asked, epoch ms.
    pub requested_at: u64,
    /// When completed, epoch ms.
    pub completed_at: u64,
    /// Routes erased.
    pub routes_erased: u64,
    /// Always `0`: the request completes only when none is in flight.
    pub routes_naming_address: u64,
    /// What was erased, in words.
    pub scope: String,
    /// When made, epoch ms.
    pub issued_at: u64,
}

/// A statement with its signature.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedErasure {
    /// The statement.
    pub statement: Statement,
    /// `statement` as canonical JSON: what was signed.
    pub message: String,
    /// Who signed (the relayer); absent without a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// EIP-191 signature of `message`; absent without a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The signed statement of the completed request `row`, for `address`.
pub fn statement(
    row: &ErasureRow,
    address: &str,
    signer: Option<&RelayerSigner>,
    now_ms: u64,
) -> Result<Option<SignedErasure>, AttestError> {
    let Some(completed_at) = row.completed_ms else {
        return Ok(None);
    };
    let statement = Statement {
        scheme: SCHEME.into(),
        id: row.id.clone(),
        address: address.to_lowercase(),
        requested_at: row.requested_ms,
        completed_at,
        routes_erased: row.routes_erased,
        routes_naming_address: 0,
        scope: "route records and what is kept about them (signatures, plans, journal payloads, webhook payloads, idempotent responses); the request itself keeps only a keyed tag".into(),
        issued_at: now_ms,
    };
    let p = crate::statement::seal_parts(&statement, signer)?;
    Ok(Some(SignedErasure {
        statement,
        message: p.message,
        signer: p.signer,
        signature: p.signature,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::signers::{local::PrivateKeySigner, SignerSync};

    fn signed(key: &PrivateKeySigner, at: u64) -> String {
        let text = request_text(&key.address(), at);
        key.sign_message_sync(text.as_bytes()).unwrap().to_string()
    }

    #[test]
    fn a_request_is_the_owners_and_recent() {
        let key = PrivateKeySigner::random();
        let now = 1_800_000_000_000;
        let a = key.address().to_string();
        assert_eq!(
            verify_request(&a, now, &signed(&key, now), now + 1).unwrap(),
            key.address()
        );
        let other = PrivateKeySigner::random();
        assert!(matches!(
            verify_request(&a, now, &signed(&other, now), now),
            Err(ErasureError::Signature(_))
        ));
        assert!(matches!(
            verify_request(&a, now, &signed(&key, now), now + REQUEST_WINDOW_MS + 1),
            Err(ErasureError::Stale { .. })
        ));
        assert!(matches!(
            verify_request("0x12", now, &signed(&key, now), now),
            Err(ErasureError::Address)
        ));
        // The text signed is for one time: another issuedAt does not verify.
        assert!(verify_request(&a, now + 1, &signed(&key, now), now).is_err());
    }

    #[test]
    fn erasing_keeps_the_other_counterparty_and_the_amounts() {
        let t = Tagger::new(b"k");
        let mut r = crate::outcome::tests_support::route();
        r.recipient = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC".into();
        let e = erase(&r, &r.sender, &t);
        assert_eq!(e.sender, ERASED);
        assert_eq!(e.recipient, r.recipient);
        assert_eq!((e.amount, e.status), (r.amount, r.status));
        let tagged = crate::retention::scrub(&r, &t);
        assert_eq!(erase(&tagged, &r.sender, &t).sender, ERASED);
        assert!(crate::retention::is_tag(ERASED));
    }
}
