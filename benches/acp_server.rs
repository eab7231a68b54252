//! agent-loop's own time per turn as an ACP agent (`agent-loop acp`, one process serving a
//! session over stdio) against the same turn through the CLI (one process per turn), both on
//! an HTTP backend answering at once from 127.0.0.1 (fixtures/http/openai/text.json), with
//! `--context fresh` so every turn sends the same request. Target: the ACP turn within 2 ms
//! of the CLI's (it is less: no process to start).

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

use common::{cli_turn, command, server, workspace, Rpc};

/// A running `agent-loop acp` with one session open.
struct Agent {
    rpc: Rpc,
    session: String,
}

impl Agent {
    fn start(dir: &tempfile::TempDir) -> Agent {
        let mut cmd = command(dir);
        cmd.arg("acp");
        let mut rpc = Rpc::start(cmd);
        rpc.call("initialize", json!({"protocolVersion": 1}));
        let cwd = dir.path().to_str().unwrap().to_string();
        let opened = rpc.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        let session = opened["sessionId"].as_str().unwrap().to_string();
        Agent { rpc, session }
    }

    fn turn(&mut self) {
        let prompt = json!({"sessionId": self.session, "prompt": [{"type": "text", "text": "what is the answer?"}]});
        let answer = self.rpc.call("session/prompt", prompt);
        assert_eq!(answer["stopReason"], "end_turn", "{answer}");
    }
}

fn turns(c: &mut Criterion) {
    let port = server();
    let dir = workspace(port);
    let mut group = c.benchmark_group("turn");
    group.bench_function("cli", |b| b.iter(|| cli_turn(&dir)));
    let mut agent = Agent::start(&dir);
    group.bench_function("acp", |b| b.iter(|| agent.turn()));
    group.finish();
}

criterion_group!(benches, turns);
criterion_main!(benches);
