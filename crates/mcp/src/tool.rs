//! One MCP server tool as an agent-loop [`Tool`]: named `mcp.<server>.<tool>`, described by the
//! server's own JSON schema, asking for approval unless the server is trusted. The server's
//! words go into every prompt: its descriptions are kept to plain text (no control, zero-width
//! or bidirectional characters), and only tools whose names MCP allows are taken. Every failure
//! (server gone, timeout, protocol error) is an error result for the model naming the tool and
//! the server, never an error of the loop.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::connection::{CallError, PROGRESS_CAP_FACTOR};
use super::content::tool_output;
use super::server::Server;
use crate::tools::{ProgressSink, Tool, ToolContext, ToolKind, ToolOutput, ToolSpec};
use crate::BoxFuture;

pub struct McpTool {
    server: Arc<Server>,
    /// The tool's name on the server.
    remote: String,
    spec: ToolSpec,
}

/// The registry name of a server's tool.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp.{server}.{tool}")
}

impl McpTool {
    pub fn new(server: Arc<Server>, tool: &rmcp::model::Tool) -> Self {
        let mut schema = Value::Object((*tool.input_schema).clone());
        super::words::plain_descriptions(&mut schema);
        let description = super::words::plain(
            tool.description
                .as_deref()
                .or(tool.title.as_deref())
                .unwrap_or(""),
        );
        let spec = ToolSpec::new(
            tool_name(&server.def.name, &tool.name),
            description,
            main_param(&schema),
            !server.def.trust,
            schema,
        )
        .kind(ToolKind::Other);
        McpTool {
            server,
            remote: tool.name.to_string(),
            spec,
        }
    }

    async fn call(&self, args: Value, progress: ProgressSink) -> ToolOutput {
        let name = &self.spec.name;
        let server = &self.server.def.name;
        let args = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return ToolOutput::error(format!(
                    "invalid arguments for {name}: expected a JSON object, got {other}"
                ))
            }
        };
        let connection = match self.server.connection() {
            Ok(c) => c,
            Err(why) => {
                return ToolOutput::error(format!(
                    "{name}: MCP server `{server}` is not running ({why})"
                ))
            }
        };
        match connection
            .call(&self.remote, args, self.server.def.timeout, progress)
            .await
        {
            Ok(result) => tool_output(result),
            Err(CallError::Closed(note)) => {
                self.server.mark_exited(&note);
                ToolOutput::error(format!(
                    "{name}: MCP server `{server}` stopped during the call ({note})"
                ))
            }
            Err(CallError::Timeout { total: false }) => ToolOutput::error(format!(
                "{name}: MCP server `{server}` gave no answer within {}s (its timeout_s); the call was abandoned",
                self.server.def.timeout.as_secs()
            )),
            Err(CallError::Timeout { total: true }) => ToolOutput::error(format!(
                "{name}: MCP server `{server}` gave no answer within {}s ({PROGRESS_CAP_FACTOR} times its timeout_s, the cap on a call that reports progress); the call was abandoned",
                (self.server.def.timeout * PROGRESS_CAP_FACTOR).as_secs()
            )),
            Err(CallError::Protocol(message)) => ToolOutput::error(format!(
                "{name}: MCP server `{server}` refused the call: {message}"
            )),
            Err(CallError::Failed(cause)) => ToolOutput::error(format!(
                "{name}: the request to MCP server `{server}` failed: {cause}"
            )),
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(self.call(args, ctx.progress.clone()))
    }
}

/// The parameter a bare argument (`mcp.fs.read_file(notes.txt)`) maps to: the first required
/// string property, else the first string property.
fn main_param(schema: &Value) -> String {
    let props = schema.get("properties").and_then(Value::as_object);
    let is_string = |name: &str| {
        props
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            == Some("string")
    };
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let all = props.into_iter().flat_map(|p| p.keys().map(String::as_str));
    required
        .chain(all)
        .find(|name| is_string(name))
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn main_param_prefers_a_required_string() {
        let schema = json!({"type": "object", "properties": {
            "count": {"type": "number"}, "a": {"type": "string"}, "path": {"type": "string"}
        }, "required": ["count", "path"]});
        assert_eq!(main_param(&schema), "path");
        let schema = json!({"type": "object", "properties": {"n": {"type": "number"}}});
        assert_eq!(main_param(&schema), "");
    }
}
