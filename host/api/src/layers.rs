//! The HTTP edge: what every request passes before a handler sees it, so a
//! hostile client costs the host bounded memory and time and every refusal
//! is the JSON error object (`{error, errorCode, retryable, …}`).
//!
//! From the outside in:
//! - **request ids**: `x-request-id` is kept when the client sends one and
//!   made (a UUID) otherwise, recorded in the request's tracing span and
//!   echoed on the response (tower-http `SetRequestId`/`PropagateRequestId`);
//! - **metrics** ([`crate::metrics`]): count and latency per matched route,
//!   method and status;
//! - **panics** become 500 `INTERNAL` instead of a dropped connection;
//! - **CORS** ([`crate::limits::cors`]) labels every answer, refusals
//!   included (a browser sees a 415 rather than an opaque failure);
//! - **JSON errors**: any error answer that is not JSON (a layer's or
//!   axum's plain-text or empty rejection) is rewritten into the error
//!   object with the code its status stands for;
//! - **rate limits** ([`crate::limits`]): every request counts;
//! - **URI cap**: a path and query longer than `http.uri_limit_bytes`
//!   (8 KiB) is 414 `URI_TOO_LONG`;
//! - **header cap**: a header block larger than `http.header_limit_bytes`
//!   (16 KiB) or of more than 100 headers is 431 `HEADERS_TOO_LARGE`;
//! - **handler timeout**: no answer within `http.request_timeout_ms` (30 s)
//!   is 503 `HANDLER_TIMEOUT` (a response stream, once started, is not
//!   limited);
//! - **body gate** (POST, PUT, PATCH): a body must be declared
//!   `content-type: application/json` (an optional `charset=utf-8`
//!   allowed) — else 415 `UNSUPPORTED_MEDIA_TYPE`, which also stops a web
//!   page from skipping the CORS preflight with a `text/plain` "simple
//!   request"; an empty body with no content type passes to the handler,
//!   which says what it expects. The body is read whole within
//!   `http.body_read_timeout_ms` (10 s, counted from the end of the
//!   headers, so a client trickling bytes cannot hold the request — 408
//!   `REQUEST_TIMEOUT`) and `http.body_limit_bytes` (64 KiB, checked
//!   against `content-length` first by tower-http's `RequestBodyLimit` —
//!   413 `BODY_TOO_LARGE`), then parsed once by [`crate::edge::parse_json`]
//!   (a repeated key is 400 `DUPLICATE_KEY`, anything not JSON 400
//!   `MALFORMED_BODY`) and handed on.
//!
//! Header read timeouts are the server's (`relay_host::server`): a
//! connection whose request headers do not arrive within
//! `http.header_read_timeout_ms` is closed. Requests hyper itself refuses
//! before the router sees them get hyper's own empty-bodied answers, and
//! no hook of hyper's changes that: a request target over 64 KiB (414), a
//! header block over its read buffer (~400 KiB) or of more than 200
//! headers (431; the server lets hyper parse twice the host's own cap, so
//! every block between the two is the JSON 431 above), and a request that
//! is not HTTP/1 at all (400).

use std::time::Duration;

use super::{
    around::{Around, AroundLayer, Later},
    edge, ApiError, ErrorCode,
};
use axum::{
    body::Body,
    extract::{Request, State},
    http::{header, HeaderMap, HeaderValue, Method, Response as HttpResponse, StatusCode},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    Router,
};
use relay_config::HttpConfig;
use tower_http::{
    catch_panic::CatchPanicLayer,
    limit::RequestBodyLimitLayer,
    map_request_body::MapRequestBodyLayer,
    request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer},
    timeout::TimeoutLayer,
    trace::{
        DefaultOnFailure, DefaultOnRequest, DefaultOnResponse, OnFailure as _, OnRequest as _,
        OnResponse as _, TraceLayer,
    },
};
use tracing::Span;

/// The services the edge's observers report to.
pub struct Observers {
    /// The dashboard's recent errors.
    pub signals: std::sync::Arc<relay_admin::signals::Signals>,
    /// Developer keys' usage.
    pub keys: std::sync::Arc<relay_keys::KeyService>,
    /// The host (refusals are signed by its relayer key).
    pub state: crate::AppState,
}

