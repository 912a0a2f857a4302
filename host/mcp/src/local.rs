//! `relay mcp`: the local tool server — MCP over stdio for one agent,
//! every tool (the private ones too) sent to a host's HTTP API over
//! `https://` (rustls) or `http://`. It holds
//! nothing it was not given: `execute` carries the agent's own Permit2
//! signature in its input, `session_execute` sends the bearer of
//! [`SESSION_TOKEN_ENV`], and [`API_KEY_ENV`] (optional) tags every call.

use crate::{
    backend::Remote,
    server::{Door, RelayTools},
    tools,
};
use rmcp::ServiceExt;

/// The environment variable with the session bearer (`rsk_…`) that
/// `session_execute` sends as `Authorization: Bearer`.
pub const SESSION_TOKEN_ENV: &str = "RELAY_SESSION_TOKEN";

/// The environment variable with an optional developer key (`ak_…`)
/// sent as `x-relay-key` with every call.
pub const API_KEY_ENV: &str = "RELAY_API_KEY";

/// Why the local server stopped.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The host did not serve its OpenAPI document.
    #[error("cannot read {url}/api/openapi.json: {source}")]
    Host {
        /// The host.
        url: String,
        /// The cause.
        source: crate::backend::Unreachable,
    },
    /// The MCP session failed.
    #[error("MCP over stdio: {0}")]
    Mcp(String),
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Serves MCP on stdin/stdout against the host at `url` until the client
/// closes the stream; with `ohttp_relay`, the private-lane tools (execute,
/// session_execute, agent_do) go through that oblivious relay to the
/// host's gateway (spec §4.11), so the host never sees this machine's
/// address on a call that moves funds.
pub async fn run_stdio(url: &str, ohttp_relay: Option<&str>) -> Result<(), LocalError> {
    let base = url.trim_end_matches('/').to_string();
    let client = crate::backend::http_client().map_err(|source| LocalError::Host {
        url: base.clone(),
        source,
    })?;
    let remote = Remote {
        base: base.clone(),
        client,
        always: env(API_KEY_ENV)
            .map(|k| ("x-relay-key".to_string(), k))
            .into_iter()
            .collect(),
        session_bearer: env(SESSION_TOKEN_ENV),
        oblivious: ohttp_relay.map(relay_privacy::client::ObliviousClient::new),
    };
    let doc = remote
        .get_json("/api/openapi.json")
        .await
        .map_err(|source| LocalError::Host { url: base, source })?;
    let tools = tools::resolve_all(&doc);
    tracing::info!(tools = tools.len(), "relay mcp: serving over stdio");
    let server = RelayTools::new(Door::Local, tools, remote);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| LocalError::Mcp(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| LocalError::Mcp(e.to_string()))?;
    Ok(())
}
