//! The oblivious relay for the devnet (`{relay_url}`, RFC 9458 §2): it
//! forwards an encapsulated request to the gateway and the answer back,
//! carrying nothing of the client's but the bytes — no address, no
//! header, no cookie — and it forwards the gateway's key list so a client
//! never connects to the gateway itself. `relay up` runs it beside the
//! host; in production it is a separate operator's.
//!
//!   GET  /keys     → GET  <gateway>/api/ohttp/keys
//!   POST /gateway  → POST <gateway>/api/ohttp/gateway
//!
//! It logs nothing per request. It caps a request at 1 MiB and at most 64
//! in flight.

use std::sync::Arc;

use axum::{
    body::Bytes,
    extract::State,
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Router,
};

use crate::client::{RELAY_GATEWAY_PATH, RELAY_KEYS_PATH};

/// The largest request the relay forwards.
pub const MAX_REQUEST: usize = 1 << 20;
/// Requests it forwards at once.
pub const IN_FLIGHT: usize = 64;

#[derive(Clone)]
struct Forward {
    http: reqwest::Client,
    gateway: Arc<str>,
    slots: Arc<tokio::sync::Semaphore>,
}

/// The relay's router, forwarding to the host at `gateway` (its base URL).
pub fn router(gateway: &str) -> Router {
    let f = Forward {
        http: reqwest::Client::new(),
        gateway: gateway.trim_end_matches('/').into(),
        slots: Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT)),
    };
    Router::new()
        .route(RELAY_KEYS_PATH, get(keys))
        .route(RELAY_GATEWAY_PATH, post(forward))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_REQUEST))
        .with_state(f)
}

/// Serves the relay on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    gateway: &str,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(gateway))
        .with_graceful_shutdown(shutdown)
        .await
}

async fn keys(State(f): State<Forward>) -> Response {
    let url = format!("{}/api/ohttp/keys", f.gateway);
    relay_answer(f.http.get(url).send().await).await
}

async fn forward(State(f): State<Forward>, headers: HeaderMap, body: Bytes) -> Response {
    let Ok(_slot) = f.slots.try_acquire() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "the relay is busy; retry").into_response();
    };
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if media != Some(crate::http::REQUEST_MEDIA_TYPE) {
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "message/ohttp-req only").into_response();
    }
    let url = format!("{}{}", f.gateway, crate::http::GATEWAY_PATH);
    let sent = f
        .http
        .post(url)
        .header(header::CONTENT_TYPE, crate::http::REQUEST_MEDIA_TYPE)
        .body(body)
        .send()
        .await;
    relay_answer(sent).await
}

/// The gateway's answer passed back: its status, its content type and its
/// bytes, nothing else.
async fn relay_answer(sent: Result<reqwest::Response, reqwest::Error>) -> Response {
    let Ok(resp) = sent else {
        return (StatusCode::BAD_GATEWAY, "the gateway could not be reached").into_response();
    };
    let status = StatusCode::from_u16(resp.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let media = resp.headers().get(header::CONTENT_TYPE).cloned();
    let Ok(bytes) = resp.bytes().await else {
        return (StatusCode::BAD_GATEWAY, "the gateway's answer broke off").into_response();
    };
    let mut out = (status, bytes).into_response();
    if let Some(m) = media {
        out.headers_mut().insert(header::CONTENT_TYPE, m);
    }
    out.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    out
}
