//! Sealed messaging's HTTP adapter (spec §4.10): `/api/messages/v2/…` —
//! `info`, `directory`, `mailbox` (GET and POST), `send`, `feed`,
//! `witness/head`, `witness/range` (and, beyond the spec, the witness
//! tree's `consistency` and `inclusion` proofs), `handle/transfer`,
//! `cred/mint` — v1's retired send (410), the name registry
//! (`/api/relaynames/quote`, `/api/relaynames/list`) and the relay
//! directory (`/api/relay/directory`, `/api/relay/announce`). Thin over
//! [`MessagingService`]: parse, call, shape. The host mounts it through
//! [`feature`].

use std::{collections::BTreeMap, sync::Arc};

use axum::{
    extract::{Path, State},
    http::{header, HeaderMap, HeaderValue},
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::{
    edge::{JsonObject, QueryFields},
    Feature, HasHandles, Limit, Section,
};
use relay_sealed::message::Row;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    errors,
    mailbox::{self, Publication, PublishError},
    store::FeedRow,
    witness::{Head, Listed, ProofError, PublishOutcome},
    MessagingService, SendError,
};

mod info;
mod names;
mod relays;
mod transfer;

pub use info::Info;
pub use transfer::{text as transfer_text, TransferRequest};

/// The handle the handlers take: the service, or `None` when the
/// operator turned messaging off.
#[derive(Clone)]
pub struct Messaging(pub Option<Arc<MessagingService>>);

/// The most rows one feed page carries.
pub const FEED_MAX: u32 = 500;
/// The most witness entries one range carries (spec §4.10).
pub const RANGE_MAX: u32 = 20;

/// Sends per IP (spec §8.2: rate-limited per IP; enough for a 64-frame
/// note in a minute); publications per IP per day (each one stays in the
/// directory and the witness log for good); reads like the other public
/// reads.
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
    Limit::post("messages-send", "/api/messages/v2/send", 120).by_ip(),
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
        .routes(routes!(send))
        .routes(routes!(feed))
        .routes(routes!(witness_head))
        .routes(routes!(witness_range))
        .routes(routes!(witness_consistency))
        .routes(routes!(witness_inclusion))
        .routes(routes!(transfer::transfer))
        .routes(routes!(cred_mint))
        .routes(routes!(v1_send))
        .routes(routes!(names::quote))
        .routes(routes!(names::list))
        .routes(routes!(relays::directory))
        .routes(routes!(relays::announce))
        .with_state(m)
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

/// A query's number field, `default` when absent, at most `max`.
fn number(
    q: &BTreeMap<String, String>,
    field: &str,
    default: u64,
    max: u64,
) -> Result<u64, ApiError> {
    let Some(v) = q.get(field) else {
        return Ok(default);
    };
    match v.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("{field}: must be a whole number from 0 to {max}"),
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
        PublishOutcome::Name(N::PaymentUnavailable { .. }) => errors::NamePaymentUnavailable,
        PublishOutcome::Name(N::Cap) => errors::NameCap,
        PublishOutcome::Name(N::Unknown(_)) => errors::NameNotFound,
        PublishOutcome::Name(N::NotOwner { .. }) => errors::NameNotOwner,
        PublishOutcome::Store(e) => return store_error(e),
        PublishOutcome::Busy => ErrorCode::StoreUnavailable,
    };
    ApiError::new(code, message)
}

/// `POST /api/messages/v2/send`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendRequest {
    /// The one-time handle's ephemeral key, `0x` and 33 bytes.
    pub ephemeral_pub_key: String,
    /// The view tag, `0x` and one byte.
    pub view_tag: String,
    /// The envelope, base64 (1648 or 3184 bytes).
    pub ct: String,
    /// A Plus pass (or header `x-relay-pass`): raises the ceiling where passes are issued.
    pub pass: Option<String>,
}

/// The answer to a send.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sent {
    /// When the row becomes visible in the feed, ms (a slot of the 60,000 ms grid).
    pub release_at: u64,
    /// Always `pending` (then `sent` once released; there is no delivered or read state).
    pub state: &'static str,
}

