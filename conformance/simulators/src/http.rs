//! HTTP plumbing the simulators share: serving a router on a loopback port
//! with a tracing span per request and an `x-simulator` response header
//! (a header, so the upstreams' bodies stay exactly their documented
//! shape), and small request helpers.
//!
//! What it must never do: bind anything but 127.0.0.1.

use std::collections::HashMap;

use crate::error::SimError;
use axum::{
    body::Body,
    http::{HeaderValue, Request},
    response::Response,
    Router,
};
use tower_http::trace::TraceLayer;

/// `0x`-prefixed lower-case hex of `bytes`.
pub fn hex0x(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

/// A request's query parameters.
pub type Params = HashMap<String, String>;

/// The non-empty value of `key`.
pub fn param<'a>(q: &'a Params, key: &str) -> Option<&'a str> {
    q.get(key).map(|s| s.trim()).filter(|s| !s.is_empty())
}

/// Serves `router` for the simulator `name` on an ephemeral loopback port;
/// returns its base URL and the server task.
pub async fn serve(
    name: &'static str,
    router: Router,
) -> Result<(String, tokio::task::JoinHandle<()>), SimError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let router = router
        .layer(axum::middleware::map_response(
            move |mut r: Response| async move {
                r.headers_mut()
                    .insert("x-simulator", HeaderValue::from_static(name));
                r
            },
        ))
        .layer(
            TraceLayer::new_for_http().make_span_with(move |req: &Request<Body>| {
                tracing::info_span!(
                    "simulator_request",
                    simulator = name,
                    method = %req.method(),
                    path = %req.uri().path(),
                )
            }),
        );
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::warn!(simulator = name, error = %e, "simulator server stopped");
        }
    });
    Ok((url, task))
}

/// An early answer — an upstream error or refusal — boxed, because
/// responses are large; handlers return [`Answer`] and use `?`.
#[derive(Debug)]
pub struct Early(Box<Response>);

impl From<Response> for Early {
    fn from(r: Response) -> Self {
        Early(Box::new(r))
    }
}

impl axum::response::IntoResponse for Early {
    fn into_response(self) -> Response {
        *self.0
    }
}

/// A handler's answer: the response, or an early one.
pub type Answer<T = Response> = Result<T, Early>;
