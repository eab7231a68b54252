//! agent-loop's own time per `ask` as an MCP server (`agent-loop mcp serve`, one process
//! serving an MCP client over stdio) against the same turn through the CLI (one process per
//! turn), both on an HTTP backend answering at once from 127.0.0.1, so what is measured is
//! agent-loop's share of the turn. Each `ask` opens its session's chat, runs the turn and
//! closes it, as a CLI run does, but in a process already running. Target: ≤ 5 ms an `ask`.

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

use common::{cli_turn, command, server, workspace, Rpc};

/// A running `agent-loop mcp serve`, initialised.
fn start(dir: &tempfile::TempDir) -> Rpc {
    let mut cmd = command(dir);
    cmd.args(["mcp", "serve"]);
    let mut rpc = Rpc::start(cmd);
    let hello = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    });
    rpc.call("initialize", hello);
    rpc.notify("notifications/initialized");
    rpc
}

fn ask(rpc: &mut Rpc) {
    let call = json!({"name": "ask", "arguments": {"prompt": "what is the answer?"}});
    let result = rpc.call("tools/call", call);
    assert_eq!(
        result["structuredContent"]["stop_reason"], "end_turn",
        "{result}"
    );
}

fn turns(c: &mut Criterion) {
    let port = server();
    let dir = workspace(port);
    let mut group = c.benchmark_group("turn");
    group.bench_function("cli", |b| b.iter(|| cli_turn(&dir)));
    let mut rpc = start(&dir);
    group.bench_function("mcp_ask", |b| b.iter(|| ask(&mut rpc)));
    group.finish();
}

criterion_group!(benches, turns);
criterion_main!(benches);
