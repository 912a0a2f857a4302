//! The hosted tool endpoint: MCP over streamable HTTP at [`MCP_PATH`],
//! merged into the host's app next to the API router it calls.
//!
//! - **Read-only.** A private-lane tool is never run here. Called in an
//!   MCP session (`mcp-session-id`), the call is answered as a tool result
//!   with `isError: true`, the typed body `{error, errorCode:
//!   "PRIVATE_LANE_REQUIRED", retryable: false, suggestedAction, agentFix}`
//!   as its structured content and the same JSON as its text — what an
//!   MCP client shows the agent (an HTTP error status reaches the official
//!   clients as an opaque `-32603`, losing the fix). Posted outside a
//!   session, or inside a JSON-RPC batch, it is answered HTTP 421 with
//!   that body before any session sees it (spec §6.2, §7).
//! - **Limits and keys.** Each tool call is a call of the API's own
//!   operation ([`relay_api::operations`]: its handler, not the router)
//!   carrying the caller's `x-relay-key` (and `X-Forwarded-For`) and TCP
//!   peer, counted in the HTTP API's own rate limiter, so the per-endpoint
//!   limits and usage tagging apply exactly as to the same request sent
//!   to the API.
//! - **Sessions are capped** per IP and in total ([`crate::sessions`]:
//!   `limits.mcp_sessions_per_ip`, 8, and `limits.mcp_sessions_total`,
//!   256): past either, `initialize` is 429 `RATE_LIMITED` with
//!   `retryAfterMs`, and no session is made (refused, not evicted: the
//!   module says why). Idle sessions end after 5 minutes.
//! - **Host and Origin.** `http.mcp_allowed_hosts` pins the `Host` names
//!   it answers for (default: any — it serves public reads only, as the API
//!   does; DNS rebinding gains nothing the API does not give). Browser
//!   `Origin`s must be listed in `http.mcp_allowed_origins` (default none:
//!   a request with an `Origin` header is 403; agents send none). Bodies are
//!   capped at `http.body_limit_bytes`.

use crate::{
    backend::InProcess,
    private_lane_body,
    server::{Door, RelayTools},
    sessions::{self, Capped, Refused, SessionCaps},
    tools, MCP_PATH,
};
use axum::{
    body::Body,
    extract::{ConnectInfo, Request, State},
    http::{Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
    Json, Router,
};
use relay_api::{operations::Operations, ApiError, ErrorCode};
use relay_config::{HttpConfig, LimitsConfig};
use rmcp::transport::{
    streamable_http_server::session::local::LocalSessionManager, StreamableHttpServerConfig,
    StreamableHttpService,
};
use serde_json::Value;
use std::{net::SocketAddr, sync::Arc};

/// `api` with the hosted tool endpoint merged in at [`MCP_PATH`], its
/// tools calling `operations` (the API's own, over the same rate
/// limiter), its sessions capped by `limits` — the per-IP cap across
/// replicas in `shared`, the host's store, when they share
/// ([`sessions::shared`]).
pub fn with_mcp(
    api: Router,
    operations: Operations,
    (http, limits): (&HttpConfig, &LimitsConfig),
    shared: Option<relay_store::Store>,
) -> Router {
    let doc = operations.openapi();
    if doc.is_null() {
        tracing::error!("no OpenAPI document: the hosted MCP endpoint lists no tools");
    }
    let backend = InProcess(operations);
    let tools = tools::resolve_all(&doc);
    tracing::info!(tools = tools.len(), path = MCP_PATH, "hosted MCP endpoint");
    let server = RelayTools::new(Door::Hosted, tools, backend);
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(http.body_limit_bytes)
        .with_allowed_origins(http.mcp_allowed_origins.clone())
        .enforce_origin_validation();
    config = match http.mcp_allowed_hosts.is_empty() {
        true => config.disable_allowed_hosts(),
        false => config.with_allowed_hosts(http.mcp_allowed_hosts.clone()),
    };
    let places = shared.map(|store| {
        sessions::shared::Places::new(store, limits.mcp_sessions_per_ip, limits.on_backend_failure)
    });
    let caps = SessionCaps::sharing(
        limits.mcp_sessions_per_ip,
        limits.mcp_sessions_total,
        places,
    );
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(Capped::new(LocalSessionManager::default(), caps.clone())),
        config,
    );
    let gate = Gate {
        body_limit: http.body_limit_bytes,
        limits: Arc::new(limits.clone()),
        caps,
    };
    let mcp = Router::new()
        .route_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(gate, refuse_private));
    api.merge(mcp)
}

