//! An ACP backend's own cost (`type = "acp"`), against the fake agent of the tests
//! (fixtures/agents/fake-acp.py), which answers at once. Three figures:
//!
//! - `acp/turn`: the wall time of one turn through a running agent (`session/prompt`, two
//!   streamed chunks, the answer), the Python agent's own share included: an upper bound.
//! - `acp/own_cpu_per_turn`: agent-loop's own CPU time per turn (this process's, all its
//!   threads; the agent is another process), which a machine loaded by others inflates less
//!   than wall time. Target: ≤ 5 ms.
//! - `acp/chunk_to_display`: the delay from a chunk leaving the agent (its CLOCK_MONOTONIC
//!   stamp) to its event reaching the display. Target: ≤ 1 ms.
//!
//! After criterion's lines it prints the figures again, as medians against the targets.
//! `ACP_BENCH_TURNS=N` runs only N turns after the first (the agent's start) and exits, for
//! counting instructions: `valgrind --tool=callgrind` on N = 1 and N = 11 (it follows only
//! agent-loop, not the agent), and the difference over 10 is one turn's.

use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};

use agent_loop::event::Event;
use agent_loop_backends::backend::{build, Backend, Overrides, Request};
use agent_loop_config::{Config, Source};
use agent_loop_context::{Conversation, Message, Window};
use rustix::time::{clock_gettime, ClockId};

/// The fake agent as a backend, and what a turn needs.
struct Bench {
    runtime: tokio::runtime::Runtime,
    backend: Box<dyn Backend>,
    cwd: std::path::PathBuf,
}

impl Bench {
    /// Starts the agent (its first turn), outside any measurement.
    fn new() -> Bench {
        let text = format!(
            "[backends.fake]\ntype = \"acp\"\ncommand = \"{}/fixtures/agents/fake-acp.py\"\n",
            env!("CARGO_MANIFEST_DIR")
        );
        let config = Config::from_sources(&[Source {
            name: "bench.toml".into(),
            text,
        }])
        .unwrap();
        let bench = Bench {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            backend: build(
                config.backend("fake").unwrap(),
                &Overrides::default(),
                &Default::default(),
            )
            .unwrap(),
            cwd: std::env::current_dir().unwrap(),
        };
        bench.turn("hello", &mut |_| {});
        bench
    }

    fn turn(&self, message: &str, on_text: &mut (dyn FnMut(&str) + Send)) {
        let mut conversation = Conversation::new();
        conversation.push(Message::user(message));
        let window = Window::all(&conversation);
        let request = Request {
            window: &window,
            tools: &[],
            cwd: &self.cwd,
        };
        let mut emit = |e: Event| {
            if let Event::TextDelta { text, .. } = e {
                on_text(&text);
            }
        };
        self.runtime
            .block_on(self.backend.call(request, &mut emit))
            .expect("the fake agent answers");
    }

    /// One turn's agent-loop CPU time.
    fn own_cpu(&self) -> Duration {
        let before = cpu();
        self.turn("hello", &mut |_| {});
        cpu().saturating_sub(before)
    }

    /// One chunk's delay from the agent to the display.
    fn chunk_delay(&self) -> Duration {
        let mut delay = Duration::ZERO;
        self.turn("stamp", &mut |text| {
            let sent: u64 = text.trim().parse().expect("a time stamp");
            delay = Duration::from_nanos(monotonic_ns().saturating_sub(sent));
        });
        delay
    }

    fn close(self) {
        self.runtime.block_on(self.backend.shutdown());
    }
}

fn as_duration(t: rustix::time::Timespec) -> Duration {
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// This process's CPU time, all threads.
fn cpu() -> Duration {
    as_duration(clock_gettime(ClockId::ProcessCPUTime))
}

/// CLOCK_MONOTONIC now, in ns: the clock Python's `time.monotonic_ns` reads.
fn monotonic_ns() -> u64 {
    as_duration(clock_gettime(ClockId::Monotonic)).as_nanos() as u64
}

fn acp(c: &mut Criterion) {
    let bench = Bench::new();
    c.bench_function("acp/turn", |b| b.iter(|| bench.turn("hello", &mut |_| {})));
    c.bench_function("acp/own_cpu_per_turn", |b| {
        b.iter_custom(|n| (0..n).map(|_| bench.own_cpu()).sum())
    });
    c.bench_function("acp/chunk_to_display", |b| {
        b.iter_custom(|n| (0..n).map(|_| bench.chunk_delay()).sum())
    });
    bench.close();
}

/// The figures against their targets, as medians of `n` turns each.
fn summary(n: usize) {
    let bench = Bench::new();
    let median = |mut v: Vec<Duration>| {
        v.sort();
        (v[v.len() / 2], v[v.len() * 95 / 100])
    };
    let (wall, _) = median(
        (0..n)
            .map(|_| {
                let began = Instant::now();
                bench.turn("hello", &mut |_| {});
                began.elapsed()
            })
            .collect(),
    );
    let (own, own95) = median((0..n).map(|_| bench.own_cpu()).collect());
    let (chunk, chunk95) = median((0..n).map(|_| bench.chunk_delay()).collect());
    bench.close();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("\nACP figures, medians of {n} turns each (p95 after the slash):");
    println!(
        "  a turn, wall time, the agent's share included:  {:.3} ms",
        ms(wall)
    );
    println!(
        "  agent-loop's own CPU time per turn:              {:.3} / {:.3} ms   (target <= 5 ms)",
        ms(own),
        ms(own95)
    );
    println!(
        "  a chunk's arrival to its display:                {:.3} / {:.3} ms   (target <= 1 ms)",
        ms(chunk),
        ms(chunk95)
    );
}

criterion_group!(benches, acp);

fn main() {
    if let Ok(n) = std::env::var("ACP_BENCH_TURNS") {
        let bench = Bench::new();
        for _ in 0..n.parse::<usize>().expect("ACP_BENCH_TURNS: a number") {
            bench.turn("hello", &mut |_| {});
        }
        bench.close();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    let quick = std::env::args().any(|a| a == "--test");
    summary(if quick { 5 } else { 300 });
}
