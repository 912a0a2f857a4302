//! The privacy lane's HTTP adapter (spec §4.11): `GET /api/ohttp/keys`,
//! `POST /api/ohttp/gateway` and `GET /api/privacy/noop`. Thin over
//! [`PrivacyService`]: read, call, shape. The host mounts it through
//! [`feature`]; both gateway paths' buckets never record their callers
//! ([`Limit::unrecorded`]).

use std::sync::Arc;

use axum::{
    body::Bytes,
    extract::{Query, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody};
use relay_feature::{Feature, HasHandles, Limit, Section};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{errors, pad::RESPONSE_FLOOR, PrivacyService};

/// The gateway's path.
pub const GATEWAY_PATH: &str = "/api/ohttp/gateway";
/// The encapsulated request's media type (RFC 9458 §9.2).
pub const REQUEST_MEDIA_TYPE: &str = "message/ohttp-req";
/// The encapsulated response's media type (RFC 9458 §9.3).
pub const RESPONSE_MEDIA_TYPE: &str = "message/ohttp-res";
/// A chunked encapsulated request's media type
/// (draft-ietf-ohai-chunked-ohttp).
pub const CHUNKED_REQUEST_MEDIA_TYPE: &str = "message/ohttp-chunked-req";
/// A chunked encapsulated response's media type.
pub const CHUNKED_RESPONSE_MEDIA_TYPE: &str = "message/ohttp-chunked-res";
/// The key configuration list's media type (RFC 9540 §3).
pub const KEYS_MEDIA_TYPE: &str = "application/ohttp-keys";
/// The no-op's path.
pub const NOOP_PATH: &str = "/api/privacy/noop";

/// The handle the handlers take: the service, or `None` when the lane is
/// off.
#[derive(Clone)]
pub struct Privacy(pub Option<Arc<PrivacyService>>);

/// The gateway carries a relay's traffic (many clients behind one
/// address), so its bucket is wide; the no-op is sent at a constant rate.
/// Neither records who sent it.
pub(crate) const LIMITS: &[Limit] = &[
    Limit::get("ohttp-keys", "/api/ohttp/keys", 60),
    Limit::post("ohttp-gateway", GATEWAY_PATH, 600).unrecorded(),
    Limit::get("privacy-noop", NOOP_PATH, 240).unrecorded(),
    Limit::get("privacy-policy", "/api/privacy/policy", 60),
    Limit::get("privacy-conformance", "/api/privacy/conformance", 20),
    Limit::get("stealth-coverproof", "/api/stealth/coverproof", 30),
];

/// The privacy lane (spec §4.11), as the host registers it.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "privacy",
        home: "host/privacy",
        spec: "§4.11",
        section: Some(Section {
            name: crate::SECTION,
            check: crate::config::check,
        }),
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(crate::start),
    }
}

fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    let p = Privacy(s.handles().get::<Option<Arc<PrivacyService>>>().flatten());
    OpenApiRouter::new()
        .routes(routes!(keys))
        .routes(routes!(gateway))
        .routes(routes!(noop))
        .routes(routes!(policy))
        .routes(routes!(conformance))
        .routes(routes!(coverproof))
        .with_state(p)
}

fn service(p: &Privacy) -> Result<&Arc<PrivacyService>, ApiError> {
    p.0.as_ref().ok_or_else(|| {
        ApiError::new(
            errors::PrivacyDisabled,
            "this host does not serve the privacy lane",
        )
    })
}

/// One key configuration with its witness log entry
/// (`GET /api/ohttp/keys` with `Accept: application/json`).
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct WitnessedKey {
    /// Its witness log entry's number (`s` in
    /// `/api/messages/v2/witness/range`).
    pub s: u64,
    /// The entry's exact body: SHA-256 of it is that entry's `b`.
    pub body: String,
    /// `body`, decoded.
    pub key: crate::keys::KeyEntry,
}

/// The key list as JSON.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyList {
    /// The epoch.
    pub epoch: u64,
    /// When the next epoch's keys are served, epoch ms.
    pub rotates_at: u64,
    /// The `application/ohttp-keys` bytes, hex.
    pub list: String,
    /// Each configuration with its witness log entry, X-Wing first.
    pub witnessed: Vec<WitnessedKey>,
}

