//! Throughput of what every CLI backend's output goes through: ANSI stripping, then the
//! tool-call and token parsers, on realistic agent output (coloured log lines, redrawn tool
//! lines, a tool call and a usage line), at several sizes to show it stays linear.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use regex::Regex;

use agent_loop::parse::{strip_ansi, Parsers};

/// One screenful of output the way agent CLIs print it.
const CHUNK: &str = "\x1b[2m2026-11-22T03:04:06.657677Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mcoro::commands::run\x1b[0m\x1b[2m:\x1b[0m Executing task: multi demo\n\
\x1b[97m\u{23fa}\x1b[0m Bash(echo first)\n\x1b[1A\x1b[2K\x1b[92m\u{23fa}\x1b[0m Bash(echo first)\n\
first\n\
Here is the plan: read the file, change the function, run the tests. The function parses\n\
the configuration and returns the list of backends, each with its parsers compiled once.\n\
\tfn main() {\n\t    println!(\"hello\");\n\t}\n\
<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"cargo test --quiet\"}}</tool_call>\n\
Tokens: 3,300 input + 63 output = 3,363 total\n";

fn output(bytes: usize) -> Vec<u8> {
    CHUNK.repeat(bytes / CHUNK.len() + 1).into_bytes()
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
        vec![Regex::new(r"^\d{4}-\d\d-\d\dT\S+ +INFO ").unwrap()],
    )
}

fn strip_and_parse(c: &mut Criterion) {
    let parsers = parsers();
    let mut group = c.benchmark_group("strip_and_parse");
    for size in [64 * 1024, 1024 * 1024, 8 * 1024 * 1024] {
        let raw = output(size);
        group.throughput(Throughput::Bytes(raw.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &raw, |b, raw| {
            b.iter(|| {
                let text = strip_ansi(raw);
                parsers.parse(&text, "")
            })
        });
    }
    group.finish();
    let mut group = c.benchmark_group("strip_only");
    let raw = output(1024 * 1024);
    group.throughput(Throughput::Bytes(raw.len() as u64));
    group.bench_function("1MiB", |b| b.iter(|| strip_ansi(&raw)));
    group.finish();
}

criterion_group!(benches, strip_and_parse);
criterion_main!(benches);
