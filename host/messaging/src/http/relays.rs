//! `GET /api/relay/directory` and `POST /api/relay/announce` (spec
//! §4.10): the relay directory's adapter over the witness log.

use axum::{extract::State, Json};
use relay_errors::{ApiError, ErrorBody};
use relay_feature::edge::JsonObject;
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::{service, store_error, Messaging};
use crate::{
    errors,
    relays::{AnnounceError, Announcement, RelayListed},
};

/// The relay directory.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelayDirectory {
    /// The witness log's size it reflects.
    pub size: u64,
    /// Unexpired relays, by URL.
    pub relays: Vec<RelayListed>,
    /// SHA-256 of `relays` as this JSON array, hex: equal for every reader
    /// at one size and time.
    pub sha256: String,
}

fn refused(e: AnnounceError) -> ApiError {
    let (code, field) = match &e {
        AnnounceError::Invalid { field, .. } => (errors::RelayAnnounceInvalid, *field),
        AnnounceError::Stale { .. } => (errors::RelayAnnounceStale, "ts"),
        AnnounceError::Expired { .. } => (errors::RelayAnnounceExpired, "expires"),
        AnnounceError::Signature => (errors::RelayAnnounceSignatureInvalid, "sig"),
    };
    ApiError::new(code, e.to_string()).field(field)
}

#[utoipa::path(get, path = "/api/relay/directory", tag = "messages",
    summary = "Oblivious relays operators announced (the latest unexpired announcement of each announcer key), the same for every reader; every announcement is in the witness log",
    responses((status = 200, description = "The directory", body = RelayDirectory), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn directory(
    State(m): State<Messaging>,
) -> Result<Json<RelayDirectory>, ApiError> {
    let svc = service(&m)?;
    let (relays, size) = svc
        .witness()
        .relays(svc.now_ms())
        .await
        .map_err(store_error)?;
    let bytes = serde_json::to_vec(&relays).expect("relays serialize");
    Ok(Json(RelayDirectory {
        size,
        sha256: hex::encode(Sha256::digest(&bytes)),
        relays,
    }))
}

#[utoipa::path(post, path = "/api/relay/announce", tag = "messages",
    summary = "Announce an oblivious relay: {url, key, expires, ts, announcer, sig}, Ed25519-signed (the text GET /api/messages/v2/info documents); appended to the witness log",
    request_body = Announcement,
    responses((status = 200, description = "Listed; its witness entry", body = RelayListed), (status = "default", description = "A typed error (RELAY_ANNOUNCE_INVALID, _STALE, _EXPIRED, _SIGNATURE_INVALID, 409 RELAY_ANNOUNCE_REPLAYED)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn announce(
    State(m): State<Messaging>,
    body: JsonObject,
) -> Result<Json<RelayListed>, ApiError> {
    let a: Announcement = body.decode()?;
    let svc = service(&m)?;
    let now = svc.now_ms();
    a.verify(now, svc.config().max_skew_ms).map_err(refused)?;
    svc.witness()
        .announce(&a, now)
        .await
        .map(Json)
        .map_err(|e| super::outcome_error(e, errors::RelayAnnounceReplayed))
}
