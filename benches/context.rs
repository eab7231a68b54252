//! Building and trimming the prompt of one turn for long conversations: the context manager's
//! cost per request. Run with `cargo bench --bench context`.
//!
//! - `turn/N`: plan the request (mode `continue`, the default 80k-token budget, no trim point
//!   remembered, so the whole history is walked) and render the plain prompt of what fits.
//! - `whole/N`: render a prompt holding all N messages (a budget that never trims): the cost
//!   of the formatting itself, which must grow linearly.
//! - `format/F`: `turn/10000` in each context format.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use agent_loop_context::budget::{plan, Limits};
use agent_loop_context::{
    render_prompt, ContextFormat, ContextMode, Conversation, Message, PromptStyle, ToolCall, Window,
};
use agent_loop_tools::Registry;

/// A conversation of `n` messages in exchanges of four: a task, a tool call, its result and
/// an answer, of the sizes a coding session shows (a few hundred bytes each).
fn conversation(n: usize) -> Conversation {
    let mut c = Conversation::new();
    let output: String = (0..12)
        .map(|i| format!("src/file_{i}.rs  (1234 bytes)\n"))
        .collect();
    for i in 0.. {
        let message = match i % 4 {
            0 => Message::user(format!(
                "task {i}: look at the files and fix the failing test in module {i}"
            )),
            1 => Message::Assistant {
                text: "I will list the files first.".into(),
                tool_calls: vec![ToolCall {
                    id: c.next_call_id(),
                    name: "ls".into(),
                    args: serde_json::json!({"path": format!("src/module_{i}")}),
                }],
            },
            2 => Message::ToolResult {
                call_id: format!("call_{}", i / 4 + 1),
                name: "ls".into(),
                ok: true,
                output: output.clone(),
            },
            _ => Message::Assistant {
                text: "The test fails because the fixture path is wrong; I changed it and the \
                       suite passes now."
                    .into(),
                tool_calls: vec![],
            },
        };
        if c.len() == n {
            break;
        }
        c.push(message);
    }
    c
}

fn limits(max_tokens: u64) -> Limits {
    Limits {
        mode: ContextMode::Continue,
        max_tokens,
        bytes_per_token: 4.0,
        method: Default::default(),
        fixed_bytes: 4_000,
        fixed_what: "the preamble takes",
        hint: 0,
    }
}

/// Plans and renders one request; returns the prompt's length so nothing is optimised away.
fn one_turn(c: &Conversation, max_tokens: u64, style: &PromptStyle, registry: &Registry) -> usize {
    let plan = plan(c, &limits(max_tokens)).expect("fits");
    let window = Window::planned(c, &plan, None);
    render_prompt(&window, registry.specs(), style, Path::new("/work")).len()
}

fn style(format: ContextFormat) -> PromptStyle {
    PromptStyle {
        tool_call_format: "<tool_call>{json}</tool_call>".into(),
        format,
        own_tools: false,
    }
}

fn bench(c: &mut Criterion) {
    let registry = agent_loop_builtins::registry(None).expect("built-in tools");
    let plain = style(ContextFormat::Plain);
    let sizes = [1_000, 10_000, 100_000];
    let conversations: Vec<Conversation> = sizes.iter().map(|&n| conversation(n)).collect();

    let mut group = c.benchmark_group("turn");
    for (n, conv) in sizes.iter().zip(&conversations) {
        group.throughput(Throughput::Elements(*n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), conv, |b, conv| {
            b.iter(|| one_turn(black_box(conv), 80_000, &plain, &registry))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("whole");
    group.sample_size(20);
    for (n, conv) in sizes.iter().zip(&conversations) {
        group.throughput(Throughput::Elements(*n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), conv, |b, conv| {
            b.iter(|| one_turn(black_box(conv), 1 << 40, &plain, &registry))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("format");
    let ten_k = &conversations[1];
    for format in [
        ContextFormat::Plain,
        ContextFormat::Markdown,
        ContextFormat::Json,
        ContextFormat::Xml,
    ] {
        let style = style(format);
        group.bench_function(format.to_string(), |b| {
            b.iter(|| one_turn(black_box(ten_k), 80_000, &style, &registry))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
