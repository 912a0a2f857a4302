//! Signed refusals at the HTTP edge (spec §4.3): every typed 4xx the
//! host answers (402 invoices aside) carries a `refusal` object — its
//! errorCode, status, the hash of the request and the time, signed by the
//! relayer key ([`relay_errors::refusal`] has the scheme).
//! `POST /api/refusal/verify` (the analysis feature's) says whether one is
//! genuine.
//!
//! The request hash is keccak-256 of `"<METHOD> <path?query>\n"` and the
//! body bytes as the host received them. A refusal the edge makes before
//! the body is read (rate limit, URI or body too large, content type, body
//! read timeout) hashes an empty body.

use super::AppState;
use crate::around::Later;
use alloy::primitives::B256;
use axum::{
    body::Body,
    extract::Request,
    http::{header, StatusCode},
    response::Response,
};
use relay_errors::refusal;
use serde_json::Value;

/// What a refusal's `requestHash` is taken over: the request's method,
/// path and query, and the body as read (the body gate puts it on the
/// response for [`sign`]). Kept as the parts — each a reference count —
/// and hashed only when a refusal is signed, not on every answer.
#[derive(Clone, Debug)]
pub(crate) struct RequestHash {
    method: axum::http::Method,
    uri: axum::http::Uri,
    body: axum::body::Bytes,
}

impl RequestHash {
    /// Of `method`, `uri` and `body`.
    pub(crate) fn of(
        method: &axum::http::Method,
        uri: &axum::http::Uri,
        body: axum::body::Bytes,
    ) -> Self {
        RequestHash {
            method: method.clone(),
            uri: uri.clone(),
            body,
        }
    }

    /// The hash ([`refusal::request_hash`]).
    fn hash(&self) -> B256 {
        let pq = self.uri.path_and_query().map_or("", |p| p.as_str());
        refusal::request_hash(self.method.as_str(), pq, &self.body)
    }
}

/// The largest error body this layer re-reads to sign (error bodies are a
/// few hundred bytes; anything larger is passed on unsigned).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Signs every typed 4xx answer (the edge's outermost layer).
#[derive(Clone)]
pub(crate) struct Sign(pub AppState);

impl crate::around::Around for Sign {
    /// The hash of a request refused before its body was read.
    type Seen = RequestHash;

    fn before(&self, req: &Request) -> Result<RequestHash, Box<Response>> {
        Ok(RequestHash::of(req.method(), req.uri(), Default::default()))
    }

    fn finish(&self, fallback: RequestHash, resp: &mut Response) -> Option<Later> {
        let status = resp.status();
        if !status.is_client_error() || status == StatusCode::PAYMENT_REQUIRED {
            return None;
        }
        let hash = resp
            .extensions()
            .get::<RequestHash>()
            .unwrap_or(&fallback)
            .hash();
        let resp = std::mem::take(resp);
        Some(Box::pin(signed(self.0.clone(), hash, resp)))
    }
}

/// `resp`, a typed 4xx, with its `refusal` object over `hash`.
async fn signed(s: AppState, hash: B256, resp: Response) -> Response {
    let status = resp.status();
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        // Not an error object this layer can re-read (none is this large):
        // answer the status without a body rather than a body cut short.
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::empty());
    };
    let signed = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|mut v| {
            let code = v.get("errorCode")?.as_str()?.to_string();
            let signer = s.relayer.as_ref().map(|r| r.signer());
            let r = refusal::sign(signer, &code, status.as_u16(), hash, s.clock.now_ms()).ok()?;
            v["refusal"] = serde_json::to_value(r).ok()?;
            serde_json::to_vec(&v).ok()
        });
    match signed {
        Some(body) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(body))
        }
        None => Response::from_parts(parts, Body::from(bytes)),
    }
}
