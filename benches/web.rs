//! read_url's HTML to Markdown conversion on a 1 MB page (target: at least 20 MB/s), and the
//! peak memory one conversion adds. Run with `cargo bench --bench web`.
//!
//! The page is the article of `fixtures/web/article.html` with its `<main>` repeated until
//! the page passes 1 MB: headings, paragraphs with links, code blocks, tables and lists, in
//! the chrome (header, nav, scripts, footer) a real page has. `AGENT_LOOP_WEB_PAGE=FILE`
//! converts that file instead: `scripts/bench.sh` uses a real reference page too.
//!
//! Criterion's figure is wall time; on a busy machine the CPU-time figure printed first (the
//! process's time on the CPU, the median of seven batches of five conversions) is the one to
//! compare with the target.
//!
//! Peak memory is read from the kernel (`VmHWM` in /proc/self/status, the process's peak
//! resident size) before and after one conversion, before criterion allocates anything: the
//! growth is what the conversion needed at its peak.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use agent_loop_builtins::web::convert::Converter;
use agent_loop_builtins::web::dom::Stop;

const SIZE: usize = 1 << 20;

fn page() -> String {
    if let Some(path) = std::env::var_os("AGENT_LOOP_WEB_PAGE") {
        let bytes = std::fs::read(&path).expect("AGENT_LOOP_WEB_PAGE");
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/web/article.html");
    let article = std::fs::read_to_string(path).expect("fixtures/web/article.html");
    let start = article.find("<main>").unwrap();
    let end = article.find("</main>").unwrap() + "</main>".len();
    let main = &article[start..end];
    let mut body = String::with_capacity(SIZE + main.len());
    while body.len() < SIZE {
        body.push_str(main);
    }
    format!("{}{body}{}", &article[..start], &article[end..])
}

/// CPU time the process has run, all its threads counted (the conversion runs on a thread
/// of its own): a figure the other work of a shared machine does not inflate, unlike wall
/// time.
fn cpu_ns() -> u64 {
    let time = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
}

/// The process's peak resident size in KiB (Linux and Android), if the kernel says.
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn convert(c: &mut Criterion) {
    let html = page();
    let base = url::Url::parse("https://example.com/guides/toml").unwrap();
    let converter = Converter::new();
    let stop = Stop::default();
    let before = peak_kib();
    let markdown = converter.convert(&html, &base, &stop).unwrap().markdown;
    if let (Some(before), Some(after)) = (before, peak_kib()) {
        eprintln!(
            "web: one conversion of {} KiB of HTML into {} KiB of Markdown raised the peak \
             resident size by {} KiB (from {before} KiB)",
            html.len() / 1024,
            markdown.len() / 1024,
            after.saturating_sub(before)
        );
    }
    // `cargo test --bench web` (CI) only checks that it runs: the batches, a minute of
    // unoptimised code, are for `cargo bench`, which passes `--bench`.
    if std::env::args().any(|arg| arg == "--bench") {
        cpu_rate(&converter, &html, &base, &stop);
    }
    let mut group = c.benchmark_group("read_url");
    group.throughput(Throughput::Bytes(html.len() as u64));
    group.sample_size(20);
    group.bench_function("html_to_markdown/1MB", |b| {
        b.iter(|| converter.convert(black_box(&html), &base, &stop))
    });
    group.finish();
}

/// Prints the conversion's rate in CPU time: batches, and their median, as a shared machine
/// slows some of them down.
fn cpu_rate(converter: &Converter, html: &str, base: &url::Url, stop: &Stop) {
    const BATCHES: usize = 7;
    const ROUNDS: u32 = 5;
    let mut rates: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let start = cpu_ns();
            for _ in 0..ROUNDS {
                let _ = black_box(converter.convert(black_box(html), base, stop));
            }
            let seconds = (cpu_ns() - start) as f64 / 1e9;
            html.len() as f64 * f64::from(ROUNDS) / seconds / 1e6
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    eprintln!(
        "web: {:.1} MB/s of CPU time (the median of {BATCHES} batches of {ROUNDS} conversions; \
         {:.1} to {:.1})",
        rates[BATCHES / 2],
        rates[0],
        rates[BATCHES - 1]
    );
}

criterion_group!(benches, convert);
criterion_main!(benches);
