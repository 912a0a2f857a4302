//! `--fixture FILE`: a recorded upstream ([`relay_rail_sdk::fixture`])
//! served over real HTTP on loopback, and the operator settings that point
//! a rail at it.
//!
//! The rail is exercised exactly as against its live upstream — through the
//! host's HTTP capability, egress checks and deadlines — only the answers
//! come from the file. The settings are the ones an operator would write
//! for a local upstream: `[rails.<id>.config] base_url`, an `egress` entry
//! for `127.0.0.1` and `[capabilities] allow_private_networks`.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    body::Bytes,
    extract::State,
    http::{Method, StatusCode, Uri},
    response::{IntoResponse, Response},
    Json, Router,
};
use relay_rail_sdk::fixture::Fixture;

use super::KitOptions;

/// A recorded upstream being served; stops when dropped.
#[derive(Debug)]
pub struct FixtureServer {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl FixtureServer {
    /// Serves `fixture` on an ephemeral loopback port.
    pub async fn start(fixture: Fixture) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = Router::new().fallback(answer).with_state(Arc::new(fixture));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task })
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

    /// `opts` pointed at this server: `base_url`, egress to `127.0.0.1`,
    /// private networks allowed.
    pub fn apply(&self, mut opts: KitOptions) -> KitOptions {
        opts.rail_config.retain(|(k, _)| k != "base_url");
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
    State(fixture): State<Arc<Fixture>>,
    method: Method,
    uri: Uri,
    _body: Bytes,
) -> Response {
    match fixture.answer(method.as_str(), uri.path()) {
        Some(a) => (
            StatusCode::from_u16(a.status).unwrap_or(StatusCode::OK),
            Json(a.body.clone()),
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(Fixture::unmatched(method.as_str(), uri.path())),
        )
            .into_response(),
    }
}
