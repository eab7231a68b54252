//! The REPL's `/mcp` and `/mcp restart NAME` (the servers themselves are started by the
//! library's chat).

use agent_loop::chat::Chat;

use super::screen::Screen;

/// `/mcp` lists the servers with their state and tool count; `/mcp restart NAME` restarts one.
pub async fn command(line: &str, chat: &mut Chat, display: &Screen) {
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    match words.as_slice() {
        [] => display.notice(&chat.mcp_status()),
        ["restart", name] => match chat.restart_mcp(name).await {
            Ok(status) => display.notice(&status.line()),
            Err(e) => display.notice(&format!("error: {e}")),
        },
        _ => display.notice("usage: /mcp (list the MCP servers), /mcp restart NAME"),
    }
}
