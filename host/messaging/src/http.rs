//! Sealed messaging's HTTP adapter (spec §4.10): `/api/messages/v2/…` —
//! `info`, `directory`, `mailbox` (GET and POST), `send`, `feed`,
//! `witness/head`, `witness/range` (and, beyond the spec, the witness
//! tree's `consistency` and `inclusion` proofs), `handle/transfer`,
//! `cred/mint`, Plus passes (`passes/issuer`, `passes/claim`, and RFC
//! 9578's well-known issuer directory) — v1's retired send (410), the
//! name registry
//! (`/api/relaynames/quote`, `/api/relaynames/list`) and the relay
//! directory (`/api/relay/directory`, `/api/relay/announce`). Thin over
//! [`MessagingService`]: parse, call, shape. The host mounts it through
//! [`feature`].

use std::{collections::BTreeMap, sync::Arc};

use axum::{
    extract::{Path, State},
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::{
    edge::{JsonObject, QueryFields},
    Feature, HasHandles, Limit, Section,
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    errors,
    mailbox::{self, Publication, PublishError},
    witness::{Listed, PublishOutcome},
    MessagingService,
};

mod info;
mod names;
mod passes;
mod relays;
mod rows;
mod sales;
mod transfer;
mod witness;

pub use info::Info;
pub use rows::{FeedEntry, FeedPage, SendRequest, Sent};
pub use sales::NameInvoice;
pub use transfer::{text as transfer_text, TransferRequest};
pub use witness::{Proof, WitnessEntry, WitnessRange};

/// The handle the handlers take: the service, or `None` when the
/// operator turned messaging off.
#[derive(Clone)]
pub struct Messaging(pub Option<Arc<MessagingService>>);

/// The most rows one feed page carries.
pub const FEED_MAX: u32 = 500;
/// The most witness entries one range carries (spec §4.10).
pub const RANGE_MAX: u32 = 20;

/// Sends per IP at the door: the ceiling with Plus passes (spec §8.2:
/// rate-limited per IP; the free ceiling, 120 a minute — enough for a
/// 64-frame note — is counted by the service across replicas, and a send
/// that spends a pass is not counted there); publications per IP per day
/// (each one stays in the directory and the witness log for good); pass
/// claims 10 a minute at the door (the 5 a day of §8.2 are counted by the
/// service across replicas, answering 429 with retryAfterMs 86400000);
/// reads like the other public reads.
const LIMITS: &[Limit] = &[
    Limit::get("messages-info", "/api/messages/v2/info", 60),
    Limit::get("messages-directory", "/api/messages/v2/directory", 30),
    Limit::get(
        "messages-mailbox",
        "/api/messages/v2/mailbox/{addressOrName}",
        60,
    ),
    Limit::post("messages-publish", "/api/messages/v2/mailbox", 20)
        .per_day()
        .by_ip(),
    Limit::post("messages-send", "/api/messages/v2/send", 600).by_ip(),
    Limit::get("messages-feed", "/api/messages/v2/feed", 120),
    Limit::get("messages-witness-head", "/api/messages/v2/witness/head", 60),
    Limit::get(
        "messages-witness-range",
        "/api/messages/v2/witness/range",
        60,
    ),
    Limit::get(
        "messages-witness-proof",
        "/api/messages/v2/witness/consistency",
        60,
    )
    .keyed("messages-witness-range"),
    Limit::get(
        "messages-witness-inclusion",
        "/api/messages/v2/witness/inclusion",
        60,
    )
    .keyed("messages-witness-range"),
    Limit::post("messages-transfer", "/api/messages/v2/handle/transfer", 10),
    Limit::post("messages-cred", "/api/messages/v2/cred/mint", 10),
    Limit::post("messages-v1", "/api/messages/send", 30),
    Limit::get("relaynames-quote", "/api/relaynames/quote", 60),
    Limit::post("relaynames-list", "/api/relaynames/list", 10)
        .per_day()
        .by_ip(),
    Limit::get("relaynames-orders", "/api/relaynames/orders/{id}", 60),
    Limit::get("passes-issuer", "/api/messages/v2/passes/issuer", 60),
    Limit::get(
        "passes-issuer-well-known",
        "/.well-known/private-token-issuer-directory",
        60,
    )
    .keyed("passes-issuer"),
    Limit::post("passes-claim", "/api/messages/v2/passes/claim", 10).by_ip(),
    Limit::get("relay-directory", "/api/relay/directory", 30),
    Limit::post("relay-announce", "/api/relay/announce", 10)
        .per_day()
        .by_ip(),
];

/// The shipped ceiling of `bucket` (0 for a bucket this feature does not
/// have).
pub fn shipped(bucket: &str) -> u32 {
    LIMITS
        .iter()
        .find(|l| l.bucket == bucket)
        .map_or(0, |l| l.per)
}

/// Sealed messaging v2 (spec §4.10), as the host registers it.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "messaging",
        home: "host/messaging",
        spec: "§4.10",
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
    let m = Messaging(s.handles().get::<Option<Arc<MessagingService>>>().flatten());
    OpenApiRouter::new()
        .routes(routes!(info::info))
        .routes(routes!(directory))
        .routes(routes!(mailbox_get))
        .routes(routes!(publish))
        .routes(routes!(rows::send))
        .routes(routes!(rows::feed))
        .routes(routes!(witness::witness_head))
        .routes(routes!(witness::witness_range))
        .routes(routes!(witness::witness_consistency))
        .routes(routes!(witness::witness_inclusion))
        .routes(routes!(transfer::transfer))
        .routes(routes!(cred_mint))
        .routes(routes!(v1_send))
        .routes(routes!(names::quote))
        .routes(routes!(names::list))
        .routes(routes!(sales::order))
        .routes(routes!(passes::issuer))
        .routes(routes!(passes::well_known))
        .routes(routes!(passes::claim))
        .routes(routes!(relays::directory))
        .routes(routes!(relays::announce))
        .with_state(m)
}

