//! agent-loop's configured MCP servers (`[mcp.servers.NAME]`), in the form ACP's
//! `session/new` gives them to the agent, which connects to them itself: stdio servers
//! always, HTTP servers where the agent says it can (`mcpCapabilities.http`), with their
//! headers (a variable's value read now, a missing variable left out).

use serde_json::{json, Value};

use crate::config::mcp::{ServerDef, Transport};

/// The servers, for an agent whose `initialize` answer is `info`.
pub fn servers(defs: &[ServerDef], info: &Value) -> Vec<Value> {
    let http = info["agentCapabilities"]["mcpCapabilities"]["http"] == true;
    let pairs = |pairs: Vec<(String, String)>| -> Vec<Value> {
        pairs
            .into_iter()
            .map(|(name, value)| json!({ "name": name, "value": value }))
            .collect()
    };
    defs.iter()
        .filter_map(|def| match &def.transport {
            Transport::Stdio { command, args, env } => Some(json!({
                "name": def.name,
                "command": command,
                "args": args,
                "env": pairs(env.clone().into_iter().collect()),
            })),
            Transport::Http { url, credentials } if http => {
                let mut headers: Vec<(String, String)> =
                    credentials.http_headers.clone().into_iter().collect();
                for (header, var) in &credentials.env_http_headers {
                    if let Ok(value) = std::env::var(var) {
                        headers.push((header.clone(), value));
                    }
                }
                if let Some(var) = &credentials.bearer_token_env_var {
                    if let Ok(token) = std::env::var(var) {
                        headers.push(("Authorization".into(), format!("Bearer {token}")));
                    }
                }
                Some(json!({
                    "type": "http",
                    "name": def.name,
                    "url": url,
                    "headers": pairs(headers),
                }))
            }
            Transport::Http { .. } => None,
        })
        .collect()
}
