//! The hosted tool endpoint: MCP over streamable HTTP at [`MCP_PATH`],
//! merged into the host's app next to the API router it calls.
//!
//! - **Read-only.** A POST whose JSON-RPC message (or any message of a
//!   batch) calls a private-lane tool is answered HTTP 421
//!   `{error, errorCode: "PRIVATE_LANE_REQUIRED", retryable: false,
//!   agentFix}` before the MCP session sees it.
//! - **Limits and keys.** Each tool call is a request to the API router
//!   carrying the caller's `x-relay-key` (and `X-Forwarded-For`) and TCP
//!   peer, so the API's per-endpoint rate limits and usage tagging apply
//!   exactly as to the same request sent to the API.
//! - **Host and Origin.** `http.mcp_allowed_hosts` pins the `Host` names
//!   it answers for (default: any — it serves public reads only, as the API
//!   does; DNS rebinding gains nothing the API does not give). Browser
//!   `Origin`s must be listed in `http.mcp_allowed_origins` (default none:
//!   a request with an `Origin` header is 403; agents send none). Bodies are
//!   capped at `http.body_limit_bytes`.

use crate::{
    backend::{Backend, InProcess},
    private_lane_body,
    server::{Door, RelayTools},
    tools::{self, ApiCall},
    MCP_PATH,
};
use axum::{
    body::Body,
    extract::{Request, State},
    http::{Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
    Json, Router,
};
use relay_api::{ApiError, ErrorCode};
use relay_config::HttpConfig;
use rmcp::transport::{
    streamable_http_server::session::local::LocalSessionManager, StreamableHttpServerConfig,
    StreamableHttpService,
};
use serde_json::Value;
use std::sync::Arc;

/// `api` with the hosted tool endpoint merged in at [`MCP_PATH`].
pub async fn with_mcp(api: Router, http: &HttpConfig) -> Router {
    let backend = InProcess(api.clone());
    let doc = openapi(&backend).await;
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
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mcp =
        Router::new()
            .route_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn_with_state(
                http.body_limit_bytes,
                refuse_private,
            ));
    api.merge(mcp)
}

/// The host's OpenAPI document, asked of its own router.
async fn openapi(backend: &InProcess) -> Value {
    let call = ApiCall {
        method: Method::GET,
        path_and_query: "/api/openapi.json".into(),
        headers: Vec::new(),
        body: None,
        session_bearer: false,
    };
    match backend.send(call, None).await {
        Ok(a) => a.body,
        Err(e) => {
            tracing::error!(%e, "no OpenAPI document: the hosted MCP endpoint lists no tools");
            Value::Null
        }
    }
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

/// Answers 421 for a call of a private tool; passes everything else on.
async fn refuse_private(State(limit): State<usize>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::new(
                ErrorCode::BodyTooLarge,
                "the MCP message is larger than http.body_limit_bytes",
            )
            .into_response();
        }
    };
    if let Some(name) = private_tool_called(&bytes) {
        tracing::info!(tool = %name, "private-lane tool refused on the hosted endpoint");
        return (
            StatusCode::MISDIRECTED_REQUEST,
            Json(private_lane_body(&name)),
        )
            .into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
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
