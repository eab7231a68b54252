//! docs/mcp-server.md's promises: every command of its `sh` blocks runs (`claude` and `codex`
//! being shims that keep what they were asked to register), and every server it registers,
//! by a command or in a settings file, is started as the client would start it and answers
//! the MCP handshake, `tools/list` and `backends`.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::{block, connect, structured, Behaviour};
use crate::common::{bin, path_with, Workspace};

const DOC: &str = include_str!("../../../docs/mcp-server.md");

/// The command lines the page registers, as argv (the program `agent-loop`).
fn registered(shims_out: &Path) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut calls: Vec<_> = std::fs::read_dir(shims_out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    calls.sort();
    for call in calls {
        let bytes = std::fs::read(&call).unwrap();
        let args: Vec<String> = bytes
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8(a.to_vec()).unwrap())
            .collect();
        assert!(
            args.len() > 3 && args[..3] == ["mcp", "add", "agent-loop"],
            "{args:?} {bytes:?}"
        );
        let at = args
            .iter()
            .position(|a| a == "--")
            .expect("`--` before the command");
        found.push(args[at + 1..].to_vec());
    }
    found
}

/// The server entry of a settings file: Gemini CLI's, Qwen Code's and Cursor's `mcpServers`,
/// opencode's `mcp`.
fn from_json(settings: &Value) -> Vec<String> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    if let Some(entry) = settings["mcpServers"].get("agent-loop") {
        let mut argv = vec![entry["command"].as_str().unwrap().to_string()];
        argv.extend(strings(&entry["args"]));
        return argv;
    }
    let entry = &settings["mcp"]["agent-loop"];
    assert_eq!(entry["type"], "local", "{settings}");
    strings(&entry["command"])
}

#[test]
fn every_command_and_entry_of_the_mcp_server_doc_serves() {
    let ws = Workspace::new();
    // `agent-loop backends` asks each program found for its version: only `mcp add` is kept.
    let shims = ws.path("shims");
    let out = ws.path("registered");
    std::fs::create_dir_all(&shims).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    use std::os::unix::fs::PermissionsExt;
    for name in ["claude", "codex"] {
        let shim = shims.join(name);
        std::fs::write(
            &shim,
            format!(
                "#!/bin/sh\n[ \"$1\" = mcp ] || exit 0\nn=$(ls '{0}' | wc -l)\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '{0}'/call.$n\n",
                out.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = path_with(&[&shims, bin().parent().unwrap()]);
    let mut servers = Vec::new();
    let mut ran = 0;
    for (lang, body) in crate::readme::fenced(DOC) {
        match lang {
            "sh" => {
                for line in body.iter().filter(|l| !l.trim().is_empty()) {
                    let mut cmd = Command::new("sh");
                    let run = ws.run_cmd({
                        ws.hermetic(&mut cmd)
                            .args(["-c", line])
                            .current_dir(ws.work())
                            .env("PATH", &path);
                        cmd
                    });
                    run.expect_code(0);
                    if line.contains("mcp serve --help") {
                        assert!(run.stdout().contains("--allow-backend"), "{}", run.stdout());
                    }
                    ran += 1;
                }
            }
            "json" if body.iter().any(|l| l.contains("agent-loop")) => {
                let settings: Value = serde_json::from_str(&body.join("\n")).unwrap();
                servers.push(from_json(&settings));
            }
            "toml" => {
                let table: toml::Table = toml::from_str(&body.join("\n")).unwrap();
                let entry = &table["mcp_servers"]["agent-loop"];
                let mut argv = vec![entry["command"].as_str().unwrap().to_string()];
                for arg in entry["args"].as_array().unwrap() {
                    argv.push(arg.as_str().unwrap().to_string());
                }
                servers.push(argv);
            }
            _ => {}
        }
    }
    assert!(ran >= 4, "only {ran} commands ran");
    let commands = registered(&out);
    assert!(commands.len() >= 3, "{commands:?}");
    servers.extend(commands);
    assert!(servers.len() >= 7, "{servers:?}");
    for argv in servers {
        assert_eq!(argv[..3], ["agent-loop", "mcp", "serve"], "{argv:?}");
        // The shims stand for the agents a server offers (`--backend codex`).
        let mut cmd = Command::new(bin());
        cmd.args(&argv[1..]).env("PATH", &path);
        block(async {
            let client = connect(&ws, cmd, Behaviour::default()).await;
            let tools = client.service.list_all_tools().await.unwrap();
            assert_eq!(tools.len(), 3, "{argv:?}");
            let result = client.call("backends", json!({})).await;
            assert!(structured(&result)["default"].is_string(), "{argv:?}");
            client.close().await;
        });
    }
}
