//! The MCP server both doors run: lists the [`crate::tools`] resolved
//! against the host's OpenAPI document and answers a tool call with the
//! HTTP API's answer to the same request — its JSON body as structured
//! content, `isError` when the API refused. On the hosted door a
//! private-lane tool is listed but answered with the 421 body
//! ([`crate::private_lane_body`]) — the HTTP layer in front
//! ([`crate::hosted`]) answers it with HTTP 421 before it gets here.

use crate::{
    backend::Backend,
    tools::{Lane, Resolved},
};
use axum::http::request::Parts;
use rmcp::{
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
        PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
    },
    service::RequestContext,
    ErrorData, RoleServer, ServerHandler,
};
use std::sync::Arc;

/// Which door a server is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Door {
    /// The public, read-only hosted endpoint.
    Hosted,
    /// `relay mcp`: every tool.
    Local,
}

/// The MCP server over a [`Backend`].
pub struct RelayTools<B> {
    inner: Arc<Inner<B>>,
}

impl<B> Clone for RelayTools<B> {
    fn clone(&self) -> Self {
        RelayTools {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<B> {
    door: Door,
    tools: Vec<Resolved>,
    backend: B,
}

impl<B: Backend> RelayTools<B> {
    /// A server offering `tools` over `backend`.
    pub fn new(door: Door, tools: Vec<Resolved>, backend: B) -> Self {
        RelayTools {
            inner: Arc::new(Inner {
                door,
                tools,
                backend,
            }),
        }
    }

    /// The tools as MCP lists them.
    pub fn listed(&self) -> Vec<Tool> {
        self.inner.tools.iter().map(listed).collect()
    }

    /// Answers a call of tool `name` with `args`.
    #[tracing::instrument(skip_all, fields(tool = %name, door = ?self.inner.door))]
    pub async fn answer(
        &self,
        name: &str,
        args: serde_json::Map<String, serde_json::Value>,
        caller: Option<&Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(tool) = self.inner.tools.iter().find(|t| t.spec.name == name) else {
            return Err(ErrorData::invalid_params(
                format!("no tool named `{name}` (tools/list names them)"),
                None,
            ));
        };
        if self.inner.door == Door::Hosted && tool.spec.lane == Lane::Private {
            return Ok(CallToolResult::structured_error(crate::private_lane_body(
                name,
            )));
        }
        let call = tool
            .call(args)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let answer = self
            .inner
            .backend
            .send(call, caller)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(match answer.status {
            200..=299 => CallToolResult::structured(answer.body),
            _ => CallToolResult::structured_error(answer.body),
        })
    }
}

/// A resolved tool as MCP lists it.
fn listed(t: &Resolved) -> Tool {
    let read_only = t.spec.lane == Lane::Public;
    Tool::new(
        t.spec.name,
        t.description(),
        Arc::new(t.input_schema.clone()),
    )
    .with_annotations(
        ToolAnnotations::new()
            .read_only(read_only)
            .destructive(!read_only)
            .open_world(true),
    )
}

impl<B: Backend> ServerHandler for RelayTools<B> {
    fn get_info(&self) -> ServerConfig {
        let how = match self.inner.door {
            Door::Hosted => "Hosted relay tools (read-only). Every tool is one HTTP API request; its result is the API's JSON answer. Private-lane tools (execute, session_execute, agent_do) answer 421 PRIVATE_LANE_REQUIRED here: run `relay mcp --url <this host>` locally for them.",
            Door::Local => "Local relay tools: every tool is one request to the configured host's HTTP API; its result is the API's JSON answer. execute needs the Permit2 signature you supply; session_execute uses RELAY_SESSION_TOKEN.",
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("relay", env!("CARGO_PKG_VERSION")))
            .with_instructions(how)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = context.extensions.get::<Parts>();
        let args = request.arguments.unwrap_or_default();
        self.answer(&request.name, args, caller)
            .await
            .map(CallToolResponse::from)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner
            .tools
            .iter()
            .find(|t| t.spec.name == name)
            .map(listed)
    }
}
