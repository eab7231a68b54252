//! Counting the tokens of 1 MB of mixed text (this repository's docs and sources, with
//! Cyrillic, Chinese, Japanese, Greek, Arabic and emoji between them) in messages of about
//! 2 KB: exactly with each of OpenAI's encodings, and by the calibrated estimate. Run with
//! `cargo bench --bench tokens`; the throughput is in bytes of text a second.
//!
//! - `exact/o200k_base`, `exact/cl100k_base`: `Encoding::count_message` of every message
//!   (the tables are read once, before the measure).
//! - `estimate`: what the estimate does for the same messages: measure their bytes and divide.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use agent_loop_context::conversation::message_bytes;
use agent_loop_context::tokens::estimate;
use agent_loop_context::{Encoding, Message};

/// A line of each script, between the files.
const SCRIPTS: &str = "Привет, мир! Это проверка. 你好，世界！这是一个测试。こんにちは世界。\
                       Γειά σου κόσμε. مرحبا بالعالم 🙂🚀\n";

/// About 1 MB of messages of about 2 KB, cut at character boundaries.
fn messages() -> Vec<Message> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = String::new();
    let mut files: Vec<_> = ["docs", "crates/context/src", "crates/core/src/agent"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("the repository's folders"))
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    while text.len() < 1_000_000 {
        for file in &files {
            text.push_str(&std::fs::read_to_string(file).expect("a text file"));
            text.push_str(&SCRIPTS.repeat(8));
        }
    }
    let mut messages = Vec::new();
    let mut rest = &text[..];
    let mut total = 0;
    while total < 1_000_000 {
        let mut cut = 2_000.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        messages.push(Message::user(piece));
        total += piece.len();
        rest = tail;
    }
    messages
}

fn bench(c: &mut Criterion) {
    let messages = messages();
    let bytes: usize = messages.iter().map(message_bytes).sum();
    let mut group = c.benchmark_group("count");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        encoding.count("warm up");
        group.bench_function(format!("exact/{}", encoding.name()), |b| {
            b.iter(|| {
                black_box(&messages)
                    .iter()
                    .map(|m| encoding.count_message(m))
                    .sum::<u64>()
            })
        });
    }
    group.bench_function("estimate", |b| {
        b.iter(|| {
            black_box(&messages)
                .iter()
                .map(|m| estimate(message_bytes(m), 4.0))
                .sum::<u64>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