#[utoipa::path(post, path = "/api/messages/v2/send", tag = "messages",
    summary = "Post one sealed row (exactly three fields are stored); replay-safe",
    request_body = SendRequest,
    params(("x-relay-pass" = Option<String>, Header, description = "A Plus pass (as the body's `pass`)")),
    responses((status = 200, description = "Stored; visible from releaseAt", body = Sent), (status = "default", description = "A typed error (MESSAGE_ROW_INVALID, 409 MESSAGE_REPLAYED, PASS_INVALID)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn send(
    State(m): State<Messaging>,
    headers: HeaderMap,
    body: JsonObject,
) -> Result<Json<Sent>, ApiError> {
    let req: SendRequest = body.decode()?;
    let svc = service(&m)?;
    if req.pass.is_some() || headers.contains_key("x-relay-pass") {
        return Err(ApiError::new(
            errors::PassInvalid,
            "this host issues no Plus passes yet (GET /api/messages/v2/info passes.accepted is false); send without one",
        )
        .field("pass"));
    }
    let row = Row {
        ephemeral_pub_key: req.ephemeral_pub_key,
        view_tag: req.view_tag,
        ct: req.ct,
    };
    match svc.send(&row).await {
        Ok(release_at) => Ok(Json(Sent {
            release_at,
            state: "pending",
        })),
        Err(SendError::Row(e)) => {
            let text = e.to_string();
            let field = ["ephemeralPubKey", "viewTag", "ct"]
                .into_iter()
                .find(|f| text.contains(f))
                .unwrap_or("ct");
            Err(ApiError::new(errors::MessageRowInvalid, text).field(field))
        }
        Err(e @ SendError::Replayed) => {
            Err(ApiError::new(errors::MessageReplayed, e.to_string()).field("ephemeralPubKey"))
        }
        Err(SendError::Store(e)) => Err(store_error(e)),
    }
}

/// One released row: its place and the three stored fields.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedEntry {
    /// Its place in the feed.
    pub seq: u64,
    /// `0x` and 33 bytes.
    pub ephemeral_pub_key: String,
    /// `0x` and one byte.
    pub view_tag: String,
    /// Base64.
    pub ct: String,
}

/// A page of the feed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedPage {
    /// Released rows after `since`, in order.
    pub rows: Vec<FeedEntry>,
    /// The cursor for the next read (the last row's `seq`, or `since`).
    pub next: u64,
    /// Whether more rows follow (read again with `since=next`).
    pub more: bool,
    /// The first `seq` still kept (older rows aged out); absent when empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oldest: Option<u64>,
    /// When the next slot is released, ms.
    pub next_release_at: u64,
}

impl From<FeedRow> for FeedEntry {
    fn from(r: FeedRow) -> Self {
        FeedEntry {
            seq: r.seq,
            ephemeral_pub_key: r.row.ephemeral_pub_key,
            view_tag: r.row.view_tag,
            ct: r.row.ct,
        }
    }
}

