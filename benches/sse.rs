//! Throughput of decoding streamed HTTP replies: SSE (Anthropic Messages, OpenAI Chat
//! Completions) and NDJSON (Ollama), framed and fed to the wire format exactly as a live reply
//! is, from recorded bodies (fixtures/http) whose text deltas are repeated to make a long
//! answer, handed over in 1,460-byte pieces as TCP would.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use agent_loop_backends::backend::decode_recorded;
use agent_loop_config::WireFormat;

/// The recorded text reply of `file`, its first event holding `marker` repeated until the
/// body passes `bytes`. Events are separated by `separator`.
fn long_reply(file: &str, separator: &str, marker: &str, bytes: usize) -> Vec<u8> {
    let path = format!("{}/fixtures/http/{file}", env!("CARGO_MANIFEST_DIR"));
    let body = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let events: Vec<&str> = body.split(separator).collect();
    let delta = events
        .iter()
        .position(|e| e.contains(marker))
        .unwrap_or_else(|| panic!("{path}: no event with {marker}"));
    let copies = bytes / (events[delta].len() + separator.len()) + 1;
    let mut long = events[..delta].to_vec();
    long.extend(std::iter::repeat_n(events[delta], copies));
    long.extend(&events[delta..]);
    long.join(separator).into_bytes()
}

fn decode(c: &mut Criterion) {
    let formats = [
        (
            "anthropic",
            WireFormat::Anthropic,
            "anthropic/text.sse",
            "\n\n",
            "text_delta",
        ),
        (
            "openai",
            WireFormat::OpenAi,
            "openai/text.sse",
            "\n\n",
            "\"delta\":{\"content\":\"",
        ),
        (
            "ollama",
            WireFormat::Ollama,
            "ollama/text.ndjson",
            "\n",
            "\"done\":false",
        ),
    ];
    let mut group = c.benchmark_group("stream_decode");
    for (name, format, file, separator, marker) in formats {
        let body = long_reply(file, separator, marker, 1024 * 1024);
        let (reply, pieces) = decode_recorded(format, &body, 1460).expect("the body decodes");
        assert!(
            pieces > 1000 && reply.text.len() > 10_000,
            "{name}: {pieces} pieces"
        );
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &body, |b, body| {
            b.iter(|| decode_recorded(format, body, 1460).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