/// Wraps `router` (whose routes and fallback are already merged, and whose
/// rate limiter is `limiter`) in the edge layers, configured by `[http]`,
/// and the observers: the dashboard's recent errors, developer-key usage
/// and the signing of refusals (outermost, so they see every answer as the
/// client does).
///
/// The layers are one stack applied once: every `Router::layer` call puts
/// the stack beneath it behind a boxed route that is copied whole for
/// every request, so fifteen separate calls copied it fifteen times.
pub fn edge<S: Clone + Send + Sync + 'static>(
    router: Router<S>,
    http: &HttpConfig,
    limiter: std::sync::Arc<crate::limits::RateLimiter>,
    observers: Observers,
) -> Router<S> {
    let gate = BodyGate {
        read_timeout: Duration::from_millis(http.body_read_timeout_ms),
        limit: http.body_limit_bytes,
    };
    let clock = observers.state.clock.clone();
    let stack = tower::ServiceBuilder::new()
        .layer(AroundLayer(crate::refusal::Sign(observers.state)))
        .layer(AroundLayer(crate::usage::Record(observers.keys)))
        .layer(AroundLayer(crate::admin::Observe(observers.signals, clock)))
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(span_of)
                .on_request(|req: &Request, span: &Span| {
                    if !span.is_none() {
                        DefaultOnRequest::new().on_request(req, span);
                    }
                })
                .on_response(|resp: &Response, latency: Duration, span: &Span| {
                    if !span.is_none() {
                        DefaultOnResponse::new().on_response(resp, latency, span);
                    }
                })
                .on_failure(|class, latency: Duration, span: &Span| {
                    if !span.is_none() {
                        DefaultOnFailure::new().on_failure(class, latency, span);
                    }
                }),
        )
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(AroundLayer(crate::metrics::Track))
        .layer(CatchPanicLayer::custom(panicked))
        .layer(crate::limits::cors())
        .layer(AroundLayer(JsonErrors))
        .layer(AroundLayer(crate::limits::Enforce(limiter)))
        .layer(AroundLayer(UriCap(http.uri_limit_bytes)))
        .layer(AroundLayer(HeaderCap(http.header_limit_bytes)))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            Duration::from_millis(http.request_timeout_ms),
        ))
        // the limit's own body type back to axum's (the timeout answers
        // with an empty one of whatever it wraps)
        .map_response(IntoResponse::into_response)
        .layer(RequestBodyLimitLayer::new(http.body_limit_bytes))
        .layer(MapRequestBodyLayer::new(Body::new))
        .layer(middleware::from_fn_with_state(gate, body_gate));
    router.layer(stack)
}

/// A request's span: method, path and request id — never the client's
/// address. The privacy lane's no-op has none, and nothing is logged of it
/// (spec §4.11: stateless and unlogged).
fn span_of(req: &Request) -> Span {
    if req.uri().path() == relay_privacy::http::NOOP_PATH {
        return Span::none();
    }
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    tracing::info_span!("http", method = %req.method(), path = %req.uri().path(), request_id = %id)
}

/// The answer to a handler that panicked: 500 `INTERNAL`.
pub(crate) fn panicked(_: Box<dyn std::any::Any + Send>) -> Response {
    ApiError::new(ErrorCode::Internal, "the host failed while answering").into_response()
}

/// 414 `URI_TOO_LONG` above this many bytes of path and query.
#[derive(Clone, Copy)]
struct UriCap(usize);

impl Around for UriCap {
    type Seen = ();

    fn before(&self, req: &Request) -> Result<(), Box<Response>> {
        let limit = self.0;
        let len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
        if len <= limit {
            return Ok(());
        }
        Err(Box::new(
            ApiError::new(
                ErrorCode::UriTooLong,
                format!("the path and query are {len} bytes; this host reads at most {limit}"),
            )
            .suggest("send the fields in a JSON POST body")
            .into_response(),
        ))
    }
}

/// 431 `HEADERS_TOO_LARGE` above this many bytes of headers (or more than
/// [`HttpConfig::MAX_HEADERS`] of them).
#[derive(Clone, Copy)]
struct HeaderCap(usize);

impl Around for HeaderCap {
    type Seen = ();

