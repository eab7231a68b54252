//! Throughput of ANSI stripping and terminal rendering on three kinds of agent output:
//! plain (coloured log lines, prose, code with tabs: no cursor controls), an agent screen
//! (the same with one erase-and-redraw tool line every 4 KB, as coro prints) and a spinner
//! (a `\r` + erase-line frame for every tick before each line of answer).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use agent_loop_scan::{render_terminal, strip_ansi};

/// About 4 KB of coloured output with no cursor controls.
fn plain_screen() -> String {
    let log = "\x1b[2m2026-11-22T03:04:06.657677Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mcoro::commands::run\x1b[0m\x1b[2m:\x1b[0m Executing step\n";
    let prose = "The function parses the configuration and returns the list of backends, each with its parsers compiled once; the tests cover every key.\n";
    let code = "\tfn main() {\n\t    println!(\"hello\");\n\t}\n";
    let mut s = String::new();
    for _ in 0..8 {
        s.push_str(log);
        s.push_str(prose);
        s.push_str(code);
    }
    s
}

fn repeat_to(unit: &str, bytes: usize) -> Vec<u8> {
    unit.repeat(bytes / unit.len() + 1).into_bytes()
}

/// The three inputs, 1 MiB each.
fn inputs() -> [(&'static str, Vec<u8>); 3] {
    const SIZE: usize = 1024 * 1024;
    let screen = plain_screen();
    let redraw = "\x1b[97m\u{23fa}\x1b[0m Bash(cargo test)\n\x1b[1A\x1b[2K\r\x1b[92m\u{23fa}\x1b[0m Bash(cargo test)\n";
    let mut spinner = String::new();
    for (n, frame) in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏".chars().cycle().take(20).enumerate() {
        spinner.push_str(&format!("\r\x1b[2K\x1b[36m{frame}\x1b[0m Thinking… {n}s"));
    }
    spinner
        .push_str("\r\x1b[2KThe answer is one line of prose that the spinner was drawn before.\n");
    [
        ("plain", repeat_to(&screen, SIZE)),
        ("agent_screen", repeat_to(&(screen + redraw), SIZE)),
        ("spinner", repeat_to(&spinner, SIZE)),
    ]
}

fn scan(c: &mut Criterion) {
    let inputs = inputs();
    let mut group = c.benchmark_group("strip_ansi");
    for (name, raw) in &inputs {
        group.throughput(Throughput::Bytes(raw.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), raw, |b, raw| {
            b.iter(|| strip_ansi(raw))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("render_terminal");
    for (name, raw) in &inputs {
        group.throughput(Throughput::Bytes(raw.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), raw, |b, raw| {
            b.iter(|| render_terminal(raw))
        });
    }
    group.finish();
}

criterion_group!(benches, scan);
criterion_main!(benches);