/// `GET /api/ohttp/keys`.
#[utoipa::path(get, path = "/api/ohttp/keys", tag = "privacy",
    summary = "The gateway's key configurations (RFC 9458 §3, application/ohttp-keys): X-Wing first, X25519 as the fallback, each logged in the witness log before it is served; cacheable until the keys rotate. With Accept: application/json: the same list with each configuration's witness log entry, to check it is the one every reader is given",
    responses((status = 200, description = "The encoded key configuration list (or, asked for JSON, the list with its witness entries)", content((Vec<u8> = "application/ohttp-keys"), (KeyList = "application/json"))), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn keys(State(p): State<Privacy>, headers: HeaderMap) -> Result<Response, ApiError> {
    let svc = service(&p)?;
    let (keys, logged) = svc.witnessed_keys().await.map_err(|e| {
        tracing::warn!(error = %e, "ohttp keys not served");
        ApiError::new(relay_errors::ErrorCode::StoreUnavailable, "retry")
    })?;
    let now = svc.clock.now_ms();
    let rotates_at = svc.next_rotation_ms();
    let max_age = rotates_at.saturating_sub(now) / 1_000;
    let cache = HeaderValue::from_str(&format!("public, max-age={max_age}"))
        .expect("a number is a header value");
    let json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/json"));
    if json {
        let witnessed = logged
            .into_iter()
            .zip(&keys.entries)
            .map(|((s, body), key)| WitnessedKey {
                s,
                body,
                key: key.clone(),
            })
            .collect();
        let list = KeyList {
            epoch: keys.epoch,
            rotates_at,
            list: hex::encode(&keys.list),
            witnessed,
        };
        return Ok(([(header::CACHE_CONTROL, cache)], Json(list)).into_response());
    }
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(KEYS_MEDIA_TYPE),
            ),
            (header::CACHE_CONTROL, cache),
        ],
        keys.list.clone(),
    )
        .into_response())
}

/// `POST /api/ohttp/gateway`.
#[utoipa::path(post, path = "/api/ohttp/gateway", tag = "privacy",
    summary = "The oblivious gateway (RFC 9458): an encapsulated BHTTP request to an allowlisted operation, padded to 16384 bytes, in; its encapsulated answer, padded to 8192 bytes, out. Refusals after opening are inside the encapsulation",
    request_body(description = "An encapsulated request, whole or chunked", content((Vec<u8> = "message/ohttp-req"), (Vec<u8> = "message/ohttp-chunked-req"))),
    responses((status = 200, description = "The encapsulated response (chunked for a chunked request, in 8192-byte chunks)", content((Vec<u8> = "message/ohttp-res"), (Vec<u8> = "message/ohttp-chunked-res"))), (status = "default", description = "A typed error in the clear: the request did not open (OHTTP_KEY_UNKNOWN, OHTTP_MALFORMED)", body = ErrorBody)))]
async fn gateway(
    State(p): State<Privacy>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let svc = service(&p)?;
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let (sealed, answered) = match media {
        Some(REQUEST_MEDIA_TYPE) => (svc.gateway.answer(&body).await?, RESPONSE_MEDIA_TYPE),
        Some(CHUNKED_REQUEST_MEDIA_TYPE) => (
            svc.gateway.answer_chunked(&body).await?,
            CHUNKED_RESPONSE_MEDIA_TYPE,
        ),
        _ => {
            return Err(ApiError::new(
                relay_errors::ErrorCode::UnsupportedMediaType,
                format!("the gateway reads {REQUEST_MEDIA_TYPE} or {CHUNKED_REQUEST_MEDIA_TYPE}"),
            )
            .field("content-type"))
        }
    };
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(answered)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        sealed,
    )
        .into_response())
}

/// The no-op's body size: through the gateway, with its headers, it seals
/// to exactly [`RESPONSE_FLOOR`] bytes like every small answer.
pub const NOOP_BYTES: usize = RESPONSE_FLOOR - 1_024;

/// The no-op's answer: `{"ok":true,"pad":"…"}`, exactly [`NOOP_BYTES`].
fn noop_body() -> Vec<u8> {
    let head = br#"{"ok":true,"pad":""#;
    let tail = br#""}"#;
    let mut b = Vec::with_capacity(NOOP_BYTES);
    b.extend_from_slice(head);
    b.resize(NOOP_BYTES - tail.len(), b'0');
    b.extend_from_slice(tail);
    b
}

/// `GET /api/privacy/noop`.
#[utoipa::path(get, path = "/api/privacy/noop", tag = "privacy",
    summary = "Does nothing, statelessly and unlogged: 7168 bytes of JSON that seal through the gateway to 8192 bytes like every small answer, for constant-rate cover traffic",
    responses((status = 200, description = "`{ok: true, pad}`, 7168 bytes", body = Object), (status = "default", description = "A typed error", body = ErrorBody)))]
