//! The oblivious gateway (RFC 9458): opens an encapsulated request with
//! the epoch's key, checks it (fixed size, Date within the replay window,
//! an encapsulated key never seen before, a target on the allowlist),
//! hands the inner request to the host's own services and seals the
//! answer, padded to the fixed size, for the client alone.
//!
//! What it keeps: the hash of each encapsulated key for the replay window
//! (a random value of the client's, linked to nothing) and three counters.
//! What it never keeps or logs: the outer request's address or headers.
//! The inner request reaches the services with no address at all: the
//! rate limits count oblivious requests as one caller, the relay's job
//! being to limit its own clients.

use std::{
    io::Cursor,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, OnceLock, Weak,
    },
};

use axum::{body::Body, response::IntoResponse, response::Response, Router};
use http_body_util::BodyExt as _;
use relay_errors::ApiError;
use relay_types::SharedClock;
use sha2::{Digest, Sha256};
use tower::ServiceExt as _;

use crate::{
    allow, errors,
    keys::KeyRing,
    pad::{self, REQUEST_FLOOR, RESPONSE_FLOOR},
};

/// The most bytes of an inner response the gateway seals (a larger one is
/// answered 502 inside the encapsulation).
pub const MAX_INNER_RESPONSE: usize = 1 << 20;

/// The host's own services as the gateway reaches them: the router the
/// HTTP edge serves, set once it is built (it holds the gateway's route,
/// so it cannot exist before it). Held weakly: the router holds the host's
/// state, which holds the gateway, and a strong hold would keep a stopped
/// host alive forever.
#[derive(Clone, Default)]
pub struct Inner(Arc<OnceLock<Weak<Router>>>);

impl Inner {
    /// Sets the router (the first call wins); the caller keeps it alive.
    pub fn set(&self, router: &Arc<Router>) {
        let _ = self.0.set(Arc::downgrade(router));
    }

    /// Answers `req` from the host's services.
    pub async fn call(&self, req: http::Request<Body>) -> Response {
        match self.0.get().and_then(Weak::upgrade) {
            Some(r) => r.as_ref().clone().oneshot(req).await.into_response(),
            None => ApiError::new(
                relay_errors::ErrorCode::Internal,
                "the gateway's services are not serving; retry",
            )
            .into_response(),
        }
    }
}

/// What the gateway counts (for `GET /api/privacy/conformance`): totals,
/// never who or what.
#[derive(Debug, Default)]
pub struct Stats {
    /// Encapsulated requests opened.
    pub opened: AtomicU64,
    /// Responses sealed.
    pub sealed: AtomicU64,
    /// Responses sealed at a size that is not a multiple of the floor
    /// (none, by construction; counted so the claim is checked).
    pub off_size: AtomicU64,
    /// Inner requests refused for their size.
    pub unpadded: AtomicU64,
    /// Encapsulations refused as replays.
    pub replayed: AtomicU64,
}

/// A refusal answered in the clear: nothing could be opened.
#[derive(Debug, thiserror::Error)]
pub enum Outer {
    /// No key with that id.
    #[error("the request's key id ({0}) names no key configuration served now; fetch GET /api/ohttp/keys")]
    KeyUnknown(u8),
    /// Truncated, an unsupported suite, or altered.
    #[error("not an encapsulated request that opens with this gateway's key: {0}")]
    Malformed(&'static str),
}

impl From<Outer> for ApiError {
    fn from(e: Outer) -> Self {
        let code = match e {
            Outer::KeyUnknown(_) => errors::OhttpKeyUnknown,
            Outer::Malformed(_) => errors::OhttpMalformed,
        };
        ApiError::new(code, e.to_string())
    }
}

/// The gateway.
pub struct Gateway {
    ring: Arc<KeyRing>,
    store: relay_store::Store,
    inner: Inner,
    clock: SharedClock,
    window_ms: u64,
    /// What it counted.
    pub stats: Arc<Stats>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("window_ms", &self.window_ms)
            .finish_non_exhaustive()
    }
}

