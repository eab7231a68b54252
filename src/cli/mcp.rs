//! The program's side of MCP: starting the configured servers before the first turn, saying
//! once on stderr which did not start, and the REPL's `/mcp` and `/mcp restart NAME`.

use super::screen::Screen;
use agent_loop::agent::Agent;
use agent_loop::mcp::{McpServers, ServerDef};

/// Starts the servers and adds their tools to the agent's registry; each failure is one
/// notice, and the session goes on without that server.
pub async fn start(defs: Vec<ServerDef>, agent: &mut Agent, display: &Screen) -> McpServers {
    if defs.is_empty() {
        return McpServers::default();
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let servers = McpServers::start(defs, &cwd, agent.options().env.clone()).await;
    for (name, why) in servers.failures() {
        display.notice(&format!(
            "agent-loop: MCP server `{name}` did not start, its tools are left out: {why}"
        ));
    }
    if let Err(e) = servers.register(agent.tools_mut()) {
        display.notice(&format!("agent-loop: MCP tools: {e}"));
    }
    for name in agent.tools().unmatched() {
        display.notice(&format!(
            "agent-loop: --tools names `{name}`, which no MCP server offers"
        ));
    }
    servers
}

/// `/mcp` lists the servers with their state and tool count; `/mcp restart NAME` restarts one.
pub async fn command(line: &str, servers: &McpServers, agent: &mut Agent, display: &Screen) {
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    match words.as_slice() {
        [] => display.notice(&servers.render_status()),
        ["restart", name] => match servers.restart(name, agent.tools_mut()).await {
            Ok(status) => display.notice(&status.line()),
            Err(e) => display.notice(&format!("error: {e}")),
        },
        _ => display.notice("usage: /mcp (list the MCP servers), /mcp restart NAME"),
    }
}
