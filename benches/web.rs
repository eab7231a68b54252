//! read_url's HTML to Markdown conversion on a 1 MB page (target: at least 20 MB/s), and the
//! peak memory one conversion adds. Run with `cargo bench --bench web`.
//!
//! The page is the article of `fixtures/web/article.html` with its `<main>` repeated until
//! the page passes 1 MB: headings, paragraphs with links, code blocks, tables and lists, in
//! the chrome (header, nav, scripts, footer) a real page has.
//!
//! Criterion's figure is wall time; on a busy machine the CPU-time figure printed first (one
//! thread's time on the CPU over ten conversions) is the one to compare with the target.
//!
//! Peak memory is read from the kernel (`VmHWM` in /proc/self/status, the process's peak
//! resident size) before and after one conversion, before criterion allocates anything: the
//! growth is what the conversion needed at its peak.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use agent_loop::tools::web::convert::Converter;

const SIZE: usize = 1 << 20;

fn page() -> String {
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

/// CPU time this thread has run, from the kernel's scheduler statistics (Linux and
/// Android): a figure the other work of a shared machine does not inflate, unlike wall time.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
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
    let before = peak_kib();
    let markdown = converter.convert(&html, &base).markdown;
    if let (Some(before), Some(after)) = (before, peak_kib()) {
        eprintln!(
            "web: one conversion of {} KiB of HTML into {} KiB of Markdown raised the peak \
             resident size by {} KiB (from {before} KiB)",
            html.len() / 1024,
            markdown.len() / 1024,
            after.saturating_sub(before)
        );
    }
    const ROUNDS: u32 = 10;
    if let Some(start) = cpu_ns() {
        for _ in 0..ROUNDS {
            black_box(converter.convert(black_box(&html), &base));
        }
        if let Some(end) = cpu_ns() {
            let seconds = (end - start) as f64 / 1e9;
            eprintln!(
                "web: {:.1} MB/s of CPU time ({ROUNDS} conversions in {seconds:.2} s on this thread)",
                html.len() as f64 * f64::from(ROUNDS) / seconds / 1e6
            );
        }
    }
    let mut group = c.benchmark_group("read_url");
    group.throughput(Throughput::Bytes(html.len() as u64));
    group.sample_size(20);
    group.bench_function("html_to_markdown/1MB", |b| {
        b.iter(|| converter.convert(black_box(&html), &base))
    });
    group.finish();
}

criterion_group!(benches, convert);
criterion_main!(benches);
