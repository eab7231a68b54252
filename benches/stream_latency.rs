//! How soon a streamed piece of an answer is visible: the built binary, `--display plain` on a
//! pipe (what a script or a log reads), answering one task from an OpenAI-style server on
//! 127.0.0.1 that streams `CHUNKS` pieces, one every `PACE`, each a read of its own. For each
//! piece, the time from the server's write of its event to the bench's read of its last byte
//! from agent-loop's stdout: the socket, the stream's decoding, the event, the display and the
//! pipe. Goal: ≤ 1 ms at the median and for the first piece (the first visible byte, once the
//! model has sent it).
//!
//! The figures are the medians over `STREAM_BENCH_ROUNDS` runs (5 unless set; 1 under `cargo
//! test --benches`) of each run's median, 95th percentile and first piece. Run it with `cargo
//! bench --bench stream_latency`.

mod streaming;

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agent-loop");
const CHUNKS: usize = 300;
/// The time between two pieces: long enough that each is read and shown before the next.
const PACE: Duration = Duration::from_millis(2);

/// The pieces of the answer: every one different, none a prefix of what follows it.
fn chunks() -> Vec<String> {
    (0..CHUNKS).map(|i| format!("t{i} ")).collect()
}

/// One turn: each piece's delay from the server's write to its last byte read on stdout.
fn round(port: u16, chunks: &[String], sent: &mpsc::Receiver<Instant>) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("backends.toml");
    let toml = format!(
        "[backends.stream]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"bench\"\nstream = true\n"
    );
    std::fs::write(&config, toml).unwrap();
    let mut child = Command::new(BIN)
        .args(["--no-save", "--display", "plain", "--config"])
        .arg(&config)
        .args(["--backend", "stream", "go"])
        .env_clear()
        .env("HOME", dir.path().join("home"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("TMPDIR", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the built binary");
    let mut stdout = child.stdout.take().unwrap();
    // Where each piece's last byte is in the answer.
    let ends: Vec<usize> = chunks
        .iter()
        .scan(0, |at, c| {
            *at += c.len();
            Some(*at)
        })
        .collect();
    let (mut read, mut arrived) = (0, Vec::with_capacity(CHUNKS));
    let mut buf = [0u8; 65536];
    while arrived.len() < CHUNKS {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the answer ended after {read} bytes");
        read += n;
        let now = Instant::now();
        while arrived.len() < CHUNKS && ends[arrived.len()] <= read {
            arrived.push(now);
        }
    }
    child.wait().unwrap();
    arrived
        .iter()
        .map(|at| at.duration_since(sent.recv().unwrap()))
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` (CI) runs it once.
    let once = !std::env::args().any(|a| a == "--bench");
    let chunks = chunks();
    let (tx, sent) = mpsc::channel();
    let port = streaming::server(&chunks, PACE, move || {
        let _ = tx.send(Instant::now());
    });
    let rounds: usize = std::env::var("STREAM_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if once { 1 } else { 5 });
    let (mut medians, mut p95s, mut firsts) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let delays = round(port, &chunks, &sent);
        firsts.push(ms(delays[0]));
        let mut sorted: Vec<f64> = delays.into_iter().map(ms).collect();
        sorted.sort_by(f64::total_cmp);
        medians.push(sorted[sorted.len() / 2]);
        p95s.push(sorted[sorted.len() * 95 / 100]);
    }
    println!(
        "stream_latency/piece_to_stdout: {:.3} ms median, {:.3} ms p95 (goal <= 1 ms; {CHUNKS} pieces)",
        median(medians),
        median(p95s)
    );
    println!(
        "stream_latency/first_piece_to_stdout: {:.3} ms (goal <= 1 ms)",
        median(firsts)
    );
}
