//! The protocol as Claude Code 2.1.332 speaks it, line by line on stdio: it opens with
//! `server/discover` naming revision 2026-07-28, and connects with `initialize` only when the
//! server does not serve that revision. Served, the session would be stateless, where a server
//! may not send its own requests, so the client would never be asked for approval nor for its
//! roots. agent-loop serves up to 2025-11-25: the client falls back to `initialize`, and a
//! call's approval question and roots reach it.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use super::call;
use crate::common::Workspace;

/// The client's side of the wire: what it writes, and each JSON line the server writes.
struct Wire {
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
}

impl Wire {
    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the server writes its next line within 30 s")
    }
}

/// The `_meta` Claude Code puts in every request of revision 2026-07-28: the revision, who
/// it is, and its capabilities (roots, elicitation in both modes).
fn claude_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
        "io.modelcontextprotocol/clientCapabilities": {
            "roots": {"listChanged": true},
            "elicitation": {"form": {}, "url": {}},
        },
    })
}

#[test]
fn a_client_opening_with_2026_07_28_connects_with_initialize_and_is_asked() {
    let ws = Workspace::new();
    ws.reply(
        1,
        call("write", json!({"path": "out.txt", "content": "written\n"})),
    );
    ws.reply(2, "done\n");
    // The client's root is a folder of its own, not the one the server was started in.
    let project = ws.work().join("project");
    std::fs::create_dir(&project).unwrap();
    let mut cmd = ws.cmd(&["mcp", "serve", "--backend", "fake"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(serde_json::from_str(&line).expect("a JSON line"));
        }
    });
    let mut wire = Wire {
        stdin: child.stdin.take().unwrap(),
        lines,
    };

    wire.send(
        json!({"jsonrpc": "2.0", "id": "probe", "method": "server/discover",
        "params": {"_meta": claude_meta()}}),
    );
    let discover = wire.next();
    assert_eq!(discover["id"], "probe", "{discover}");
    let supported = &discover["error"]["data"]["supported"];
    assert_eq!(
        supported,
        &json!(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]),
        "{discover}"
    );
    // A request that names 2026-07-28 is refused too: no stateless session begins.
    wire.send(json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list",
        "params": {"_meta": claude_meta()}}));
    let listed = wire.next();
    assert!(listed["error"].is_object(), "{listed}");

    wire.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": true}, "elicitation": {"form": {}, "url": {}}},
        "clientInfo": {"name": "claude-code", "version": "2.1.332"}}}),
    );
    let initialized = wire.next();
    assert_eq!(
        initialized["result"]["protocolVersion"], "2025-11-25",
        "{initialized}"
    );
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    wire.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ask", "arguments": {"prompt": "write it"}, "_meta": {"progressToken": 7}}}),
    );
    let mut asked = Vec::new();
    let result = loop {
        let line = wire.next();
        match line["method"].as_str() {
            Some("roots/list") => wire.send(json!({"jsonrpc": "2.0", "id": line["id"],
                "result": {"roots": [{"uri": format!("file://{}", project.display())}]}})),
            Some("elicitation/create") => {
                asked.push(line["params"]["message"].clone());
                wire.send(json!({"jsonrpc": "2.0", "id": line["id"],
                    "result": {"action": "accept", "content": {"decision": "allow"}}}));
            }
            Some(_) => {}
            None => break line,
        }
    };
    assert_eq!(result["id"], 2, "{result}");
    assert_eq!(
        result["result"]["structuredContent"]["answer"], "done",
        "{result}"
    );
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].as_str().unwrap().starts_with("Allow write?"),
        "{asked:?}"
    );
    // Written in the client's root, which confines the file tools.
    assert_eq!(
        std::fs::read_to_string(project.join("out.txt")).unwrap(),
        "written\n"
    );
    drop(wire);
    assert!(child.wait().unwrap().success());
}
