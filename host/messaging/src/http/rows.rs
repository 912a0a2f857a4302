//! `POST /api/messages/v2/send` and `GET /api/messages/v2/feed` (spec
//! §4.10): rows in, released rows out.

use axum::{
    extract::{ConnectInfo, State},
    http::{header, HeaderMap},
    response::{IntoResponse, Response},
    Extension, Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::edge::{JsonObject, QueryFields};
use relay_sealed::message::Row;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{number, query, service, store_error, Messaging, FEED_MAX};
use crate::{errors, store::FeedRow, SendError};

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
    /// A Plus pass (or header `x-relay-pass`): the send spends it instead of counting against the free ceiling.
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
    summary = "Post one sealed row (exactly three fields are stored); replay-safe. Without a Plus pass a send counts against the free ceiling (120 a minute per IP); with one (body `pass` or header `x-relay-pass`) it spends the pass instead",
    request_body = SendRequest,
    params(("x-relay-pass" = Option<String>, Header, description = "A Plus pass (as the body's `pass`): a base64url type 2 token, or `PrivateToken token=\"…\"`")),
    responses((status = 200, description = "Stored; visible from releaseAt", body = Sent), (status = "default", description = "A typed error (MESSAGE_ROW_INVALID, 409 MESSAGE_REPLAYED, PASS_INVALID, PASS_EXPIRED, 409 PASS_SPENT, 429 RATE_LIMITED with a WWW-Authenticate PrivateToken challenge)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn send(
    State(m): State<Messaging>,
    headers: HeaderMap,
    peer: Option<Extension<ConnectInfo<std::net::SocketAddr>>>,
    body: JsonObject,
) -> Result<Json<Sent>, Response> {
    let req: SendRequest = body.decode().map_err(IntoResponse::into_response)?;
    let svc = service(&m).map_err(IntoResponse::into_response)?;
    let header = headers
        .get("x-relay-pass")
        .map(|v| v.to_str().unwrap_or("?"));
    let pass = req.pass.as_deref().or(header);
    let row = Row {
        ephemeral_pub_key: req.ephemeral_pub_key,
        view_tag: req.view_tag,
        ct: req.ct,
    };
    let ip = super::client_ip(svc, &headers, peer);
    let refused = match svc.send(&row, pass, &ip).await {
        Ok(release_at) => {
            return Ok(Json(Sent {
                release_at,
                state: "pending",
            }))
        }
        Err(e) => e,
    };
    let mut resp = send_refused(refused).into_response();
    if resp.status() == axum::http::StatusCode::TOO_MANY_REQUESTS {
        if let Some(v) = super::passes::www_authenticate(svc).await {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
    }
    Err(resp)
}

fn send_refused(e: SendError) -> ApiError {
    match e {
        SendError::Row(e) => {
            let text = e.to_string();
            let field = ["ephemeralPubKey", "viewTag", "ct"]
                .into_iter()
                .find(|f| text.contains(f))
                .unwrap_or("ct");
            ApiError::new(errors::MessageRowInvalid, text).field(field)
        }
        e @ SendError::Replayed => {
            ApiError::new(errors::MessageReplayed, e.to_string()).field("ephemeralPubKey")
        }
        SendError::Pass(e) => super::passes::pass_refused(e),
        e @ SendError::PassSpent => ApiError::new(errors::PassSpent, e.to_string()).field("pass"),
        e @ SendError::Ceiling { retry_after_ms, .. } => {
            ApiError::new(ErrorCode::RateLimited, e.to_string())
                .retry_after_ms(retry_after_ms)
                .suggest("wait retryAfterMs, or send with a Plus pass (POST /api/messages/v2/passes/claim; the WWW-Authenticate header names the challenge and key)")
        }
        SendError::Store(e) => store_error(e),
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
pub(super) async fn feed(
    State(m): State<Messaging>,
    q: QueryFields,
) -> Result<Json<FeedPage>, ApiError> {
    let q = query(q, &["since", "limit"])?;
    let since = number(&q, "since", 0, 0..=i64::MAX as u64)?;
    let limit = number(&q, "limit", 100, 1..=u64::from(FEED_MAX))? as u32;
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
