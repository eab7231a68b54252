//! The MCP servers an editor names in `session/new` and `session/load` (stdio or HTTP), as
//! agent-loop's own server definitions, so they join the configured ones with the same
//! approval, timeouts and confinement; untrusted, as any server a client hands over.

use std::collections::BTreeMap;
use std::time::Duration;

use agent_client_protocol::v1::schema::McpServer;
use agent_client_protocol::Error as RpcError;

use agent_loop::editor::{Credentials, ServerDef, Transport};
use agent_loop::Error;

use super::session::invalid;

/// An MCP server the client gave, as agent-loop's definition of it.
pub fn mcp_def(server: McpServer) -> Result<ServerDef, RpcError> {
    let (name, transport) = match server {
        McpServer::Stdio(s) => (
            s.name,
            Transport::Stdio {
                command: s.command.to_string_lossy().into_owned(),
                args: s.args,
                env: s.env.into_iter().map(|v| (v.name, v.value)).collect(),
            },
        ),
        McpServer::Http(s) => (
            s.name,
            Transport::Http {
                url: s.url,
                credentials: Credentials {
                    http_headers: s
                        .headers
                        .into_iter()
                        .map(|h| (h.name, h.value))
                        .collect::<BTreeMap<_, _>>(),
                    ..Credentials::default()
                },
            },
        ),
        _ => {
            return Err(invalid(Error::config(
                "MCP servers over stdio and HTTP are supported, not this transport",
            )))
        }
    };
    // Its tools are called `mcp.NAME.TOOL`: a name is kept to the characters that allows.
    let name: String = name
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '-',
            },
        )
        .collect();
    Ok(ServerDef {
        defined_at: "session/new".into(),
        name,
        transport,
        enabled: true,
        timeout: Duration::from_secs(60),
        startup_timeout: Duration::from_secs(60),
        trust: false,
    })
}
