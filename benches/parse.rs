//! Throughput of what every CLI backend's output goes through: ANSI stripping (or terminal
//! rendering, the default), then the tool-call and token parsers, on realistic agent output
//! (coloured log lines, redrawn tool lines, a tool call and a usage line), at several sizes
//! to show it stays linear. 4 MiB is the default `max_output_bytes`, the most of one stream
//! a CLI turn keeps; 8 MiB is past it. The stripped text is parsed as the CLI backend parses
//! it, taken (`parse_owned`) and made into the answer in place.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use regex::Regex;

use agent_loop_parse::{render_terminal, strip_ansi, Parsers};

/// One screenful of a coloured agent CLI run: log lines, a redrawn tool line, prose, code
/// with tabs, and one tool call, about 4 KB.
fn screen() -> String {
    let log = "\x1b[2m2026-11-22T03:04:06.657677Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mcoro::commands::run\x1b[0m\x1b[2m:\x1b[0m Executing step\n";
    let tool = "\x1b[97m\u{23fa}\x1b[0m Bash(cargo test)\n\x1b[1A\x1b[2K\x1b[92m\u{23fa}\x1b[0m Bash(cargo test)\n";
    let prose = "The function parses the configuration and returns the list of backends, each with its parsers compiled once; the tests cover every key.\n";
    let code = "\tfn main() {\n\t    println!(\"hello\");\n\t}\n";
    let call = "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"cargo test --quiet\"}}</tool_call>\n";
    let mut s = String::new();
    for _ in 0..8 {
        s.push_str(log);
        s.push_str(prose);
        s.push_str(code);
    }
    s.push_str(tool);
    s.push_str(call);
    s
}

/// `bytes` of output from one run: screens, then the usage line CLIs print at the end.
fn output(bytes: usize) -> Vec<u8> {
    let screen = screen();
    let mut out = screen.repeat(bytes / screen.len() + 1);
    out.push_str("\x1b[2mTokens: 3,300 input + 63 output = 3,363 total\x1b[0m\n");
    out.into_bytes()
}

fn parsers() -> Parsers {
    Parsers::text(
        Regex::new(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>").unwrap(),
        Some(
            Regex::new(
                r"Tokens: (?P<input>[\d.,]+[kKmM]?) input \+ (?P<output>[\d.,]+[kKmM]?) output",
            )
            .unwrap(),
        ),
        vec![Regex::new(r"(?m)^\d{4}-\d\d-\d\dT\S+ +INFO ").unwrap()],
    )
}

fn strip_and_parse(c: &mut Criterion) {
    let parsers = parsers();
    let mut group = c.benchmark_group("strip_and_parse");
    for size in [64 * 1024, 1024 * 1024, 4 * 1024 * 1024, 8 * 1024 * 1024] {
        let raw = output(size);
        group.throughput(Throughput::Bytes(raw.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &raw, |b, raw| {
            b.iter(|| parsers.parse_owned(strip_ansi(raw), ""))
        });
    }
    group.finish();
    // What a CLI backend does by default (`render = "terminal"`): the redrawn tool line of
    // each screen goes through the line model.
    let mut group = c.benchmark_group("render_and_parse");
    let raw = output(1024 * 1024);
    group.throughput(Throughput::Bytes(raw.len() as u64));
    group.bench_function("1MiB", |b| {
        b.iter(|| parsers.parse_owned(render_terminal(&raw), ""))
    });
    group.finish();
    let mut group = c.benchmark_group("parse_only");
    let text = strip_ansi(&output(1024 * 1024));
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("1MiB", |b| {
        b.iter_batched(
            || text.clone(),
            |text| parsers.parse_owned(text, ""),
            BatchSize::LargeInput,
        )
    });
    group.finish();
    let mut group = c.benchmark_group("strip_only");
    let raw = output(1024 * 1024);
    group.throughput(Throughput::Bytes(raw.len() as u64));
    group.bench_function("1MiB", |b| b.iter(|| strip_ansi(&raw)));
    group.finish();
}

criterion_group!(benches, strip_and_parse);
criterion_main!(benches);