/// The client IP of a request, as the rate limits count it.
fn client_ip(
    svc: &MessagingService,
    headers: &axum::http::HeaderMap,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
) -> String {
    let peer = peer.map(|axum::Extension(axum::extract::ConnectInfo(p))| p.ip());
    relay_feature::caller::client_ip(&svc.limits, headers, peer).to_string()
}

fn service(m: &Messaging) -> Result<&Arc<MessagingService>, ApiError> {
    m.0.as_ref().ok_or_else(|| {
        ApiError::new(
            errors::MessagingDisabled,
            "this host does not serve sealed messaging",
        )
    })
}

fn store_error(e: relay_store::StoreError) -> ApiError {
    tracing::warn!(error = %e, "messaging store");
    ApiError::new(
        ErrorCode::StoreUnavailable,
        "the store is unavailable; retry",
    )
}

/// A query's number field, `default` when absent, within `range` (a
/// number outside it is the caller's mistake, never quietly clamped).
fn number(
    q: &BTreeMap<String, String>,
    field: &str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, ApiError> {
    let Some(v) = q.get(field) else {
        return Ok(default);
    };
    match v.parse::<u64>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(ApiError::new(
            ErrorCode::InvalidField,
            format!(
                "{field}: must be a whole number from {} to {}",
                range.start(),
                range.end()
            ),
        )
        .field(field.to_string())),
    }
}

/// The query's fields, only `allowed` ones.
fn query(q: QueryFields, allowed: &[&str]) -> Result<BTreeMap<String, String>, ApiError> {
    let axum::extract::Query(q) = q.map_err(|e| {
        ApiError::new(ErrorCode::InvalidField, format!("query: {}", e.body_text())).field("query")
    })?;
    if let Some(k) = q.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("{k}: unknown query field (allowed: {})", allowed.join(", ")),
        )
        .field(k.clone()));
    }
    Ok(q)
}

