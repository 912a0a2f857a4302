//! `--fixture FILE`: a recorded upstream ([`relay_rail_sdk::fixture`])
//! served over real HTTP on loopback, and the operator settings that point
//! a rail at it. `--fixture DIR` serves a directory of vendor cases
//! ([`super::vendor`]) through the same server, one case at a time.
//!
//! The rail is exercised exactly as against its live upstream — through the
//! host's HTTP capability, egress checks and deadlines — only the answers
//! come from the file. The settings are the ones an operator would write
//! for a local upstream: `[rails.<id>.config] base_url`, an `egress` entry
//! for `127.0.0.1` and `[capabilities] allow_private_networks`.

use std::{
    net::SocketAddr,
    sync::{Arc, RwLock},
};

use axum::{
    body::Bytes,
    extract::State,
    http::{header::CONTENT_TYPE, HeaderName, HeaderValue, Method, StatusCode, Uri},
    response::{IntoResponse, Response},
    Json, Router,
};
use relay_rail_sdk::fixture::Fixture;

use super::KitOptions;

/// A setting's value that stands for the fixture server's URL.
pub const AT_FIXTURE: &str = "@fixture";

/// A recorded upstream being served; stops when dropped.
#[derive(Debug)]
pub struct FixtureServer {
    addr: SocketAddr,
    served: Arc<RwLock<Fixture>>,
    task: tokio::task::JoinHandle<()>,
}

impl FixtureServer {
    /// Serves `fixture` on an ephemeral loopback port.
    pub async fn start(fixture: Fixture) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let served = Arc::new(RwLock::new(fixture));
        let app = Router::new().fallback(answer).with_state(served.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, served, task })
    }

    /// Serves `fixture` from now on instead of what it served.
    pub fn serve(&self, fixture: Fixture) {
        *self.served.write().unwrap_or_else(|e| e.into_inner()) = fixture;
    }

    /// Reads and serves the fixture file at `path`.
    pub async fn from_file(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the fixture {}: {e}", path.display()))?;
        let fixture = Fixture::parse(&text)
            .map_err(|e| format!("{} is not a fixture file: {e}", path.display()))?;
        Self::start(fixture)
            .await
            .map_err(|e| format!("cannot serve the fixture: {e}"))
    }

    /// The base URL it answers on.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `opts` pointed at this server: `base_url`, every setting whose value
    /// starts with [`AT_FIXTURE`] (a rail's other upstreams, e.g.
    /// `attestation_base=@fixture`, `broker_url=@fixture/rpc`), egress to
    /// `127.0.0.1`, private networks allowed.
    pub fn apply(&self, mut opts: KitOptions) -> KitOptions {
        opts.rail_config.retain(|(k, _)| k != "base_url");
        for (_, v) in &mut opts.rail_config {
            if let Some(rest) = v.strip_prefix(AT_FIXTURE) {
                *v = format!("{}{rest}", self.url());
            }
        }
        opts.rail_config.push(("base_url".into(), self.url()));
        opts.extra_egress.push(self.addr.ip().to_string());
        opts.allow_private = true;
        opts
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    State(served): State<Arc<RwLock<Fixture>>>,
    method: Method,
    uri: Uri,
    _body: Bytes,
) -> Response {
    let fixture = served.read().unwrap_or_else(|e| e.into_inner()).clone();
    match fixture.answer(method.as_str(), uri.path()) {
        Some(a) => recorded(a),
        None => (
            StatusCode::NOT_FOUND,
            Json(Fixture::unmatched(method.as_str(), uri.path())),
        )
            .into_response(),
    }
}

/// A recorded answer as the upstream sent it: status, headers, body.
fn recorded(a: &relay_rail_sdk::fixture::RecordedAnswer) -> Response {
    let mut r = (
        StatusCode::from_u16(a.status).unwrap_or(StatusCode::OK),
        a.body_bytes(),
    )
        .into_response();
    let h = r.headers_mut();
    let kind = if a.text.is_some() {
        "text/plain"
    } else {
        "application/json"
    };
    h.insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    for (k, v) in &a.headers {
        if let (Ok(k), Ok(v)) = (
            HeaderName::try_from(k.as_str()),
            HeaderValue::try_from(v.as_str()),
        ) {
            h.insert(k, v);
        }
    }
    r
}
