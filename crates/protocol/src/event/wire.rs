//! The few events whose record is not their fields as they are, serialised by hand: a line
//! of stdout gets its newline back (and other streams have no record), a call or result of an
//! MCP server's tool is a record of its own kind, and usage is spelled out under the names
//! log pipelines expect. Each function is named by its variant's `serialize_with`, so the
//! variant stays the one place that says what its record is.

use serde::ser::{Error, SerializeMap};
use serde::Serializer;

use super::{CallPurpose, OutputStream};
use crate::usage::Usage;
use crate::ToolCall;

/// [`super::Event::BackendOutput`]: `text`, the line and its newline, for a line of stdout;
/// no record (an error) for the other streams.
pub fn stdout_line<S: Serializer>(
    _backend: &String,
    stream: &OutputStream,
    line: &String,
    s: S,
) -> Result<S::Ok, S::Error> {
    if *stream != OutputStream::Stdout {
        return Err(S::Error::custom("only a line of stdout has a record"));
    }
    let mut map = s.serialize_map(Some(1))?;
    map.serialize_entry("text", &format!("{line}\n"))?;
    map.end()
}

/// [`super::Event::ToolCall`]: `tool_call`, or `mcp_call` with the tool's `server`.
pub fn tool_call<S: Serializer>(
    call: &ToolCall,
    _summary: &String,
    s: S,
) -> Result<S::Ok, S::Error> {
    let server = mcp_server(&call.name);
    let mut map = s.serialize_map(None)?;
    map.serialize_entry("event", kind(server, "tool_call", "mcp_call"))?;
    map.serialize_entry("call_id", &call.id)?;
    map.serialize_entry("tool", &call.name)?;
    if let Some(server) = server {
        map.serialize_entry("server", server)?;
    }
    map.serialize_entry("args", &call.args)?;
    map.end()
}

/// [`super::Event::ToolResult`]: `tool_result`, or `mcp_result` with the tool's `server` and
/// no `exit_code` (only bash has one).
pub fn tool_result<S: Serializer>(
    call_id: &String,
    tool: &String,
    ok: &bool,
    output: &String,
    exit_code: &Option<i32>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let server = mcp_server(tool);
    let mut map = s.serialize_map(None)?;
    map.serialize_entry("event", kind(server, "tool_result", "mcp_result"))?;
    map.serialize_entry("call_id", call_id)?;
    map.serialize_entry("tool", tool)?;
    if let Some(server) = server {
        map.serialize_entry("server", server)?;
    }
    map.serialize_entry("ok", ok)?;
    map.serialize_entry("output", output)?;
    if server.is_none() {
        map.serialize_entry("exit_code", exit_code)?;
    }
    map.end()
}

/// [`super::Event::Usage`]: every count under its record's name, `null` when not reported;
/// `prompt_tokens` and `completion_tokens` repeat input and output; `for`, what the call was
/// for (`answer`, `summary`).
pub fn usage<S: Serializer>(
    _backend: &String,
    usage: &Usage,
    latency_ms: &u64,
    purpose: &CallPurpose,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(11))?;
    map.serialize_entry("input_tokens", &usage.input)?;
    map.serialize_entry("output_tokens", &usage.output)?;
    map.serialize_entry("total_tokens", &usage.total)?;
    map.serialize_entry("prompt_tokens", &usage.input)?;
    map.serialize_entry("completion_tokens", &usage.output)?;
    map.serialize_entry("thinking_tokens", &usage.thinking)?;
    map.serialize_entry("cache_read_tokens", &usage.cache_read)?;
    map.serialize_entry("cache_write_tokens", &usage.cache_write)?;
    map.serialize_entry("cost_usd", &usage.cost)?;
    map.serialize_entry("latency_ms", latency_ms)?;
    map.serialize_entry("for", purpose)?;
    map.end()
}

fn kind(server: Option<&str>, builtin: &'static str, mcp: &'static str) -> &'static str {
    if server.is_some() {
        mcp
    } else {
        builtin
    }
}

/// The server of an MCP tool's name, `mcp.SERVER.TOOL`.
pub fn mcp_server(tool: &str) -> Option<&str> {
    let rest = tool.strip_prefix("mcp.")?;
    rest.split_once('.').map(|(server, _)| server)
}
