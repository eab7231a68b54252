//! An ACP backend's own cost (`type = "acp"`), against the fake agent of the tests
//! (fixtures/agents/fake-acp.py), which answers at once: the time of one turn through a
//! running agent (`session/prompt`, two streamed chunks, the answer; the Python agent's own
//! share included, so an upper bound of agent-loop's), and the delay from a chunk leaving
//! the agent to its event reaching the display.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

use agent_loop::backend::{build, Backend, Overrides, Request};
use agent_loop::config::{Config, Source};
use agent_loop::context::{Conversation, Message, Window};
use agent_loop::event::Event;

fn backend() -> Box<dyn Backend> {
    let text = format!(
        "[backends.fake]\ntype = \"acp\"\ncommand = \"{}/fixtures/agents/fake-acp.py\"\n",
        env!("CARGO_MANIFEST_DIR")
    );
    let config = Config::from_sources(&[Source {
        name: "bench.toml".into(),
        text,
    }])
    .unwrap();
    build(config.backend("fake").unwrap(), &Overrides::default()).unwrap()
}

/// CLOCK_MONOTONIC now, in ns: the clock Python's `time.monotonic_ns` reads.
fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn acp(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let backend = backend();
    let cwd = std::env::current_dir().unwrap();
    let turn = |message: &str, on_text: &mut (dyn FnMut(&str) + Send)| {
        let mut conversation = Conversation::new();
        conversation.push(Message::User {
            text: message.into(),
        });
        let window = Window::all(&conversation);
        let request = Request {
            window: &window,
            tools: &[],
            cwd: &cwd,
        };
        let mut emit = |e: Event| {
            if let Event::TextDelta { text, .. } = e {
                on_text(&text);
            }
        };
        runtime
            .block_on(backend.call(request, &mut emit))
            .expect("the fake agent answers");
    };
    // The agent is started by the first turn, outside the measurement.
    turn("hello", &mut |_| {});
    c.bench_function("acp/turn", |b| b.iter(|| turn("hello", &mut |_| {})));
    c.bench_function("acp/chunk_to_display", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                turn("stamp", &mut |text| {
                    let sent: u64 = text.trim().parse().expect("a time stamp");
                    total += Duration::from_nanos(monotonic_ns().saturating_sub(sent));
                });
            }
            total
        })
    });
    runtime.block_on(backend.shutdown());
}

criterion_group!(benches, acp);
criterion_main!(benches);