    fn before(&self, req: &Request) -> Result<(), Box<Response>> {
        let (limit, headers) = (self.0, req.headers());
        let count = headers.len();
        let bytes: usize = headers
            .iter()
            .map(|(k, v)| k.as_str().len() + v.len())
            .sum();
        if bytes <= limit && count <= HttpConfig::MAX_HEADERS {
            return Ok(());
        }
        Err(Box::new(
            ApiError::new(
                ErrorCode::HeadersTooLarge,
                format!(
                    "the request has {count} headers of {bytes} bytes; this host reads at most {} headers of {limit} bytes",
                    HttpConfig::MAX_HEADERS
                ),
            )
            .suggest("send fewer or smaller headers (a cookie jar for another site, a long token)")
            .into_response(),
        ))
    }
}

/// Rewrites an error answer that is not JSON into the error object.
#[derive(Clone, Copy)]
pub(crate) struct JsonErrors;

impl Around for JsonErrors {
    type Seen = ();

    fn before(&self, _: &Request) -> Result<(), Box<Response>> {
        Ok(())
    }

    fn finish(&self, (): (), resp: &mut Response) -> Option<Later> {
        let code = json_error_code(resp)?;
        Some(Box::pin(json_error(code, std::mem::take(resp))))
    }
}

#[derive(Clone, Copy)]
struct BodyGate {
    read_timeout: Duration,
    limit: usize,
}

/// Whether a content type is JSON: `application/json`, optionally with
/// `charset=utf-8` (any case, quoted or not) and no other parameter.
pub fn is_json(content_type: &str) -> bool {
    let mut parts = content_type.split(';').map(str::trim);
    let essence = parts.next().unwrap_or("");
    essence.eq_ignore_ascii_case("application/json")
        && parts.filter(|p| !p.is_empty()).all(|p| {
            p.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("charset")
                    && v.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
            })
        })
}

/// Whether the request announces no body at all.
fn announces_no_body(headers: &HeaderMap) -> bool {
    match headers.get(header::CONTENT_LENGTH) {
        Some(len) => len.to_str().ok().and_then(|l| l.trim().parse::<u64>().ok()) == Some(0),
        None => !headers.contains_key(header::TRANSFER_ENCODING),
    }
}

/// The body gate: content type, size, read time, strict JSON.
async fn body_gate(State(gate): State<BodyGate>, req: Request, next: Next) -> Response {
    if !matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH) {
        return next.run(req).await;
    }
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("?"));
    match content_type {
        Some(ct) if is_json(ct) => {}
        // the privacy lane's gateway reads its own opaque body (within the
        // body limit above)
        Some(
            relay_privacy::http::REQUEST_MEDIA_TYPE
            | relay_privacy::http::CHUNKED_REQUEST_MEDIA_TYPE,
        ) if req.uri().path() == relay_privacy::http::GATEWAY_PATH => return next.run(req).await,
        None if announces_no_body(req.headers()) => return next.run(req).await,
        other => {
            let sent = other.map_or("no content-type".to_string(), |ct| {
                format!("content-type {:?}", relay_engine::tokens::clip(ct))
            });
            return ApiError::new(
                ErrorCode::UnsupportedMediaType,
                format!("body: sent with {sent}; this API reads application/json only"),
            )
            .field("content-type")
            .suggest("send the body as JSON with content-type: application/json")
            .into_response();
        }
    }
    let (mut parts, body) = req.into_parts();
    let bytes =
        match tokio::time::timeout(gate.read_timeout, axum::body::to_bytes(body, gate.limit)).await
        {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(e)) if is_length_limit(&e) => return too_large(gate.limit).into_response(),
            Ok(Err(e)) => {
                return ApiError::new(ErrorCode::MalformedBody, format!("body: unreadable ({e})"))
                    .into_response()
            }
            Err(_) => {
                tracing::info!("request body not received within the read timeout");
                let mut resp = ApiError::new(
                    ErrorCode::RequestTimeout,
                    format!(
                        "body: not received within {} ms",
                        gate.read_timeout.as_millis()
                    ),
                )
                .suggest("send the whole body at once")
                .into_response();
                // The rest of the body is never read: the connection must not
                // be reused.
                resp.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                return resp;
            }
        };
    let hash = crate::refusal::RequestHash::of(&parts.method, &parts.uri, bytes.clone());
    if !bytes.is_empty() {
        match edge::parse_json(&bytes) {
            Ok(v) => {
                parts.extensions.insert(edge::ParsedBody(v));
            }
            Err(e) => return with_hash(e.into_response(), hash),
        }
    }
    let resp = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    with_hash(resp, hash)
}

