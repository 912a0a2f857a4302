//! Where a tool's [`ApiCall`] goes: the host's own public operations in
//! process (the hosted endpoint, [`InProcess`]: called directly, not
//! through the router) or a host's HTTP API over the network (`relay mcp`,
//! [`Remote`]). Either way the API's handlers answer it, with its rate
//! limits, key tagging and validation; the tools add nothing.

use crate::tools::ApiCall;
use axum::{
    extract::ConnectInfo,
    http::{request::Parts, HeaderMap, HeaderName, HeaderValue, Request},
    response::IntoResponse,
};
use http_body_util::BodyExt;
use relay_api::{
    operations::{Invocation, Operations},
    ApiError, ErrorCode,
};
use serde_json::Value;
use std::{future::Future, net::SocketAddr, pin::Pin};

/// The API's answer to a call.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body (a non-JSON body as `{"text": …}`).
    pub body: Value,
}

/// Why the API could not be reached (never a refusal: those are answers).
#[derive(Debug, thiserror::Error)]
#[error("the relay host could not be reached: {0}")]
pub struct Unreachable(pub String);

/// A boxed future of an answer.
pub type AnswerFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ApiAnswer, Unreachable>> + Send + 'a>>;

/// Answers API calls.
pub trait Backend: Send + Sync + 'static {
    /// Sends `call`; `caller` is the MCP request's own HTTP request, when
    /// it came over HTTP (the hosted endpoint forwards the caller's
    /// `x-relay-key` and peer address from it).
    fn send<'a>(&'a self, call: ApiCall, caller: Option<&'a Parts>) -> AnswerFuture<'a>;
}

/// The body as JSON, or `{"text": …}`.
fn json_or_text(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| serde_json::json!({"text": String::from_utf8_lossy(bytes)}))
}

/// The API's answer from either backend's HTTP response: its status and
/// its body as JSON (or text).
async fn answer<B>(resp: axum::http::Response<B>) -> Result<ApiAnswer, Unreachable>
where
    B: axum::body::HttpBody,
    B::Error: std::fmt::Display,
{
    let status = resp.status().as_u16();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| Unreachable(e.to_string()))?
        .to_bytes();
    Ok(ApiAnswer {
        status,
        body: json_or_text(&bytes),
    })
}

/// Headers of the caller that the API reads for limits and usage.
const FORWARDED: &[&str] = &["x-relay-key", "x-forwarded-for"];

/// The host's own public operations, called in process
/// ([`relay_api::operations`]: each its handler, under the HTTP edge's
/// rate limits, usage and refusal signing — not through the router).
#[derive(Clone)]
pub struct InProcess(pub Operations);

impl InProcess {
    /// `call` as an invocation, with the caller's forwarded headers and
    /// peer; a header the tool was given that HTTP cannot carry is the
    /// caller's mistake (`INVALID_FIELD` naming it).
    fn invocation(call: ApiCall, caller: Option<&Parts>) -> Result<Invocation, ApiError> {
        let mut headers = HeaderMap::new();
        for (k, v) in &call.headers {
            let (Ok(name), Ok(value)) = (
                HeaderName::try_from(k.as_str()),
                HeaderValue::try_from(v.as_str()),
            ) else {
                return Err(ApiError::new(
                    ErrorCode::InvalidField,
                    format!("{k}: not a valid HTTP header value"),
                )
                .field(k.clone()));
            };
            headers.append(name, value);
        }
        let mut peer = None;
        if let Some(parts) = caller {
            for name in FORWARDED {
                for v in parts.headers.get_all(*name) {
                    headers.append(*name, v.clone());
                }
            }
            peer = parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0);
        }
        // A tool's body is always the object of its arguments.
        let body = call.body.and_then(|b| match b {
            Value::Object(m) => Some(m),
            _ => None,
        });
        Ok(Invocation {
            method: call.method,
            path_and_query: call.path_and_query,
            headers,
            peer,
            body,
        })
    }
}

impl Backend for InProcess {
    fn send<'a>(&'a self, call: ApiCall, caller: Option<&'a Parts>) -> AnswerFuture<'a> {
        Box::pin(async move {
            let resp = match Self::invocation(call, caller) {
                Ok(inv) => self
                    .0
                    .call(inv)
                    .await
                    .map_err(|e| Unreachable(e.to_string()))?,
                Err(refused) => refused.into_response(),
            };
            answer(resp).await
        })
    }
}