/// The kind the replay window's marks are stored under.
pub const SEEN_KIND: &str = "ohttp-enc";

impl Gateway {
    /// A gateway over `ring`'s keys, remembering encapsulated keys in
    /// `store` for `window_ms`, answering from `inner`.
    pub fn new(
        ring: Arc<KeyRing>,
        store: relay_store::Store,
        inner: Inner,
        (clock, window_ms): (SharedClock, u64),
    ) -> Self {
        Gateway {
            ring,
            store,
            inner,
            clock,
            window_ms,
            stats: Arc::default(),
        }
    }

    /// The host's services it answers from.
    pub fn inner(&self) -> &Inner {
        &self.inner
    }

    /// Answers the encapsulated request `body` with an encapsulated
    /// response (every refusal after opening is inside it).
    #[tracing::instrument(skip_all, name = "ohttp")]
    pub async fn answer(&self, body: &[u8]) -> Result<Vec<u8>, Outer> {
        let (server, enc, now) = self.server_for(body)?;
        let (plain, responder) = server
            .decapsulate(body)
            .map_err(|_| Outer::Malformed("it does not decrypt"))?;
        let sealed = self
            .respond(&plain, enc, now, bhttp::Mode::KnownLength)
            .await;
        responder
            .encapsulate(&sealed)
            .map_err(|_| Outer::Malformed("the response could not be sealed"))
    }

    /// Answers a chunked encapsulated request (draft-ietf-ohai-chunked-
    /// ohttp, `message/ohttp-chunked-req`): the inner answer, padded like
    /// every other, sealed in chunks of 8,192 bytes.
    #[tracing::instrument(skip_all, name = "ohttp-chunked")]
    pub async fn answer_chunked(&self, body: &[u8]) -> Result<Vec<u8>, Outer> {
        use futures::{AsyncReadExt as _, AsyncWriteExt as _};
        let (server, enc, now) = self.server_for(body)?;
        let mut request = server.decapsulate_stream(futures::io::Cursor::new(body.to_vec()));
        let mut plain = Vec::new();
        request
            .read_to_end(&mut plain)
            .await
            .map_err(|_| Outer::Malformed("it does not decrypt"))?;
        let sealed = self
            .respond(&plain, enc, now, bhttp::Mode::IndeterminateLength)
            .await;
        let mut out = Vec::with_capacity(sealed.len() + 64);
        let sealing = async {
            let mut w = request
                .response(&mut out)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            for chunk in sealed.chunks(RESPONSE_FLOOR) {
                w.write_all(chunk).await?;
            }
            w.close().await
        };
        sealing
            .await
            .map_err(|_| Outer::Malformed("the response could not be sealed"))?;
        Ok(out)
    }

