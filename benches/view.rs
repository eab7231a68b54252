//! The view's cost while an answer streams (`--display view`): the built binary on a
//! pseudo-terminal (util-linux `script`, 80x24, `TERM=xterm-256color`), its REPL sent one
//! task, answered by an OpenAI-style server on 127.0.0.1 that streams 2,000 chunks (a word
//! each, a newline every thirtieth, so that a paragraph wraps at spaces over three rows; one
//! every half millisecond, each a read of its own). Two figures, for the turn alone (from Enter to the turn's
//! context line):
//!
//! - bytes written to the terminal over the bytes of the answer. Goal: ≤ 3 (a chunk is
//!   written where the last row ends, a new row scrolls the region by one line; the status
//!   line is redrawn with the spinner's ticks).
//! - agent-loop's own CPU time per chunk (user and system, all its threads, from
//!   /proc/PID/stat), receiving and parsing the stream included. Goal: ≤ 0.2 ms.
//!
//! Each figure is the median of `VIEW_BENCH_ROUNDS` runs (5 unless set; 1 under `cargo test
//! --benches`). Run it with `cargo bench --bench view`.

mod streaming;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agent-loop");
const CHUNKS: usize = 2000;
/// The time between two chunks.
const PACE: Duration = Duration::from_micros(500);

/// The chunks of the answer.
fn chunks() -> Vec<String> {
    (0..CHUNKS)
        .map(|i| {
            let end = if i % 30 == 29 { "\n" } else { " " };
            format!("word{}{end}", i % 97)
        })
        .collect()
}

/// Everything the program wrote, as it comes.
struct Screen(Arc<Mutex<Vec<u8>>>);

impl Screen {
    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// Waits until `text` is written after byte `from`; where it ends.
    fn wait_for(&self, text: &str, from: usize) -> usize {
        let start = Instant::now();
        loop {
            {
                let bytes = self.0.lock().unwrap();
                let tail = String::from_utf8_lossy(&bytes[from.min(bytes.len())..]).into_owned();
                if let Some(at) = tail.find(text) {
                    return from + at + text.len();
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "never saw {text:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The CPU time of process `pid` so far (user and system, all threads).
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command's name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf only reads a system constant.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100);
    Duration::from_micros(ticks * 1_000_000 / hz)
}

/// The agent-loop process whose parent is `parent`.
fn child_of(parent: u32) -> u32 {
    let start = Instant::now();
    loop {
        for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some((name, rest)) = stat.split_once(") ") else {
                continue;
            };
            let ppid = rest
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok());
            if name.ends_with("(agent-loop") && ppid == Some(parent) {
                return pid;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "agent-loop never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// One turn in the view: (bytes written over answer bytes, CPU per chunk).
fn round(port: u16, answer_bytes: usize) -> (f64, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("backends.toml");
    let toml = format!(
        "[backends.stream]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"bench\"\nstream = true\n"
    );
    std::fs::write(&config, toml).unwrap();
    let line = format!(
        "stty rows 24 cols 80; exec {BIN} --config {} --backend stream --display view",
        config.display()
    );
    let home = dir.path().join("home");
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("TMPDIR", dir.path())
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("util-linux script");
    let mut stdout = child.stdout.take().unwrap();
    let output = Arc::new(Mutex::new(Vec::new()));
    let sink = output.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let screen = Screen(output);
    let pid = child_of(child.id());
    let mut stdin = child.stdin.take().unwrap();
    screen.wait_for("idle | stream", 0);
    let before = (screen.len(), cpu(pid));
    stdin.write_all(b"go\r").unwrap();
    let end = screen.wait_for("[context ", before.0);
    let after = (end, cpu(pid));
    stdin.write_all(b"\x04").unwrap();
    drop(stdin);
    child.wait().unwrap();
    reader.join().unwrap();
    let ratio = (after.0 - before.0) as f64 / answer_bytes as f64;
    (ratio, (after.1 - before.1) / CHUNKS as u32)
}

fn median<T: PartialOrd + Copy>(mut values: Vec<T>) -> T {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` (CI) runs it once.
    let once = !std::env::args().any(|a| a == "--bench");
    let chunks = chunks();
    let answer_bytes: usize = chunks.iter().map(String::len).sum();
    let port = streaming::server(&chunks, PACE, || {});
    let rounds: usize = std::env::var("VIEW_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if once { 1 } else { 5 });
    let runs: Vec<(f64, Duration)> = (0..rounds).map(|_| round(port, answer_bytes)).collect();
    let ratio = median(runs.iter().map(|r| r.0).collect());
    let cpu = median(runs.iter().map(|r| r.1).collect());
    println!(
        "view/bytes_per_answer_byte: {ratio:.2} (goal <= 3; {CHUNKS} chunks, {answer_bytes} bytes)"
    );
    println!(
        "view/own_cpu_per_chunk: {:.3} ms (goal <= 0.2 ms)",
        cpu.as_secs_f64() * 1000.0
    );
}
