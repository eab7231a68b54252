//! The MCP side of the server, run by the official SDK (rmcp): the handshake, `tools/list`,
//! and `tools/call`, which is checked here and handed to [`super::calls`] with what it needs
//! to talk back to the client (the peer, the request's cancellation token, its progress
//! token). rmcp runs each request as a task of its own, so calls wait side by side.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use tokio::sync::{mpsc, oneshot};

use super::calls::Call;

#[derive(Clone)]
pub struct Handler {
    calls: mpsc::UnboundedSender<Call>,
    tools: Arc<Vec<Tool>>,
}

impl Handler {
    pub fn new(calls: mpsc::UnboundedSender<Call>, tools: Vec<Tool>) -> Handler {
        Handler {
            calls,
            tools: Arc::new(tools),
        }
    }
}

const INSTRUCTIONS: &str =
    "agent-loop runs a turn of another AI agent or model (agent CLIs such as \
gemini, codex or claude, HTTP APIs, local models) with agent-loop's tools, confinement and \
approval. `backends` lists what can run here; `ask` starts or continues a session; `reply` \
continues one by name, on the same or another backend.";

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("agent-loop", env!("CARGO_PKG_VERSION"))
                    .with_title("agent-loop"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    /// Up to 2025-11-25, not 2026-07-28: that revision forbids a server's own requests to
    /// the client (rmcp refuses to send them), so a turn could neither ask its approval
    /// questions nor list the client's roots. A client that offers 2026-07-28 and older
    /// ones (Claude Code) then connects with `initialize`.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let progress = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref()?.get_progress_token());
        let capabilities = context.client_capabilities();
        let parsed = super::tools::parse(&request.name, request.arguments.unwrap_or_default())?;
        let (answer, answered) = oneshot::channel();
        let call = Call {
            request: parsed,
            peer: context.peer,
            cancelled: context.ct,
            progress,
            capabilities,
            answer,
        };
        self.calls
            .send(call)
            .map_err(|_| McpError::internal_error("agent-loop is shutting down", None))?;
        answered.await.map(Into::into).map_err(|_| {
            McpError::internal_error(
                "the call ended without an answer (agent-loop is shutting down)",
                None,
            )
        })
    }
}
