//! The agents' doors over the Model Context Protocol (spec §4.11
//! `{mcp_url}`, §7 `PRIVATE_LANE_REQUIRED`), on the official Rust SDK
//! (`rmcp`). A thin adapter: every tool is one HTTP API operation
//! ([`tools::TOOLS`]); its input schema is that operation's, taken from the
//! host's OpenAPI document (generated from the very request types the
//! handlers parse); a call is sent to the API as the request a client
//! would send, and the API's JSON answer is the tool's structured result.
//! Nothing here quotes, validates or executes on its own.
//!
//! - [`hosted`]: the public, read-only endpoint at [`MCP_PATH`] (streamable
//!   HTTP), calling the host's own router in process with the caller's
//!   `x-relay-key` and address, so limits and key tagging are the API's.
//!   Private-lane tools are listed, and calling one answers HTTP 421
//!   `PRIVATE_LANE_REQUIRED` with an `agentFix`. Its sessions are capped
//!   per IP and in total ([`sessions`]).
//! - [`local`]: `relay mcp`, the stdio tool server for one agent, over a
//!   host's HTTP API, with the private tools too. It holds no key: a
//!   Permit2 signature comes in the tool input, a session bearer from
//!   `RELAY_SESSION_TOKEN`.

pub mod backend;
pub mod hosted;
pub mod local;
pub mod server;
pub mod sessions;
pub mod tools;

pub use relay_api::MCP_PATH;
use relay_api::{ApiError, ErrorCode};
use serde_json::Value;

/// What an agent does about a private-lane tool on the hosted endpoint.
pub const AGENT_FIX: &str = "run the local tool server and call this tool there: `relay mcp --url <this host's base URL>` speaks MCP over stdio (configure it as a stdio MCP server in your agent); it offers every hosted tool plus execute (pass your own Permit2 signature in the input), session_execute (set RELAY_SESSION_TOKEN to the session's rsk_ bearer) and agent_do; it holds no key you do not give it";

/// The 421 body for private tool `name`: the API's error shape plus
/// `agentFix`.
pub fn private_lane_body(name: &str) -> Value {
    let err = ApiError::new(
        ErrorCode::PrivateLaneRequired,
        format!("tool `{name}` signs, moves funds or starts a route: it is not served by the hosted, read-only tool endpoint"),
    )
    .suggest("use the local tool server (agentFix)");
    let mut body = serde_json::to_value(err.body()).unwrap_or_default();
    body["agentFix"] = AGENT_FIX.into();
    body
}
