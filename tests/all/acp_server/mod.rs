//! `agent-loop acp` driven by a client on the official ACP SDK (tests/acp-client/drive.mjs,
//! `@agentclientprotocol/sdk` installed by scripts/test.sh): streaming, tool calls allowed
//! and rejected, cancel, load, close, an MCP server from `session/new`, two sessions in one
//! process, more sessions than are held open, bad input. Every line the agent wrote on
//! stdout must be JSON-RPC.

mod cases;
mod editor;
mod images;
mod reply;
mod room;
mod sessions;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::{bin, process_gone, wait_gone, Workspace};

/// The scripted client.
fn driver() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp-client");
    assert!(
        root.join("node_modules/@agentclientprotocol/sdk").exists(),
        "the ACP SDK is missing: scripts/test.sh installs it (npm ci in tests/acp-client)"
    );
    root.join("drive.mjs")
}

/// What the client saw, and what agent-loop wrote on stderr.
pub struct Seen {
    pub all: Value,
    pub stderr: String,
}

impl Seen {
    pub fn result(&self, step: usize) -> &Value {
        &self.all["results"][step]
    }

    /// The `session/update`s, each as `update` with its `sessionId` added.
    pub fn updates(&self) -> Vec<Value> {
        self.all["updates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                let mut update = u["update"].clone();
                update["sessionId"] = u["sessionId"].clone();
                update
            })
            .collect()
    }

    /// The updates of one kind (`agent_message_chunk`, `tool_call`, ...).
    pub fn of_kind(&self, kind: &str) -> Vec<Value> {
        self.updates()
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The agent's message, its chunks joined.
    pub fn message(&self) -> String {
        self.of_kind("agent_message_chunk")
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Runs `agent-loop acp ARGS` (with the workspace's backends.toml) under the client, which
/// runs `script`; checks every stdout line is one JSON-RPC 2.0 message.
pub fn drive(ws: &Workspace, script: Value, args: &[&str]) -> Seen {
    drive_with(ws, script, args, &[])
}

pub fn drive_with(ws: &Workspace, script: Value, args: &[&str], env: &[(&str, &str)]) -> Seen {
    let path = ws.path("script.json");
    std::fs::write(&path, script.to_string()).unwrap();
    let mut cmd = Command::new("node");
    ws.hermetic(&mut cmd)
        .current_dir(ws.work())
        .envs(env.iter().copied())
        .arg(driver())
        .arg(&path)
        .arg("--")
        .arg(bin())
        .arg("acp")
        .arg("--config")
        .arg(ws.path("backends.toml"))
        .args(args)
        .stdin(Stdio::null());
    let out = cmd.output().expect("node runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the client failed:\n{stderr}");
    let all: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the client printed no JSON ({e}):\n{stderr}"));
    // A script that stops the agent with a signal says the exit it expects.
    let exit = script.get("exit").cloned().unwrap_or(json!(0));
    assert_eq!(all["exitCode"], exit, "agent-loop acp's exit:\n{stderr}");
    for line in all["agentLines"].as_array().unwrap() {
        let line = line.as_str().unwrap();
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        assert!(
            message.get("method").is_some()
                || message.get("result").is_some()
                || message.get("error").is_some(),
            "not a JSON-RPC message: {line}"
        );
    }
    let stderr = stderr.into_owned();
    Seen { all, stderr }
}

/// The steps that open one session in the workspace's working directory.
pub fn open(ws: &Workspace) -> Vec<Value> {
    vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "cwd": ws.work()}),
    ]
}

/// One tool call in the fake agent's reply.
pub fn call(name: &str, args: Value) -> String {
    format!(
        "<tool_call>{}</tool_call>\n",
        json!({"name": name, "arguments": args})
    )
}

/// The process whose pid `pid_file` holds (`what`) is gone, or goes soon.
pub fn assert_gone(pid_file: &Path, what: &str) {
    let pid: i32 = std::fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_gone(pid) || process_gone(pid), "{what} still runs");
}
