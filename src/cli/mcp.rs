//! `agent-loop mcp login|logout NAME` (the REPL's `/mcp` is the library's command; `mcp serve`
//! is [`super::mcp_serve`]).

use std::path::Path;

use agent_loop::Error;

use super::args::McpAction;

/// `agent-loop mcp login NAME` (the URL and what happened on stderr, so stdout stays
/// empty for scripts) and `agent-loop mcp logout NAME`.
pub async fn account(action: &McpAction, config: Option<&Path>) -> Result<(), Error> {
    match action {
        McpAction::Login { name } => {
            let config = agent_loop::chat::Chat::load_config(config)?;
            agent_loop::chat::Chat::mcp_login(&config, name, &mut |line| eprintln!("{line}"))
                .await?;
            eprintln!("agent-loop: logged in to MCP server `{name}`");
        }
        // Run by `mcp_serve`, never here.
        McpAction::Serve(_) => {}
        McpAction::Logout { name } => {
            let removed = agent_loop::chat::Chat::mcp_logout(name)?;
            if removed {
                eprintln!("agent-loop: logged out of MCP server `{name}`");
            } else {
                eprintln!("agent-loop: MCP server `{name}` had no login");
            }
        }
    }
    Ok(())
}
