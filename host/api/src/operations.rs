//! The API's public operations as calls: what the hosted MCP endpoint
//! serves (spec §4.11), each one its handler called as a function — not a
//! request sent back through the router — over a typed [`Invocation`]
//! (the arguments already split into query, headers and a JSON object),
//! under the same policies the HTTP edge applies: the rate-limit buckets
//! (the very limiter the router counts in, so a tool call and the same
//! HTTP request spend one bucket), developer-key usage, the dashboard's
//! recent errors, a request timeout, panics answered as 500, and signed
//! refusals. What a call answers is what the HTTP API answers for the same
//! input: status, body and `errorCode`.
//!
//! Only the reads and dry computations are here; an operation that signs
//! or moves funds is not, so the hosted door cannot reach one whatever it
//! is sent.

use std::{convert::Infallible, net::SocketAddr, sync::Arc, time::Duration};

use axum::{
    body::Body,
    extract::{ConnectInfo, Query, Request, State},
    http::{request::Parts, HeaderMap, Method, StatusCode, Uri},
    response::{IntoResponse, Response},
    Extension,
};
use relay_feature::edge::{self, JsonObject, QueryFields};
use serde_json::{Map, Value};
use tower::{util::BoxCloneSyncService, ServiceBuilder, ServiceExt};
use tower_http::{catch_panic::CatchPanicLayer, timeout::TimeoutLayer};

use crate::{
    around::AroundLayer,
    layers::{panicked, JsonErrors},
    limits::RateLimiter,
    quote::Quoting,
    refusal::RequestHash,
    AppState,
};

/// One call of a public operation.
#[derive(Clone, Debug)]
pub struct Invocation {
    /// `GET` or `POST`.
    pub method: Method,
    /// The operation's path with its query string (`/api/route/status?id=…`).
    pub path_and_query: String,
    /// The request headers: the operation's declared header parameters
    /// and what the caller's own request carried (`x-relay-key`,
    /// `x-forwarded-for`).
    pub headers: HeaderMap,
    /// The caller's TCP peer, when it came over a socket.
    pub peer: Option<SocketAddr>,
    /// The JSON body, for operations that take one.
    pub body: Option<Map<String, Value>>,
}

/// Why an [`Invocation`] is not a request at all (a path no URI can hold).
#[derive(Debug, thiserror::Error)]
#[error("not an operation path: {0}")]
pub struct BadPath(String);

/// The public operations, called in process (module docs).
#[derive(Clone)]
pub struct Operations {
    service: BoxCloneSyncService<Request, Response, Infallible>,
}

impl Operations {
    /// The operations over `state`, counted in `limiter`.
    pub(crate) fn new(state: &AppState, limiter: Arc<RateLimiter>) -> Self {
        let handlers = Handlers {
            q: Quoting::of(state),
            quote: crate::quote::state(Quoting::of(state)),
            preflight: crate::preflight::state(Quoting::of(state)),
        };
        let timeout = Duration::from_millis(state.config.http.request_timeout_ms);
        let service = ServiceBuilder::new()
            .layer(AroundLayer(crate::refusal::Sign(state.clone())))
            .layer(AroundLayer(crate::usage::Record(state.keys.clone())))
            .layer(AroundLayer(crate::admin::Observe(
                state.signals.clone(),
                state.clock.clone(),
            )))
            .layer(CatchPanicLayer::custom(panicked))
            .layer(AroundLayer(JsonErrors))
            .layer(AroundLayer(crate::limits::Enforce(limiter)))
            .layer(TimeoutLayer::with_status_code(
                StatusCode::SERVICE_UNAVAILABLE,
                timeout,
            ))
            .map_response(IntoResponse::into_response)
            .service_fn(move |req: Request| {
                let handlers = handlers.clone();
                async move { Ok::<_, Infallible>(handlers.dispatch(req).await) }
            });
        Operations {
            service: BoxCloneSyncService::new(service),
        }
    }

    /// Answers `call` as the HTTP API answers the same request.
    #[tracing::instrument(name = "operation", skip_all, fields(method = %call.method, path))]
    pub async fn call(&self, call: Invocation) -> Result<Response, BadPath> {
        let uri: Uri = call
            .path_and_query
            .parse()
            .map_err(|_| BadPath(call.path_and_query.clone()))?;
        tracing::Span::current().record("path", uri.path());
        let mut req = Request::new(Body::empty());
        *req.method_mut() = call.method;
        *req.uri_mut() = uri;
        *req.headers_mut() = call.headers;
        if let Some(peer) = call.peer {
            req.extensions_mut().insert(ConnectInfo(peer));
        }
        if let Some(path) = operation_path(req.method(), req.uri().path()) {
            req.extensions_mut().insert(Operation(path));
        }
        req.extensions_mut().insert(Arguments(call.body));
        let Ok(resp) = self.service.clone().oneshot(req).await;
        Ok(resp)
    }

    /// The host's OpenAPI document (every operation's schema: what the
    /// hosted endpoint derives its tools' inputs from).
    pub fn openapi(&self) -> Value {
        crate::openapi::document_value()
    }
}

/// The call's JSON body, handed from [`Operations::call`] to the handler
/// in the request's extensions (never serialised and parsed again).
#[derive(Clone)]
struct Arguments(Option<Map<String, Value>>);

