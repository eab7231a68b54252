//! How soon a streamed piece of an answer is visible: the built binary, `--display plain` on a
//! pipe (what a script or a log reads), answering one task from an OpenAI-style server on
//! 127.0.0.1 that streams `CHUNKS` pieces, one every `PACE`, each a read of its own. For each
//! piece, the time from the server's write of its event to the bench's read of its last byte
//! from agent-loop's stdout: the socket, the stream's decoding, the event, the display and the
//! pipe. Goal: ≤ 1 ms at the median and for the first piece (the first visible byte, once the
//! model has sent it).
//!
//! The same for an agent CLI that streams (`output = "jsonl"`, `json_text_delta`: the claude
//! and gemini presets): the agent is `cat` of a FIFO the bench writes each stream line into, so
//! the time runs from the bench's write of a line to its read of the piece: the pipe, the
//! thread that reads the CLI's stdout, the line's parsing, the event, the display and the pipe.
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

/// The backend `stream` of a turn: an HTTP stream, or an agent CLI writing what comes into a
/// FIFO.
enum Source {
    Http(u16),
    /// Each line's write time goes here.
    Cli(mpsc::Sender<Instant>),
}

/// One turn: each piece's delay from its write (the server's, or the bench's into the
/// agent's FIFO) to its last byte read on stdout.
fn round(source: &Source, chunks: &[String], sent: &mpsc::Receiver<Instant>) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("backends.toml");
    let toml = match source {
        Source::Http(port) => format!(
            "[backends.stream]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"bench\"\nstream = true\n"
        ),
        Source::Cli(sent_at) => {
            let fifo = dir.path().join("stream");
            assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
            let (lines, sent_at, writing) = (cli_lines(chunks), sent_at.clone(), fifo.clone());
            std::thread::spawn(move || write_paced(&writing, &lines, &sent_at));
            format!(
                "[backends.stream]\ncommand = {:?}\nargs = [{:?}]\noutput = \"jsonl\"\n\
                 json_text = \"[type=result].result\"\njson_text_delta = \"[type=delta].text\"\n",
                which("cat"),
                fifo.display().to_string()
            )
        }
    };
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

/// The lines of a stream-json-like output: a line a piece, then the whole answer.
fn cli_lines(chunks: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = chunks
        .iter()
        .map(|c| serde_json::json!({"type": "delta", "text": c}).to_string())
        .collect();
    lines.push(serde_json::json!({"type": "result", "result": chunks.concat()}).to_string());
    lines
}

/// Writes `lines` into `fifo` (once the agent has opened it), one every [`PACE`], sending the
/// time of each piece's write.
fn write_paced(fifo: &std::path::Path, lines: &[String], sent: &mpsc::Sender<Instant>) {
    use std::io::Write;
    let mut fifo = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
    for (i, line) in lines.iter().enumerate() {
        std::thread::sleep(PACE);
        if i + 1 < lines.len() {
            let _ = sent.send(Instant::now());
        }
        fifo.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
}

/// `program`'s path, looked up in the bench's own PATH (the runs get an empty environment).
fn which(program: &str) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
        .display()
        .to_string()
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
    let http_tx = tx.clone();
    let port = streaming::server(&chunks, PACE, move || {
        let _ = http_tx.send(Instant::now());
    });
    let rounds: usize = std::env::var("STREAM_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if once { 1 } else { 5 });
    for (name, source) in [("", Source::Http(port)), ("cli_", Source::Cli(tx))] {
        let (mut medians, mut p95s, mut firsts) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let delays = round(&source, &chunks, &sent);
            firsts.push(ms(delays[0]));
            let mut sorted: Vec<f64> = delays.into_iter().map(ms).collect();
            sorted.sort_by(f64::total_cmp);
            medians.push(sorted[sorted.len() / 2]);
            p95s.push(sorted[sorted.len() * 95 / 100]);
        }
        println!(
            "stream_latency/{name}piece_to_stdout: {:.3} ms median, {:.3} ms p95 (goal <= 1 ms; {CHUNKS} pieces)",
            median(medians),
            median(p95s)
        );
        println!(
            "stream_latency/{name}first_piece_to_stdout: {:.3} ms (goal <= 1 ms)",
            median(firsts)
        );
    }
}