/// The HTTP(S) client `relay mcp` talks to its host with: hyper over
/// rustls (`ring`, the platform's trust roots), `http://` allowed too.
pub type HttpClient = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    http_body_util::Full<axum::body::Bytes>,
>;

/// A client for `http://` and `https://` hosts.
pub fn http_client() -> Result<HttpClient, Unreachable> {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_platform_verifier(provider)
        .map_err(|e| Unreachable(format!("TLS setup: {e}")))?
        .https_or_http()
        .enable_http1()
        .build();
    Ok(
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(https),
    )
}

/// A host's HTTP API at `base` (`relay mcp --url`).
#[derive(Clone)]
pub struct Remote {
    /// The base URL, without a trailing slash.
    pub base: String,
    /// The client.
    pub client: HttpClient,
    /// Headers sent with every call (`x-relay-key` from `RELAY_API_KEY`).
    pub always: Vec<(String, String)>,
    /// The session bearer (`RELAY_SESSION_TOKEN`), sent only by the tools
    /// that declare it.
    pub session_bearer: Option<String>,
    /// The privacy lane's client (`relay mcp --ohttp-relay`): private-lane
    /// tools go through the oblivious relay instead of straight to `base`.
    pub oblivious: Option<relay_privacy::client::ObliviousClient>,
}

impl Remote {
    /// GETs a JSON document (the OpenAPI document at start).
    pub async fn get_json(&self, path: &str) -> Result<Value, Unreachable> {
        let call = ApiCall {
            method: axum::http::Method::GET,
            path_and_query: path.into(),
            headers: Vec::new(),
            body: None,
            session_bearer: false,
            private_lane: false,
        };
        let a = self.send_call(call).await?;
        match a.status {
            200 => Ok(a.body),
            s => Err(Unreachable(format!("{path} answered {s}: {}", a.body))),
        }
    }

    /// Sends `call` (with the session bearer when the tool declares it),
    /// a private-lane tool's through the oblivious relay when one is given.
    async fn send_call(&self, call: ApiCall) -> Result<ApiAnswer, Unreachable> {
        if let (true, Some(lane)) = (call.private_lane, &self.oblivious) {
            return self.send_oblivious(lane, call).await;
        }
        let mut req = Request::builder()
            .method(call.method)
            .uri(format!("{}{}", self.base, call.path_and_query));
        for (k, v) in self.always.iter().chain(&call.headers) {
            req = req.header(k, v);
        }
        if let (true, Some(t)) = (call.session_bearer, &self.session_bearer) {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let body = match &call.body {
            Some(b) => {
                req = req.header("content-type", "application/json");
                b.to_string()
            }
            None => String::new(),
        };
        let req = req
            .body(http_body_util::Full::new(axum::body::Bytes::from(body)))
            .map_err(|e| Unreachable(e.to_string()))?;
        let resp = self
            .client
            .request(req)
            .await
            .map_err(|e| Unreachable(e.to_string()))?;
        answer(resp).await
    }
}

impl Remote {
    async fn send_oblivious(
        &self,
        lane: &relay_privacy::client::ObliviousClient,
        call: ApiCall,
    ) -> Result<ApiAnswer, Unreachable> {
        let mut headers: Vec<(String, String)> =
            self.always.iter().chain(&call.headers).cloned().collect();
        if let (true, Some(t)) = (call.session_bearer, &self.session_bearer) {
            headers.push(("authorization".into(), format!("Bearer {t}")));
        }
        let body = match &call.body {
            Some(b) => {
                headers.push(("content-type".into(), "application/json".into()));
                b.to_string()
            }
            None => String::new(),
        };
        let pairs: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let a = lane
            .send(
                call.method.as_str(),
                &call.path_and_query,
                &pairs,
                body.as_bytes(),
            )
            .await
            .map_err(|e| Unreachable(format!("through the privacy lane: {e}")))?;
        Ok(ApiAnswer {
            status: a.status,
            body: json_or_text(&a.body),
        })
    }
}

impl Backend for Remote {
    fn send<'a>(&'a self, call: ApiCall, _caller: Option<&'a Parts>) -> AnswerFuture<'a> {
        Box::pin(self.send_call(call))
    }
}
