//! The chat's MCP servers: started with the chat (their tools join the agent's), a front
//! end's own added, one restarted, their states shown; the tokens of their logins masked
//! wherever the chat shows or writes text.

use super::Chat;
use crate::mcp::{McpServers, ServerStatus};
use crate::Error;

impl Chat {
    /// Starts the configured MCP servers and adds their tools; returns what the user should
    /// know (a server that did not start, a `--tools` name no server offers). The chat goes
    /// on without the servers that failed.
    pub async fn start_mcp(&mut self) -> Vec<String> {
        let defs: Vec<_> = self.config.mcp_servers.values().cloned().collect();
        let mut notices = Vec::new();
        if defs.is_empty() {
            return notices;
        }
        let cwd = self.agent.options().cwd.clone();
        let root = self.agent.options().root.clone();
        let env = self.agent.options().env.clone();
        self.mcp = McpServers::start(defs, &cwd, &root, env).await;
        self.learn_login_tokens();
        for (name, why) in self.mcp.failures() {
            if why == crate::mcp::login_needed(&name) {
                notices.push(format!(
                    "agent-loop: MCP server `{name}` {why}; its tools are left out"
                ));
                continue;
            }
            notices.push(format!(
                "agent-loop: MCP server `{name}` did not start, its tools are left out: {why}"
            ));
        }
        for note in self.mcp.register(self.agent.tools_mut()) {
            notices.push(format!("agent-loop: {note}"));
        }
        for name in self.agent.tools().unmatched() {
            notices.push(format!(
                "agent-loop: --tools names `{name}`, which no MCP server offers"
            ));
        }
        notices
    }

    /// Adds an MCP server to those [`Chat::start_mcp`] starts: a front end's own, such as
    /// the servers an ACP client names for its session.
    pub fn add_mcp_server(&mut self, def: crate::config::mcp::ServerDef) {
        self.config.mcp_servers.insert(def.name.clone(), def);
    }

    /// Masks the MCP logins' tokens as they are now in tools' output (so no server's answer
    /// hands one to the model) and everywhere this chat shows or writes text: starting a
    /// server may have refreshed its token.
    fn learn_login_tokens(&mut self) {
        let tokens: Vec<String> = self
            .config
            .mcp_servers
            .keys()
            .flat_map(|name| crate::mcp::oauth::secrets(name))
            .collect();
        if tokens.is_empty() {
            return;
        }
        let env = self
            .agent
            .options()
            .env
            .with_secrets(tokens.iter().cloned());
        self.agent.set_env_policy(std::sync::Arc::new(env));
        self.redactor = self.redactor.clone().with(tokens);
        if let Some(log) = &mut self.log {
            log.set_redactor(self.redactor.clone());
        }
    }

    /// The MCP servers' states, one line each (`/mcp`).
    pub fn mcp_status(&self) -> String {
        self.mcp.render_status()
    }

    /// Restarts one MCP server and takes its tools again (`/mcp restart NAME`).
    pub async fn restart_mcp(&mut self, name: &str) -> Result<ServerStatus, Error> {
        let status = self.mcp.restart(name, self.agent.tools_mut()).await;
        self.learn_login_tokens();
        Ok(status?)
    }
}