#[utoipa::path(get, path = "/api/messages/v2/directory", tag = "messages",
    summary = "Every mailbox: the same bytes for every reader (its SHA-256 is the `directory` line of the signed witness head of the same size)",
    responses((status = 200, description = "The directory; `ETag` and `x-relay-directory-sha256` carry the hash of the exact bytes", body = crate::witness::Directory), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn directory(State(m): State<Messaging>) -> Result<Response, ApiError> {
    let (bytes, hash) = service(&m)?
        .witness()
        .directory()
        .await
        .map_err(store_error)?;
    let hash = hex::encode(hash);
    let mut resp = (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes.to_string(),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&format!("\"{hash}\"")) {
        resp.headers_mut().insert(header::ETAG, v);
    }
    if let Ok(v) = HeaderValue::from_str(&hash) {
        resp.headers_mut().insert("x-relay-directory-sha256", v);
    }
    Ok(resp)
}

#[utoipa::path(get, path = "/api/messages/v2/mailbox/{addressOrName}", tag = "messages",
    summary = "One mailbox by address (a lookup tells the host whom the reader means to write to: prefer the directory)",
    params(("addressOrName" = String, Path, description = "A 0x address, or a registered name")),
    responses((status = 200, description = "The publication in effect and its witness entry `s`", body = Listed), (status = "default", description = "A typed error (404 MAILBOX_NOT_FOUND)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn mailbox_get(
    State(m): State<Messaging>,
    Path(who): Path<String>,
) -> Result<Json<Listed>, ApiError> {
    let svc = service(&m)?;
    let not_found = || {
        ApiError::new(
            errors::MailboxNotFound,
            "no mailbox is published under that address or name",
        )
    };
    let address = match mailbox::address_field("addressOrName", &who) {
        Ok(a) => mailbox::lower(&a),
        Err(_) => {
            let name = crate::names::normalize(&who).map_err(|_| not_found())?;
            let record = svc.witness().name(&name).await.map_err(store_error)?;
            match record.filter(|r| r.expires > svc.now_ms()) {
                Some(r) => r.owner,
                None => return Err(not_found()),
            }
        }
    };
    svc.witness()
        .mailbox(&address)
        .await
        .map_err(store_error)?
        .map(Json)
        .ok_or_else(not_found)
}

fn publish_refused(e: PublishError) -> ApiError {
    let (code, field) = match &e {
        PublishError::Key { field, .. } => (errors::MailboxKeyInvalid, *field),
        PublishError::Stale { .. } => (errors::MailboxStale, "ts"),
        PublishError::Signature(_) => (errors::MailboxSignatureInvalid, "sig"),
        PublishError::Replayed { .. } => (errors::MailboxReplayed, "ts"),
    };
    ApiError::new(code, e.to_string()).field(field)
}

#[utoipa::path(post, path = "/api/messages/v2/mailbox", tag = "messages",
    summary = "Publish a mailbox: the wallet signs its keys (EIP-191, the text GET /api/messages/v2/info documents); appended to the witness log",
    request_body = Publication,
    responses((status = 200, description = "The publication in effect and its witness entry", body = Listed), (status = "default", description = "A typed error (MAILBOX_KEY_INVALID, MAILBOX_STALE, MAILBOX_SIGNATURE_INVALID, 409 MAILBOX_REPLAYED)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn publish(State(m): State<Messaging>, body: JsonObject) -> Result<Json<Listed>, ApiError> {
    let p: Publication = body.decode()?;
    let svc = service(&m)?;
    let now = svc.now_ms();
    let canonical = p
        .verify(now, svc.config().max_skew_ms)
        .map_err(publish_refused)?;
    match svc.witness().publish(&canonical, now).await {
        Ok(listed) => Ok(Json(listed)),
        Err(PublishOutcome::Refused(e)) => Err(publish_refused(e)),
        Err(e) => Err(outcome_error(e, errors::MailboxReplayed)),
    }
}

/// The API error of a witness append that did not land; a replay is
/// answered with `replayed`.
fn outcome_error(e: PublishOutcome, replayed: relay_errors::ErrorCode) -> ApiError {
    use crate::names::NameRefusal as N;
    let message = e.to_string();
    let code = match e {
        PublishOutcome::Refused(PublishError::Replayed { .. }) => {
            return ApiError::new(replayed, format!("ts: {message}")).field("ts")
        }
        PublishOutcome::Refused(_) => ErrorCode::InvalidField,
        PublishOutcome::Name(N::Taken { .. }) => errors::NameTaken,
        PublishOutcome::Name(N::Confusable { .. }) => errors::NameConfusable,
        PublishOutcome::Name(N::Unpaid { .. }) => errors::NamePaymentUnavailable,
        PublishOutcome::Name(N::Cap) => errors::NameCap,
        PublishOutcome::Name(N::Unknown(_)) => errors::NameNotFound,
        PublishOutcome::Name(N::NotOwner { .. }) => errors::NameNotOwner,
        PublishOutcome::Store(e) => return store_error(e),
        PublishOutcome::Busy => ErrorCode::StoreUnavailable,
    };
    ApiError::new(code, message)
}

#[utoipa::path(post, path = "/api/messages/v2/cred/mint", tag = "messages",
    summary = "Mint a post-quantum credential for one Plus pass: off until a credential type is listed",
    request_body = Object,
    responses((status = 409, description = "CREDENTIAL_UNLISTED: no type is listed; nothing was spent", body = ErrorBody), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn cred_mint(State(m): State<Messaging>, _body: JsonObject) -> Result<Response, ApiError> {
    service(&m)?;
    Err(ApiError::new(
        errors::CredentialUnlisted,
        "no post-quantum credential type is listed on this host yet; nothing was spent",
    ))
}

#[utoipa::path(post, path = "/api/messages/send", tag = "messages",
    summary = "Messaging v1's send: retired (410); send sealed rows through /api/messages/v2/send",
    responses((status = 410, description = "MESSAGING_V1_RETIRED", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn v1_send() -> ApiError {
    ApiError::new(
        errors::MessagingV1Retired,
        "messaging v1 is retired: POST /api/messages/v2/send (GET /api/messages/v2/info)",
    )
}
