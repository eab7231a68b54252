//! What the benchmarks of agent-loop's servers (`agent-loop acp`, `agent-loop mcp serve`) and
//! the CLI they are measured beside share: an HTTP backend answering at once from 127.0.0.1
//! (fixtures/http/openai/text.json) and the command line of a turn on it, with `--context
//! fresh` so every turn sends the same request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_agent-loop");

/// An OpenAI-style server that answers every request with the recorded reply; its port.
pub fn server() -> u16 {
    let path = format!(
        "{}/fixtures/http/openai/text.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let body = body.clone();
            std::thread::spawn(move || {
                // Keep-alive: one answer per request on the connection.
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let lower = line.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut request = vec![0; length];
                    if reader.read_exact(&mut request).is_err() {
                        return;
                    }
                    // Head and body in one write: in two, Nagle's algorithm would hold the
                    // body back for the client's delayed ACK on a kept-alive connection.
                    let mut answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    answer.extend_from_slice(&body);
                    if stream.write_all(&answer).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// A folder with the backends.toml of backend `local` on `port`.
pub fn workspace(port: u16) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("backends.toml"),
        format!(
            "[backends.local]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\
             api_key_env = \"BENCH_KEY\"\nmodel = \"bench\"\n"
        ),
    )
    .unwrap();
    dir
}

pub fn command(dir: &tempfile::TempDir) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir.path())
        .env("BENCH_KEY", "bench-key")
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .args(["--config", "backends.toml", "--backend", "local"])
        .args([
            "--no-save",
            "--no-stream",
            "--context",
            "fresh",
            "--tools",
            "read",
        ]);
    cmd
}

/// One turn through the CLI: a process started for it.
pub fn cli_turn(dir: &tempfile::TempDir) {
    let out = command(dir).arg("what is the answer?").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A server of agent-loop's on the other end of stdio, spoken to in JSON-RPC lines.
pub struct Rpc {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl Rpc {
    pub fn start(mut cmd: Command) -> Rpc {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Rpc {
            child,
            input,
            output,
            next: 0,
        }
    }

    /// Sends a request and reads lines up to its answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        writeln!(self.input, "{request}").unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server ended"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == self.next {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    /// Sends a notification (MCP's `notifications/initialized`).
    #[allow(dead_code)] // Built into the ACP bench too, whose client sends none.
    pub fn notify(&mut self, method: &str) {
        writeln!(
            self.input,
            "{}",
            json!({"jsonrpc": "2.0", "method": method})
        )
        .unwrap();
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
