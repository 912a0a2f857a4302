//! `POST /api/messages/v2/handle/transfer` (spec §4.10): a name moves from
//! its owner to a receiver with two signatures — the owner's release and
//! the receiver's accept — and the move is appended to the witness log.
//! The name must be registered and owned by `from` (`NAME_NOT_FOUND`,
//! `NAME_NOT_OWNER`); a transfer's accept time must be later than the
//! name's latest entry (a replayed transfer is refused). The new owner
//! keeps the registration's expiry.
//!
//! The texts (EIP-191, lowercase addresses, no final newline):
//!
//! ```text
//! relay/messages/v2 handle release
//! name: alice
//! from: 0x…
//! to: 0x…
//! ts: 1764480000000
//! ```
//!
//! and the same with `handle accept` on the first line, signed by `to`.

use axum::{extract::State, Json};
use relay_errors::{ApiError, ErrorBody};
use relay_feature::edge::JsonObject;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{service, Messaging};
use crate::{errors, mailbox, names::Moved};

/// One side's signature.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Signed {
    /// When it was signed, ms.
    pub ts: u64,
    /// EIP-191 signature, `0x` and 65 bytes.
    pub sig: String,
}

/// A transfer.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferRequest {
    /// The name.
    pub name: String,
    /// Its owner.
    pub from: String,
    /// The receiver.
    pub to: String,
    /// The owner's release.
    pub release: Signed,
    /// The receiver's accept.
    pub accept: Signed,
}

/// A transfer that landed.
#[derive(Debug, Serialize, ToSchema)]
pub struct Transferred {
    /// The name.
    pub name: String,
    /// Its new owner.
    pub owner: String,
    /// The witness entry.
    pub s: u64,
}

/// The text one side signs.
pub fn text(side: &str, name: &str, from: &str, to: &str, ts: u64) -> String {
    format!("relay/messages/v2 handle {side}\nname: {name}\nfrom: {from}\nto: {to}\nts: {ts}")
}

fn check_side(
    side: &'static str,
    t: &TransferRequest,
    s: &Signed,
    signer: &str,
    now_ms: u64,
    skew: u64,
) -> Result<(), ApiError> {
    let bad = |why: String| {
        ApiError::new(errors::TransferSignatureInvalid, format!("{side}: {why}")).field(side)
    };
    if now_ms.abs_diff(s.ts) > skew {
        return Err(bad(format!(
            "ts is more than {skew} ms from the host's clock"
        )));
    }
    let got = mailbox::signer_of(&text(side, &t.name, &t.from, &t.to, s.ts), &s.sig)
        .map_err(|e| bad(format!("sig: {e}")))?;
    match mailbox::lower(&got) == signer {
        true => Ok(()),
        false => Err(bad(format!(
            "sig recovers to {}, not to {signer}",
            mailbox::lower(&got)
        ))),
    }
}

#[utoipa::path(post, path = "/api/messages/v2/handle/transfer", tag = "messages",
    summary = "Move a name: the owner's signed release and the receiver's signed accept",
    request_body = TransferRequest,
    responses((status = 200, description = "Moved; its witness entry", body = Transferred), (status = "default", description = "A typed error (TRANSFER_SIGNATURE_INVALID, 404 NAME_NOT_FOUND)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn transfer(
    State(m): State<Messaging>,
    body: JsonObject,
) -> Result<Json<Transferred>, ApiError> {
    let mut t: TransferRequest = body.decode()?;
    let svc = service(&m)?;
    let field = |f: &'static str| {
        move |e: mailbox::PublishError| {
            ApiError::new(relay_errors::ErrorCode::InvalidField, e.to_string()).field(f)
        }
    };
    t.from = mailbox::lower(&mailbox::address_field("from", &t.from).map_err(field("from"))?);
    t.to = mailbox::lower(&mailbox::address_field("to", &t.to).map_err(field("to"))?);
    let (now, skew) = (svc.now_ms(), svc.config().max_skew_ms);
    t.name = crate::names::normalize(&t.name)
        .map_err(|e| ApiError::new(errors::NameInvalid, e.to_string()).field("name"))?;
    check_side("release", &t, &t.release, &t.from, now, skew)?;
    check_side("accept", &t, &t.accept, &t.to, now, skew)?;
    let moved = Moved {
        name: t.name.clone(),
        from: t.from.clone(),
        to: t.to.clone(),
        release: (t.release.ts, t.release.sig.to_ascii_lowercase()),
        accept: (t.accept.ts, t.accept.sig.to_ascii_lowercase()),
    };
    let record = svc
        .witness()
        .transfer(&moved, now)
        .await
        .map_err(|e| super::outcome_error(e, errors::NameReplayed))?;
    Ok(Json(Transferred {
        name: record.name,
        owner: record.owner,
        s: record.s,
    }))
}
