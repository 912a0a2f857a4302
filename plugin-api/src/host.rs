//! The host capabilities a rail may use — its only way to reach the world.
//!
//! Every capability is checked by the host: HTTP only to the hosts the
//! manifest declares (private networks blocked unless the operator allows
//! them, response size capped, timeouts clipped to the call's deadline,
//! credentials injected by reference so the rail never sees them), RPC only
//! read-only methods on the chains the manifest declares.

use serde::{Deserialize, Serialize};

use crate::ChainRef;

/// HTTP method of an outbound request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    /// GET.
    Get,
    /// POST.
    Post,
}

/// An outbound HTTP request from a rail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRequest {
    /// Method.
    pub method: HttpMethod,
    /// Absolute URL; its host must be in the manifest's `egress` list.
    pub url: String,
    /// Request headers (name, value).
    pub headers: Vec<(String, String)>,
    /// Request body (usually JSON).
    pub body: Vec<u8>,
    /// The rail's own timeout; the host clips it to the call's deadline.
    pub timeout_ms: u64,
    /// Name of an operator-configured credential; the host adds its header
    /// (for example `x-lifi-api-key`) without the rail ever seeing the value.
    pub credential: Option<String>,
}

impl HttpRequest {
    /// A GET request with no headers.
    pub fn get(url: impl Into<String>) -> Self {
        HttpRequest {
            method: HttpMethod::Get,
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
            timeout_ms: 10_000,
            credential: None,
        }
    }

    /// A POST request with a JSON body.
    pub fn post_json(url: impl Into<String>, body: &serde_json::Value) -> Self {
        HttpRequest {
            method: HttpMethod::Post,
            url: url.into(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(body).unwrap_or_default(),
            timeout_ms: 10_000,
            credential: None,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Names the credential the host injects.
    pub fn with_credential(mut self, name: impl Into<String>) -> Self {
        self.credential = Some(name.into());
        self
    }
}

/// The answer to an [`HttpRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpResponse {
    /// HTTP status code.
    pub status: u16,
    /// Response headers (lower-case names).
    pub headers: Vec<(String, String)>,
    /// Body, at most the host's cap.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The body parsed as JSON.
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    /// A header by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Severity of a rail's log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Warn.
    Warn,
    /// Error.
    Error,
}

/// Why a capability call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum HostErrorKind {
    /// Policy refused the call (undeclared host, private network, write RPC).
    Denied,
    /// The call did not finish before its (clipped) deadline.
    Timeout,
    /// Connection-level failure.
    Network,
    /// The response exceeded the host's size cap.
    TooLarge,
    /// The rail asked for something the operator has not configured.
    NotConfigured,
    /// The chain node answered with a JSON-RPC error.
    Rpc,
}

/// A failed capability call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("host {kind:?}: {message}")]
pub struct HostError {
    /// What failed.
    pub kind: HostErrorKind,
    /// Detail, safe to log.
    pub message: String,
}

impl HostError {
    /// A new error.
    pub fn new(kind: HostErrorKind, message: impl Into<String>) -> Self {
        HostError {
            kind,
            message: message.into(),
        }
    }
}

impl From<HostError> for crate::RailError {
    fn from(e: HostError) -> Self {
        use crate::RailErrorKind as K;
        let kind = match e.kind {
            HostErrorKind::Timeout => K::UpstreamTimeout,
            HostErrorKind::Network => K::Upstream,
            HostErrorKind::TooLarge => K::UpstreamMalformed,
            HostErrorKind::Denied | HostErrorKind::NotConfigured | HostErrorKind::Rpc => {
                K::Capability
            }
        };
        crate::RailError::new(kind, e.to_string())
    }
}

/// What the host lends a rail for the duration of one call.
///
/// From the rail's point of view every method blocks; the host runs them
/// asynchronously (a wasm fiber or a blocking worker thread).
pub trait Host {
    /// Sends an HTTP request to a declared upstream host.
    fn http(&self, req: HttpRequest) -> Result<HttpResponse, HostError>;
    /// A read-only JSON-RPC call (`params` and the result are JSON text) on a
    /// declared chain.
    fn rpc(&self, chain: ChainRef, method: &str, params: &str) -> Result<String, HostError>;
    /// Wall-clock time, epoch milliseconds.
    fn now_ms(&self) -> u64;
    /// The epoch-millisecond instant by which this call must have returned.
    fn deadline_ms(&self) -> u64;
    /// Writes a log line tagged with the rail and call.
    fn log(&self, level: LogLevel, message: &str);
    /// Operator configuration for this rail (`[rails.<id>]` in the host's
    /// config), by key. Secrets are never returned here: see
    /// [`HttpRequest::credential`].
    fn config(&self, key: &str) -> Option<String>;
}
