//! Signed refusals (spec §4.3 `/api/refusal/verify`): every typed 4xx the
//! host answers (402 invoices aside) carries a `refusal` object — its
//! errorCode, status, the hash of the request and the time, signed by the
//! relayer key ([`relay_analysis::refusal`] has the scheme) — and
//! `POST /api/refusal/verify` says whether one is genuine.
//!
//! The request hash is keccak-256 of `"<METHOD> <path?query>\n"` and the
//! body bytes as the host received them. A refusal the edge makes before
//! the body is read (rate limit, URI or body too large, content type, body
//! read timeout) hashes an empty body.

use super::{
    edge::{self, JsonObject},
    ApiError, AppState, ErrorCode,
};
use crate::around::Later;
use alloy::primitives::B256;
use axum::{
    body::Body,
    extract::{Request, State},
    http::{header, StatusCode},
    response::Response,
    Json,
};
use relay_analysis::refusal::{self, Refusal, RefusalCheck};
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(verify))
}

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

/// The request a refusal answered, to check `requestHash` against.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RefusedRequest {
    /// HTTP method, e.g. `POST`.
    method: String,
    /// Path and query as sent, e.g. `/api/route/execute`.
    path: String,
    /// The body exactly as sent (empty for none).
    #[serde(default)]
    body: String,
}

/// `POST /api/refusal/verify` body.
#[derive(Debug, Deserialize, ToSchema)]
#[allow(dead_code)]
struct VerifyRequest {
    /// The `refusal` object of an error answer, as received.
    refusal: Refusal,
    /// The request that was refused (optional): when given, its hash must
    /// be the refusal's `requestHash`.
    request: Option<RefusedRequest>,
}

fn field<T: serde::de::DeserializeOwned>(
    body: &Map<String, Value>,
    name: &str,
) -> Result<Option<T>, ApiError> {
    body.get(name)
        .map(|v| {
            serde_json::from_value(v.clone()).map_err(|e| {
                ApiError::new(ErrorCode::InvalidField, format!("{name}: {e}")).field(name)
            })
        })
        .transpose()
}

#[utoipa::path(post, path = "/api/refusal/verify", tag = "analysis", summary = "Whether a refusal (the `refusal` object of a 4xx answer) was signed by this host, optionally for a given request", request_body = VerifyRequest, responses((status = 200, description = "The check: `genuine`, who signed, why not", body = RefusalCheck), (status = "default", description = "A typed error", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn verify(
    State(s): State<AppState>,
    JsonObject(body): JsonObject,
) -> Result<Json<RefusalCheck>, ApiError> {
    edge::only_fields(&body, &["refusal", "request"])?;
    let r: Refusal = field(&body, "refusal")?.ok_or_else(|| {
        ApiError::new(
            ErrorCode::MissingField,
            "refusal: required (the `refusal` object of an error answer)",
        )
        .field("refusal")
    })?;
    let request = field::<RefusedRequest>(&body, "request")?
        .map(|q| refusal::request_hash(&q.method, &q.path, q.body.as_bytes()));
    let expected = s.relayer.as_ref().map(|x| x.address());
    Ok(Json(refusal::verify(&r, expected, request)))
}
