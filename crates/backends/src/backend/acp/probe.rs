//! What `agent-loop doctor NAME` shows of an ACP agent: the command, what it advertised in
//! the handshake (protocol version, capabilities, authentication methods) and its session
//! (modes, models, slash commands), and the test prompt's answer with its token counts.

use std::fmt::Write;
use std::path::PathBuf;

use serde_json::Value;

use crate::backend::Reply;
use crate::Error;

/// One prompt through an ACP agent, described for `agent-loop doctor`.
pub struct AcpProbe {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The answer to `initialize`: protocol version, capabilities, auth methods.
    pub info: Value,
    /// The answer to `session/new`: modes and models.
    pub setup: Value,
    pub commands: Vec<(String, String)>,
    /// The entry's `auto_mode` and `ask_mode`.
    pub modes: (Option<String>, Option<String>),
    pub answer: Result<Reply, Error>,
}

impl AcpProbe {
    /// The description, and why the check failed when it did.
    pub fn describe(&self) -> (String, Option<String>) {
        let mut out = String::new();
        let line = crate::backend::shell_words::command_line(&self.program, &self.args);
        let _ = writeln!(out, "command: {line}");
        let info = &self.info;
        if !info.is_null() {
            let agent = &info["agentInfo"];
            if agent.is_object() {
                let _ = writeln!(
                    out,
                    "agent: {} {}",
                    agent["name"].as_str().unwrap_or("?"),
                    agent["version"].as_str().unwrap_or("")
                );
            }
            let _ = writeln!(out, "protocol version: {}", info["protocolVersion"]);
            let _ = writeln!(out, "capabilities: {}", info["agentCapabilities"]);
            let _ = writeln!(out, "auth methods: {}", ids(&info["authMethods"], "id"));
        }
        let setup = &self.setup;
        if !setup.is_null() {
            let modes = &setup["modes"];
            let _ = writeln!(
                out,
                "modes: {} (current: {})",
                ids(&modes["availableModes"], "id"),
                modes["currentModeId"].as_str().unwrap_or("none")
            );
            // A session that starts wider than asking: something the agent kept.
            let (auto, ask) = &self.modes;
            if let (Some(start), Some(ask)) = (super::mode::current(setup), ask) {
                if start != *ask {
                    let widest = match auto.as_deref() == Some(start.as_str()) {
                        true => ", which asks nothing",
                        false => "",
                    };
                    let _ = writeln!(
                        out,
                        "remembered mode: its sessions here start in `{start}`{widest}, not in \
                         `{ask}` (the entry's ask_mode): a setting it kept from an earlier run \
                         (codex-acp: a folder a --yes run trusted); agent-loop sets `{ask}` \
                         before each prompt unless --yes is given"
                    );
                }
            }
            let models = &setup["models"];
            let option = super::config_option(setup, "model").filter(|_| models.is_null());
            let _ = match option {
                // opencode and codex-acp list their models as a config option only.
                Some(option) => writeln!(
                    out,
                    "models: {} (current: {}; a config option)",
                    ids(&option["options"], "value"),
                    option["currentValue"].as_str().unwrap_or("none")
                ),
                None => writeln!(
                    out,
                    "models: {} (current: {})",
                    ids(&models["availableModels"], "modelId"),
                    models["currentModelId"].as_str().unwrap_or("none")
                ),
            };
        }
        let commands: Vec<String> = self.commands.iter().map(|c| format!("//{}", c.0)).collect();
        let _ = writeln!(
            out,
            "slash commands: {}",
            if commands.is_empty() {
                "none listed".into()
            } else {
                commands.join(" ")
            }
        );
        match &self.answer {
            Ok(reply) => {
                let tokens = match &reply.usage {
                    Some(u) => format!(
                        "in {} / out {}",
                        u.input.map_or("?".into(), |n| n.to_string()),
                        u.output.map_or("?".into(), |n| n.to_string())
                    ),
                    None => "unknown".into(),
                };
                let _ = writeln!(out, "tokens: {tokens}");
                let _ = writeln!(out, "--- answer ---\n{}", reply.text);
                let failure = reply
                    .text
                    .trim()
                    .is_empty()
                    .then(|| "the agent answered with no text".to_string());
                (out, failure)
            }
            Err(e) => {
                let _ = writeln!(out, "--- error ---\n{}", e.message);
                (out, Some(e.message.clone()))
            }
        }
    }
}

/// The `key` of every entry of a list, or `none`.
fn ids(list: &Value, key: &str) -> String {
    let ids: Vec<&str> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v[key].as_str())
        .collect();
    if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    }
}
