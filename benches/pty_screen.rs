//! Throughput of the virtual screen of `type = "pty"` backends: the recorded sessions of
//! real TUIs (fixtures/pty: qwen and gemini, Ink redrawing their frames) fed to the same
//! `ScreenReader` a live turn uses, in 4 KiB pieces as a pty read gives them, then the answer
//! read off it. A live turn reads the rows new since the message after every read; that
//! extraction is measured on its own too.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use agent_loop_backends::backend::ScreenReader;
use agent_loop_config::{Config, Definition, PtyDef, Source};

/// How much of a session is handed over at a time.
const PIECE: usize = 4096;

struct Session {
    def: PtyDef,
    before: Vec<u8>,
    after: Vec<u8>,
    message: String,
}

fn session(cli: &str, preset: &str) -> Session {
    let config = Config::from_sources(&[Source::builtin()]).unwrap();
    let Definition::Pty(def) = config.backend(preset).unwrap() else {
        panic!("{preset} is a pty backend")
    };
    let read = |name: &str| {
        let path = format!("{}/fixtures/pty/{cli}/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    Session {
        def: def.clone(),
        before: read("before.out"),
        after: read("after.out"),
        message: String::from_utf8(read("message")).unwrap(),
    }
}

/// Replays a session and reads its answer.
fn replay(s: &Session) -> String {
    let mut reader = ScreenReader::new(&s.def);
    for piece in s.before.chunks(PIECE) {
        reader.feed(piece);
    }
    reader.start_message(&s.message);
    for piece in s.after.chunks(PIECE) {
        reader.feed(piece);
    }
    reader.answer()
}

fn screen(c: &mut Criterion) {
    let mut group = c.benchmark_group("pty_screen");
    for (cli, preset) in [("qwen", "qwen-tui"), ("gemini", "gemini-tui")] {
        let s = session(cli, preset);
        assert_eq!(replay(&s), "The answer is 42.");
        group.throughput(Throughput::Bytes((s.before.len() + s.after.len()) as u64));
        group.bench_with_input(BenchmarkId::new("replay", cli), &s, |b, s| {
            b.iter(|| replay(s))
        });
        // Only the feeding: the parser and the grid.
        group.bench_with_input(BenchmarkId::new("feed", cli), &s, |b, s| {
            b.iter(|| {
                let mut reader = ScreenReader::new(&s.def);
                for piece in s.before.chunks(PIECE).chain(s.after.chunks(PIECE)) {
                    reader.feed(piece);
                }
                reader.visible_text().len()
            })
        });
    }
    group.finish();
    // What a live turn does after each read: the rows new since the message.
    let s = session("qwen", "qwen-tui");
    let mut reader = ScreenReader::new(&s.def);
    reader.feed(&s.before);
    reader.start_message(&s.message);
    reader.feed(&s.after);
    c.bench_function("pty_screen/new_rows/qwen", |b| {
        b.iter(|| reader.new_rows().len())
    });
}

criterion_group!(benches, screen);
criterion_main!(benches);