#[utoipa::path(get, path = "/api/messages/v2/feed", tag = "messages",
    summary = "Released rows (recipients scan them locally with their viewing key); no push: poll",
    params(
        ("since" = Option<u64>, Query, description = "Rows after this seq (default 0)"),
        ("limit" = Option<u32>, Query, description = "At most this many (default 100, at most 500)"),
    ),
    responses((status = 200, description = "A page", body = FeedPage), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn feed(State(m): State<Messaging>, q: QueryFields) -> Result<Json<FeedPage>, ApiError> {
    let q = query(q, &["since", "limit"])?;
    let since = number(&q, "since", 0, i64::MAX as u64)?;
    let limit = number(&q, "limit", 100, u64::from(FEED_MAX))?.max(1) as u32;
    let page = service(&m)?.feed(since, limit).await.map_err(store_error)?;
    let next = page.rows.last().map_or(since, |r| r.seq);
    Ok(Json(FeedPage {
        more: next < page.last,
        next,
        oldest: page.oldest,
        next_release_at: page.next_release_at,
        rows: page.rows.into_iter().map(FeedEntry::from).collect(),
    }))
}

#[utoipa::path(get, path = "/api/messages/v2/witness/head", tag = "messages",
    summary = "The signed head of the witness log: {seq, root, sig} and the C2SP checkpoint they are read from",
    responses((status = 200, description = "The head", body = Head), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn witness_head(State(m): State<Messaging>) -> Result<Json<Head>, ApiError> {
    service(&m)?
        .witness()
        .head()
        .await
        .map(Json)
        .map_err(store_error)
}

/// One entry of the witness log.
#[derive(Debug, Serialize, ToSchema)]
pub struct WitnessEntry {
    /// Its number, from 1.
    pub s: u64,
    /// SHA-256 of `body`, hex.
    pub b: String,
    /// SHA-256(previous r ‖ b), hex (r₀ is 32 zero bytes).
    pub r: String,
    /// When it was appended, ms.
    pub t: u64,
    /// What it binds: `mailbox`.
    pub kind: String,
    /// The binding (a publication's canonical JSON).
    pub body: String,
}

/// A range of the witness log.
#[derive(Debug, Serialize, ToSchema)]
pub struct WitnessRange {
    /// At most 20 entries from `from`.
    pub entries: Vec<WitnessEntry>,
}

#[utoipa::path(get, path = "/api/messages/v2/witness/range", tag = "messages",
    summary = "At most 20 entries {s, b, r, t} from `from`",
    params(
        ("from" = Option<u64>, Query, description = "The first entry (default 1)"),
        ("limit" = Option<u32>, Query, description = "At most this many (default and most 20)"),
    ),
    responses((status = 200, description = "The entries", body = WitnessRange), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn witness_range(
    State(m): State<Messaging>,
    q: QueryFields,
) -> Result<Json<WitnessRange>, ApiError> {
    let q = query(q, &["from", "limit"])?;
    let from = number(&q, "from", 1, i64::MAX as u64)?.max(1);
    let limit = number(&q, "limit", u64::from(RANGE_MAX), u64::from(RANGE_MAX))?.max(1) as u32;
    let svc = service(&m)?;
    let rows = svc.store.witness(from, limit).await.map_err(store_error)?;
    Ok(Json(WitnessRange {
        entries: rows
            .into_iter()
            .map(|e| WitnessEntry {
                s: e.s,
                b: e.b,
                r: e.r,
                t: e.t,
                kind: e.kind,
                body: e.body,
            })
            .collect(),
    }))
}

/// A Merkle proof.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Proof {
    /// The tree size it proves against (the current head's `seq`).
    pub size: u64,
    /// The proof's hashes, hex, in RFC 6962 order.
    pub proof: Vec<String>,
}

fn proof_refused(e: ProofError, field: &str) -> ApiError {
    match e {
        ProofError::Range { size } => ApiError::new(
            ErrorCode::InvalidField,
            format!("{field}: must be from 1 to the log's size ({size})"),
        )
        .field(field.to_string()),
        ProofError::Store(e) => store_error(e),
    }
}

#[utoipa::path(get, path = "/api/messages/v2/witness/consistency", tag = "messages",
    summary = "RFC 6962 consistency proof from an older tree size to the current head (beyond the spec)",
    params(("from" = u64, Query, description = "The older size (a head you hold)")),
    responses((status = 200, description = "The proof", body = Proof), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn witness_consistency(
    State(m): State<Messaging>,
    q: QueryFields,
) -> Result<Json<Proof>, ApiError> {
    let q = query(q, &["from"])?;
    let from = number(&q, "from", 0, i64::MAX as u64)?;
    let (proof, size) = service(&m)?
        .witness()
        .consistency(from)
        .await
        .map_err(|e| proof_refused(e, "from"))?;
    Ok(Json(Proof { size, proof }))
}

#[utoipa::path(get, path = "/api/messages/v2/witness/inclusion", tag = "messages",
    summary = "RFC 6962 inclusion proof of entry `s` in the current head's tree (beyond the spec)",
    params(("s" = u64, Query, description = "The entry")),
    responses((status = 200, description = "The proof", body = Proof), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn witness_inclusion(
    State(m): State<Messaging>,
    q: QueryFields,
) -> Result<Json<Proof>, ApiError> {
    let q = query(q, &["s"])?;
    let s = number(&q, "s", 0, i64::MAX as u64)?;
    let (proof, size) = service(&m)?
        .witness()
        .inclusion(s)
        .await
        .map_err(|e| proof_refused(e, "s"))?;
    Ok(Json(Proof { size, proof }))
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