async fn noop(State(p): State<Privacy>) -> Result<Response, ApiError> {
    service(&p)?;
    Ok((
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        noop_body(),
    )
        .into_response())
}

fn store_error(e: relay_store::StoreError) -> ApiError {
    tracing::warn!(error = %e, "privacy store");
    ApiError::new(
        relay_errors::ErrorCode::StoreUnavailable,
        "the store is unreachable; retry",
    )
}

/// One entry of the policy log as served.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct PolicyEntry {
    /// Its number, from 1.
    pub seq: u64,
    /// The exact JSON its hash covers (a [`crate::policy::Body`]).
    pub body: String,
    /// SHA-256 of the previous entry's hash (32 zero bytes before the
    /// first) followed by `body`, hex.
    pub hash: String,
    /// Ed25519 signature of the 32-byte hash by `publicKey`, hex.
    pub sig: String,
    /// `body`, decoded.
    pub entry: crate::policy::Body,
}

/// `GET /api/privacy/policy`.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyLog {
    /// The policy key (Ed25519), hex.
    pub public_key: String,
    /// The promises the log tracks, and which way each is tighter.
    pub promises: Vec<crate::policy::Promise>,
    /// Every entry, from the first.
    pub entries: Vec<PolicyEntry>,
    /// Each promise's value in force now.
    pub in_force: crate::policy::Values,
    /// The values the lane runs with (at least as tight as those in force).
    pub running: crate::policy::Values,
}

/// `GET /api/privacy/policy`.
#[utoipa::path(get, path = "/api/privacy/policy", tag = "privacy",
    summary = "The hash-chained, signed log of changes to the lane's privacy promises: each entry tightened, loosened or neutral; a loosening takes effect after the notice period (docs/api-privacy.md says how to verify it)",
    responses((status = 200, description = "The log", body = PolicyLog), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn policy(State(p): State<Privacy>) -> Result<Json<PolicyLog>, ApiError> {
    let svc = service(&p)?;
    let (rows, key) = svc.policy_log().await.map_err(store_error)?;
    let entries: Vec<PolicyEntry> = rows
        .into_iter()
        .filter_map(|r| {
            let entry = serde_json::from_str(&r.body).ok()?;
            Some(PolicyEntry {
                seq: r.seq,
                body: r.body,
                hash: r.hash,
                sig: r.sig,
                entry,
            })
        })
        .collect();
    let bodies: Vec<_> = entries.iter().map(|e| e.entry.clone()).collect();
    Ok(Json(PolicyLog {
        public_key: hex::encode(key.to_bytes()),
        promises: crate::policy::PROMISES.to_vec(),
        in_force: crate::policy::effective(&bodies, svc.clock.now_ms()),
        running: svc.running().clone(),
        entries,
    }))
}

/// `GET /api/privacy/conformance`.
#[utoipa::path(get, path = "/api/privacy/conformance", tag = "privacy",
    summary = "The lane's invariants, each checked live now (an invariant that cannot be checked counts as failed); ok only when all hold",
    responses((status = 200, description = "The report", body = crate::conformance::Report), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn conformance(
    State(p): State<Privacy>,
) -> Result<Json<crate::conformance::Report>, ApiError> {
    Ok(Json(crate::conformance::check(service(&p)?).await))
}

/// `GET /api/stealth/coverproof` query.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
pub struct CoverQuery {
    /// A route id: answer its inclusion proof too.
    pub route: Option<String>,
}

/// `GET /api/stealth/coverproof`.
#[utoipa::path(get, path = "/api/stealth/coverproof", tag = "privacy",
    summary = "A Merkle root (RFC 6962) over the window's real payouts, kUsers, kObserver and the host's signed commitment; ?route= adds that route's inclusion proof",
    params(CoverQuery),
    responses((status = 200, description = "The cover proof", body = crate::coverproof::CoverProof), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn coverproof(
    State(p): State<Privacy>,
    Query(q): Query<CoverQuery>,
) -> Result<Json<crate::coverproof::CoverProof>, ApiError> {
    let svc = service(&p)?;
    if q.route.as_ref().is_some_and(|r| r.len() > 128) {
        return Err(ApiError::new(
            relay_errors::ErrorCode::InvalidField,
            "route: at most 128 characters",
        )
        .field("route"));
    }
    svc.cover_proof(q.route.as_deref())
        .await
        .map(Json)
        .map_err(store_error)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_noop_is_json_of_the_response_size() {
        let b = super::noop_body();
        assert_eq!(b.len(), super::NOOP_BYTES);
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["ok"], true);
    }
}