    /// The server of the key `body` names, its encapsulated key and the
    /// time; or why nothing can be opened.
    fn server_for<'b>(&self, body: &'b [u8]) -> Result<(ohttp::Server, &'b [u8], u64), Outer> {
        let now = self.clock.now_ms();
        let id = *body.first().ok_or(Outer::Malformed("empty"))?;
        let server = self.ring.server(id, now).ok_or(Outer::KeyUnknown(id))?;
        let enc = encapsulated_key(body).ok_or(Outer::Malformed("truncated"))?;
        Ok((server, enc, now))
    }

    /// The padded BHTTP answer to the opened request `plain`.
    async fn respond(&self, plain: &[u8], enc: &[u8], now: u64, mode: bhttp::Mode) -> Vec<u8> {
        self.stats.opened.fetch_add(1, Ordering::Relaxed);
        let answer = match self.inner_answer(plain, enc, now).await {
            Ok(r) => r,
            Err(e) => e.into_response(),
        };
        let sealed = pad::pad(to_bhttp(answer, now, mode).await, RESPONSE_FLOOR);
        if !pad::is_padded(sealed.len(), RESPONSE_FLOOR) {
            self.stats.off_size.fetch_add(1, Ordering::Relaxed);
        }
        self.stats.sealed.fetch_add(1, Ordering::Relaxed);
        sealed
    }

    async fn inner_answer(&self, plain: &[u8], enc: &[u8], now: u64) -> Result<Response, ApiError> {
        if !pad::is_padded(plain.len(), REQUEST_FLOOR) {
            self.stats.unpadded.fetch_add(1, Ordering::Relaxed);
            return Err(ApiError::new(
                errors::OhttpPaddingRequired,
                format!(
                    "the inner request is {} bytes; pad it with zeros to a multiple of {REQUEST_FLOOR}",
                    plain.len()
                ),
            ));
        }
        let msg = bhttp::Message::read_bhttp::<_, Cursor<&[u8]>>(&mut Cursor::new(plain))
            .map_err(|e| ApiError::new(errors::OhttpInnerMalformed, e.to_string()))?;
        self.check_date(&msg, now)?;
        let mark = hex::encode(Sha256::digest(enc));
        let first = self
            .store
            .first_sight((SEEN_KIND, &mark), (now, now + self.window_ms))
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "the replay window cannot be read");
                ApiError::new(relay_errors::ErrorCode::StoreUnavailable, "retry")
            })?;
        if !first {
            self.stats.replayed.fetch_add(1, Ordering::Relaxed);
            return Err(ApiError::new(
                errors::OhttpReplayed,
                "this encapsulated request was opened before",
            ));
        }
        let req = allow::inner_request(&msg)?;
        Ok(self.inner.call(req).await)
    }

    fn check_date(&self, msg: &bhttp::Message, now: u64) -> Result<(), ApiError> {
        let half = self.window_ms / 2;
        let date = msg
            .header()
            .get(b"date")
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| httpdate::parse_http_date(d).ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64);
        match date {
            Some(d) if d.abs_diff(now) <= half => Ok(()),
            Some(d) => Err(ApiError::new(
                errors::OhttpDateSkew,
                format!(
                    "the inner Date is {} s from the gateway's clock; at most {} s",
                    d.abs_diff(now) / 1_000,
                    half / 1_000
                ),
            )),
            None => Err(ApiError::new(
                errors::OhttpDateSkew,
                "the inner request has no Date header (IMF-fixdate)",
            )),
        }
    }
}

/// The encapsulated key of a request: after the key id, KEM, KDF and
/// AEAD ids (RFC 9458 §4.3), as long as its KEM's `Nenc`.
pub(crate) fn encapsulated_key(body: &[u8]) -> Option<&[u8]> {
    let kem = u16::from_be_bytes([*body.get(1)?, *body.get(2)?]);
    let kem = ohttp::hpke::Kem::try_from(kem).ok()?;
    body.get(7..7 + kem.n_enc())
}

/// `resp` as a BHTTP response (in `mode`) with the gateway's Date.
async fn to_bhttp(resp: Response, now_ms: u64, mode: bhttp::Mode) -> Vec<u8> {
    let (parts, body) = resp.into_parts();
    let (status, content) = match http_body_util::Limited::new(body, MAX_INNER_RESPONSE)
        .collect()
        .await
    {
        Ok(b) => (parts.status.as_u16(), b.to_bytes().to_vec()),
        Err(_) => (502, br#"{"error":"the answer is larger than the gateway seals","errorCode":"INTERNAL","retryable":false}"#.to_vec()),
    };
    let status = bhttp::StatusCode::try_from(status).unwrap_or(bhttp::StatusCode::OK);
    let mut m = bhttp::Message::response(status);
    for (name, value) in &parts.headers {
        if !allow::hop_by_hop(name.as_str()) && name != http::header::DATE {
            m.put_header(name.as_str(), value.as_bytes());
        }
    }
    let date = std::time::UNIX_EPOCH + std::time::Duration::from_millis(now_ms);
    m.put_header("date", httpdate::fmt_http_date(date));
    m.write_content(content);
    let mut out = Vec::with_capacity(RESPONSE_FLOOR);
    m.write_bhttp(mode, &mut out).expect("writing to a Vec");
    out
}
