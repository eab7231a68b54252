//! What agent-loop says and reads of MCP's methods: the `initialize` handshake, the tool list
//! (page by page) and a tool call's result. Only the fields it uses are read, so what newer
//! servers add to these messages does no harm.

use serde::Deserialize;
use serde_json::{json, Map, Value};

/// The revision agent-loop asks for. A server that speaks another answers with its own, and
/// that is accepted: the methods used here (`tools/list`, `tools/call`) are the same in all.
pub const VERSION: &str = "2025-11-25";

/// The `initialize` request's parameters: no capabilities (no sampling, roots or elicitation).
pub fn initialize() -> Value {
    json!({
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "agent-loop", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// The revision a server chose in its `initialize` result (the header of later HTTP requests).
pub fn chosen_version(result: &Value) -> Option<&str> {
    result.get("protocolVersion").and_then(Value::as_str)
}

/// Whether a server's `initialize` result lets `tools/list` be asked: a server that declares
/// its capabilities without `tools` (one of prompts or resources only) has none to list.
pub fn offers_tools(result: &Value) -> bool {
    match result.get("capabilities") {
        Some(capabilities) => capabilities.get("tools").is_some(),
        None => true,
    }
}

/// One tool a server offers.
#[derive(Debug, Clone, Deserialize)]
pub struct Tool {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// A JSON schema for the arguments; `{"type": "object"}` when a server leaves it out or
    /// gives something else than an object (one odd tool does not lose the server the rest).
    #[serde(
        rename = "inputSchema",
        default = "any_object",
        deserialize_with = "object_or_any"
    )]
    pub input_schema: Map<String, Value>,
}

fn any_object() -> Map<String, Value> {
    Map::from_iter([("type".to_string(), json!("object"))])
}

fn object_or_any<'de, D: serde::Deserializer<'de>>(
    schema: D,
) -> Result<Map<String, Value>, D::Error> {
    Ok(match Value::deserialize(schema)? {
        Value::Object(schema) => schema,
        _ => any_object(),
    })
}

/// One page of `tools/list`.
#[derive(Deserialize)]
pub struct ToolPage {
    pub tools: Vec<Tool>,
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
}

/// What a `tools/call` gives back.
#[derive(Debug, Default, Deserialize)]
pub struct CallResult {
    /// Content blocks (text, image, audio, resource, resource link), kept as JSON so a kind
    /// newer than this client can still be named.
    #[serde(default)]
    pub content: Vec<Value>,
    #[serde(rename = "structuredContent")]
    pub structured_content: Option<Value>,
    #[serde(rename = "isError")]
    pub is_error: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_odd_schema_does_not_lose_the_page() {
        let page: ToolPage = serde_json::from_value(json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object", "properties": {}}},
            {"name": "b", "inputSchema": "oops"},
            {"name": "c"},
        ]}))
        .unwrap();
        let schemas: Vec<Value> = page
            .tools
            .iter()
            .map(|t| Value::Object(t.input_schema.clone()))
            .collect();
        assert_eq!(
            schemas,
            [
                json!({"type": "object", "properties": {}}),
                json!({"type": "object"}),
                json!({"type": "object"})
            ]
        );
    }

    #[test]
    fn tools_are_listed_unless_the_server_says_it_has_none() {
        assert!(offers_tools(&json!({"capabilities": {"tools": {}}})));
        assert!(offers_tools(&json!({})));
        assert!(!offers_tools(&json!({"capabilities": {"prompts": {}}})));
    }
}