/// What the endpoint checks before the MCP transport sees a request.
#[derive(Clone)]
struct Gate {
    body_limit: usize,
    limits: Arc<LimitsConfig>,
    caps: Arc<SessionCaps>,
}

/// The private tool a JSON-RPC body calls, if any (batches included).
pub fn private_tool_called(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let msgs = match v {
        Value::Array(a) => a,
        one => vec![one],
    };
    msgs.iter()
        .filter(|m| m["method"] == "tools/call")
        .filter_map(|m| m["params"]["name"].as_str())
        .find(|n| tools::is_private(n))
        .map(str::to_owned)
}

/// Answers 421 for a call of a private tool outside a session (or in a
/// batch) and 429 for a session past the caps; passes everything else on
/// (a POST without `mcp-session-id`, which opens a session, with a slot
/// lent to it).
async fn refuse_private(State(gate): State<Gate>, req: Request, next: Next) -> Response {
    if let Some(id) = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        gate.caps.touch(id);
    }
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, gate.body_limit).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::new(
                ErrorCode::BodyTooLarge,
                "the MCP message is larger than http.body_limit_bytes",
            )
            .into_response();
        }
    };
    let in_session = parts.headers.contains_key("mcp-session-id");
    // in a session, one call of a private tool reaches the tool server,
    // which answers it as a tool result with isError and the typed body
    // (what MCP clients show an agent); outside one, or in a batch, 421
    let answered_in_session = in_session && !bytes.trim_ascii_start().starts_with(b"[");
    if let Some(name) = private_tool_called(&bytes).filter(|_| !answered_in_session) {
        tracing::info!(tool = %name, "private-lane tool refused on the hosted endpoint");
        return (
            StatusCode::MISDIRECTED_REQUEST,
            Json(private_lane_body(&name)),
        )
            .into_response();
    }
    let req = Request::from_parts(parts, Body::from(bytes));
    if in_session {
        return next.run(req).await;
    }
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let client = relay_api::limits::client_ip(&gate.limits, req.headers(), peer);
    let mut slot = match gate.caps.take(client.clone()) {
        Ok(slot) => slot,
        Err(refused) => return refusal(&client, refused),
    };
    match gate.caps.hold(&mut slot).await {
        Ok(()) => sessions::with_slot(slot, next.run(req)).await,
        Err(sessions::shared::Refusal::Full) => {
            refusal(&client, Refused::PerIp(gate.limits.mcp_sessions_per_ip))
        }
        Err(sessions::shared::Refusal::Down) => ApiError::new(
            ErrorCode::RateLimitsUnavailable,
            "MCP sessions cannot be counted: the shared store is unreachable",
        )
        .into_response(),
    }
}

/// 429 for a session past the caps.
fn refusal(client: &relay_api::limits::Client, refused: Refused) -> Response {
    tracing::info!(%client, %refused, "MCP session refused");
    let ms = u64::try_from(sessions::RETRY_AFTER.as_millis()).unwrap_or(u64::MAX);
    ApiError::new(ErrorCode::RateLimited, refused.to_string())
        .retry_after_ms(ms)
        .suggest("close an MCP session you hold (HTTP DELETE with its mcp-session-id) or wait for one to idle out")
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_calls_are_found_alone_and_in_batches() {
        let one = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{}}}"#;
        assert_eq!(private_tool_called(one).as_deref(), Some("execute"));
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quote"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_do"}}]"#;
        assert_eq!(private_tool_called(batch).as_deref(), Some("agent_do"));
        let read = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quote"}}"#;
        assert_eq!(private_tool_called(read), None);
        assert_eq!(private_tool_called(b"not json"), None);
    }
}