/// Puts the request's hash on its answer (a refusal is signed over it:
/// [`crate::refusal`]).
fn with_hash(mut resp: Response, hash: crate::refusal::RequestHash) -> Response {
    resp.extensions_mut().insert(hash);
    resp
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        ErrorCode::BodyTooLarge,
        format!("body: larger than {limit} bytes, the most this host reads"),
    )
}

/// Whether a body error is (or was caused by) the length limit.
fn is_length_limit(e: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The code of an error answer that is not JSON, which the edge rewrites
/// into the error object; `None` for any other answer.
fn json_error_code(resp: &Response) -> Option<ErrorCode> {
    let status = resp.status();
    let is_json_answer = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"));
    if status.as_u16() < 400 || is_json_answer {
        return None;
    }
    Some(match status {
        StatusCode::BAD_REQUEST => ErrorCode::MalformedBody,
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => ErrorCode::NotFound,
        StatusCode::REQUEST_TIMEOUT => ErrorCode::RequestTimeout,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::BodyTooLarge,
        StatusCode::URI_TOO_LONG => ErrorCode::UriTooLong,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ErrorCode::UnsupportedMediaType,
        StatusCode::UNPROCESSABLE_ENTITY => ErrorCode::InvalidField,
        StatusCode::TOO_MANY_REQUESTS => ErrorCode::RateLimited,
        StatusCode::SERVICE_UNAVAILABLE => ErrorCode::HandlerTimeout,
        s if s.is_server_error() => ErrorCode::Internal,
        _ => return None,
    })
}

/// `resp`, an error answer that is not JSON, as the error object with
/// `code`: its text (or its status's reason) the message, its headers
/// kept.
async fn json_error(code: ErrorCode, resp: Response) -> Response {
    let status = resp.status();
    let (parts, body) = resp.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let message = match text.trim() {
        "" => status
            .canonical_reason()
            .unwrap_or("error")
            .to_ascii_lowercase(),
        t => relay_engine::tokens::clip(t),
    };
    let mut json: HttpResponse<Body> = ApiError::new(code, message).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            json.headers_mut().entry(name).or_insert(value.clone());
        }
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types_are_recognised_strictly() {
        for ct in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json;charset=\"UTF-8\"",
            "application/json;",
        ] {
            assert!(is_json(ct), "{ct}");
        }
        for ct in [
            "text/plain",
            "text/plain; charset=utf-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json; charset=latin1",
            "application/json; boundary=x",
            "application/jsonx",
        ] {
            assert!(!is_json(ct), "{ct}");
        }
    }

    /// What [`JsonErrors`] answers for `resp`.
    async fn rewrite(mut resp: Response) -> Response {
        match JsonErrors.finish((), &mut resp) {
            Some(later) => later.await,
            None => resp,
        }
    }

    #[tokio::test]
    async fn plain_text_errors_become_the_error_object() {
        let plain = (StatusCode::PAYLOAD_TOO_LARGE, "length limit exceeded").into_response();
        let resp = rewrite(plain).await;
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body = axum::body::to_bytes(resp.into_body(), 4096).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["errorCode"], "BODY_TOO_LARGE");
        assert_eq!(v["error"], "length limit exceeded");
        let empty = StatusCode::SERVICE_UNAVAILABLE.into_response();
        let resp = rewrite(empty).await;
        for mut passed in [
            StatusCode::OK.into_response(),
            ApiError::new(ErrorCode::NotFound, "x").into_response(),
        ] {
            assert!(
                JsonErrors.finish((), &mut passed).is_none(),
                "answers that are fine or JSON pass untouched"
            );
        }
        let body = axum::body::to_bytes(resp.into_body(), 4096).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            (v["errorCode"].as_str(), v["retryable"].as_bool()),
            (Some("HANDLER_TIMEOUT"), Some(true))
        );
    }
}