/// What the handlers are called with.
#[derive(Clone)]
struct Handlers {
    q: Quoting,
    quote: crate::quote::QuoteState,
    preflight: crate::preflight::Preflight,
}

impl Handlers {
    /// Calls the handler of `req`'s operation (404 `NOT_FOUND` for any
    /// other: the private operations are not among them).
    async fn dispatch(&self, req: Request) -> Response {
        let (parts, _) = req.into_parts();
        let body = parts
            .extensions
            .get::<Arguments>()
            .and_then(|a| a.0.clone());
        let hash = RequestHash::of(&parts.method, &parts.uri, body_bytes(&body));
        let mut resp = self.answer(&parts, body).await;
        resp.extensions_mut().insert(hash);
        resp
    }

    async fn answer(&self, parts: &Parts, body: Option<Map<String, Value>>) -> Response {
        let s = &self.q.app;
        let query = || -> QueryFields { Query::try_from_uri(&parts.uri) };
        match (&parts.method, parts.uri.path()) {
            (&Method::GET, "/api/status") => crate::status::status(State(s.clone()))
                .await
                .into_response(),
            (&Method::GET, "/api/errors") => crate::status::errors().await.into_response(),
            (&Method::GET, "/api/route/chains") => crate::routes::chains(State(s.clone()))
                .await
                .into_response(),
            (&Method::GET, "/api/gasless/info") => crate::gasless::info(State(s.clone()), query())
                .await
                .into_response(),
            (&Method::GET, "/api/route/status") => match Query::try_from_uri(&parts.uri) {
                Ok(id) => crate::track::status(State(s.clone()), id)
                    .await
                    .into_response(),
                Err(rejected) => rejected.into_response(),
            },
            (&Method::GET, "/api/routes/recent") => {
                crate::recent::recent_routes(State(s.clone()), query())
                    .await
                    .into_response()
            }
            (&Method::GET, "/api/terms") => crate::concierge::terms().await,
            (&Method::POST, "/api/ask") => {
                let body = body.map(|m| Extension(edge::ParsedBody(Value::Object(m))));
                crate::concierge::ask(State(s.clone()), body)
                    .await
                    .into_response()
            }
            (&Method::POST, path) => {
                let object = match body {
                    Some(m) => Ok(JsonObject(m)),
                    None => JsonObject::parse(b""),
                };
                match object {
                    Ok(b) => self.post(path, parts, b).await,
                    Err(e) => e.into_response(),
                }
            }
            _ => crate::error::not_found().await.into_response(),
        }
    }

    /// The operations that take a JSON object.
    async fn post(&self, path: &str, parts: &Parts, body: JsonObject) -> Response {
        let query = || -> QueryFields { Query::try_from_uri(&parts.uri) };
        let q = || State(self.q.clone());
        match path {
            "/api/route/quote" => {
                let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().copied();
                let state = State(self.quote.clone());
                let headers = parts.headers.clone();
                crate::quote::quote(state, peer.map(Extension), headers, query(), body)
                    .await
                    .into_response()
            }
            "/api/route/compare" => crate::compare::compare_post(q(), query(), body)
                .await
                .into_response(),
            "/api/intent/solve" => crate::solve::solve_post(q(), query(), body)
                .await
                .into_response(),
            "/api/route/preflight" => {
                let state = State(self.preflight.clone());
                let headers = parts.headers.clone();
                crate::preflight::preflight(state, query(), headers, body)
                    .await
                    .into_response()
            }
            "/api/route/plan" => crate::plan::plan(q(), body).await.into_response(),
            _ => crate::error::not_found().await.into_response(),
        }
    }
}

/// The route template an operation's call counts under (its path: none
/// of the public operations has a path parameter), as `MatchedPath` is
/// for a request the router matched.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operation(pub &'static str);

/// The operation `method path` names, if it is one served here.
fn operation_path(method: &Method, path: &str) -> Option<&'static str> {
    PATHS
        .iter()
        .find(|(m, p)| m == method && *p == path)
        .map(|(_, p)| *p)
}

/// The route template of `req`: the router's match, or the operation an
/// [`Operations::call`] names.
pub(crate) fn route_of(req: &Request) -> Option<&str> {
    let ext = req.extensions();
    ext.get::<axum::extract::MatchedPath>()
        .map(|m| m.as_str())
        .or_else(|| ext.get::<Operation>().map(|o| o.0))
}

/// Every operation served here.
pub const PATHS: &[(Method, &str)] = &[
    (Method::GET, "/api/status"),
    (Method::GET, "/api/errors"),
    (Method::GET, "/api/route/chains"),
    (Method::GET, "/api/gasless/info"),
    (Method::GET, "/api/route/status"),
    (Method::GET, "/api/routes/recent"),
    (Method::GET, "/api/terms"),
    (Method::POST, "/api/route/quote"),
    (Method::POST, "/api/route/compare"),
    (Method::POST, "/api/intent/solve"),
    (Method::POST, "/api/route/preflight"),
    (Method::POST, "/api/route/plan"),
    (Method::POST, "/api/ask"),
];

/// The body's bytes as a refusal hashes them (the JSON the HTTP API would
/// have been sent).
fn body_bytes(body: &Option<Map<String, Value>>) -> axum::body::Bytes {
    body.as_ref()
        .and_then(|m| serde_json::to_vec(m).ok())
        .unwrap_or_default()
        .into()
}
