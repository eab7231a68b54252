//! Reading a reply body: whole (one JSON document), or streamed as SSE (framed by
//! [`crate::sse`], as MCP's streams are) or NDJSON (split into lines), each event handed to the wire format
//! and the new text passed on at once. Every body is capped: a server that never stops
//! sending costs a bounded amount of memory and ends the call with an error.

use futures_util::StreamExt;
use serde_json::Value;

use super::failure::{BodyError, ReplyError};
use super::reply::{Piece, ReplyBuilder};
use super::wire::{error_in, shorten, Framing, Wire};
use crate::backend::lines::LineSplitter;

/// A stream line (an SSE field, an NDJSON chunk) longer than this is an error: real ones are
/// a few KiB, and the SSE parser rereads an unfinished line with every chunk that arrives.
const MAX_LINE: usize = 1024 * 1024;

/// The most of one reply body that is read. A streamed reply of the longest outputs models
/// give (100k+ tokens, an event of ~200 bytes each) stays well below it.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// The body's chunks, ending with an error once more than `cap` bytes came, or a line longer
/// than `max_line`.
fn capped(
    response: reqwest::Response,
    cap: usize,
    max_line: usize,
) -> impl futures_util::Stream<Item = Result<impl AsRef<[u8]>, BodyError>> {
    let (mut seen, mut line) = (0usize, 0usize);
    response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(BodyError::Broke)?;
        seen = seen.saturating_add(chunk.len());
        line = match chunk.iter().rposition(|b| matches!(b, b'\n' | b'\r')) {
            Some(end) => chunk.len() - end - 1,
            None => line.saturating_add(chunk.len()),
        };
        if seen > cap {
            return Err(BodyError::TooLong(cap));
        }
        if line > max_line {
            return Err(BodyError::LineTooLong(max_line));
        }
        Ok(chunk)
    })
}

/// The whole body, or an error once it passes `cap` bytes.
pub async fn read_capped(response: reqwest::Response, cap: usize) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    let chunks = capped(response, cap, usize::MAX);
    futures_util::pin_mut!(chunks);
    while let Some(chunk) = chunks.next().await {
        body.extend_from_slice(chunk?.as_ref());
    }
    Ok(body)
}

/// The first `max` bytes of a body (an error page), whatever follows or breaks after them.
pub async fn read_prefix(response: reqwest::Response, max: usize) -> Vec<u8> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(Ok(chunk)) = chunks.next().await {
        let room = max - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == max {
            break;
        }
    }
    body
}

/// Reads a whole JSON reply.
pub async fn whole(
    response: reqwest::Response,
    wire: &dyn Wire,
) -> Result<ReplyBuilder, ReplyError> {
    let bytes = read_capped(response, MAX_BODY).await?;
    let body: Value = serde_json::from_slice(&bytes).map_err(|source| ReplyError::NotJson {
        source,
        head: head(&String::from_utf8_lossy(&bytes)),
    })?;
    if body.get("error").is_some() {
        let message = error_in(&body).unwrap_or_default();
        return Err(ReplyError::Provider(message));
    }
    let mut reply = ReplyBuilder::default();
    wire.parse(&body, &mut reply)?;
    Ok(reply)
}

/// Reads a streamed reply, calling `on_piece` with each new piece of text or thinking.
pub async fn streamed(
    response: reqwest::Response,
    wire: &dyn Wire,
    on_piece: &mut (dyn FnMut(Piece) + Send),
) -> Result<ReplyBuilder, ReplyError> {
    decode(capped(response, MAX_BODY, MAX_LINE), wire, on_piece).await
}

/// Decodes a streamed body, given as its chunks, calling `on_piece` with each new piece of
/// text or thinking.
pub async fn decode<B: AsRef<[u8]>>(
    body: impl futures_util::Stream<Item = Result<B, BodyError>>,
    wire: &dyn Wire,
    on_piece: &mut (dyn FnMut(Piece) + Send),
) -> Result<ReplyBuilder, ReplyError> {
    let mut reply = ReplyBuilder::default();
    let mut feed = |event: &str, data: &str, reply: &mut ReplyBuilder| {
        let last = wire
            .feed(event, data, reply)
            .map_err(|why| ReplyError::Event {
                source: Box::new(why),
                event: head(data),
            })?;
        reply.take_pieces().for_each(&mut *on_piece);
        Ok::<bool, ReplyError>(last)
    };
    match wire.framing() {
        Framing::Sse => {
            // Lines are capped on the way in, and the body as a whole: no cap of its own for an
            // event.
            let events = crate::sse::events(body, MAX_BODY);
            futures_util::pin_mut!(events);
            while let Some(event) = events.next().await {
                let (kind, data) = event?;
                if feed(&kind, &data, &mut reply)? {
                    return Ok(reply);
                }
            }
        }
        Framing::Ndjson => {
            futures_util::pin_mut!(body);
            let mut splitter = LineSplitter::with_limit(MAX_LINE);
            let mut lines = Vec::new();
            while let Some(chunk) = body.next().await {
                let chunk = chunk?;
                splitter.push(chunk.as_ref(), &mut |line| lines.push(line.to_vec()));
                for line in lines.drain(..) {
                    let line = String::from_utf8_lossy(&line);
                    if !line.trim().is_empty() && feed("", &line, &mut reply)? {
                        return Ok(reply);
                    }
                }
            }
            // A last line without its newline counts if it is whole; a piece of one means the
            // stream was cut, which the check below reports.
            splitter.finish(&mut |line| lines.push(line.to_vec()));
            for line in lines {
                if serde_json::from_slice::<Value>(&line).is_ok() {
                    feed("", &String::from_utf8_lossy(&line), &mut reply)?;
                }
            }
        }
    }
    if reply.complete {
        Ok(reply)
    } else {
        Err(ReplyError::Cut)
    }
}

/// The start of a body or event, for messages.
fn head(text: &str) -> String {
    shorten(text, 200)
}

/// Property tests of the stream decoders: SSE framing ([`crate::sse`], as `streamed` uses
/// it) and NDJSON framing (`LineSplitter`) over bytes cut into arbitrary chunks, and every
/// wire format's event reader over arbitrary events. `PROPTEST_CASES` sets the count.
#[cfg(test)]
mod props {
    use super::super::{anthropic::Anthropic, ollama::Ollama, openai::OpenAi};
    use super::*;
    use futures_util::FutureExt;
    use proptest::prelude::*;

    fn config() -> ProptestConfig {
        let mut config = ProptestConfig::default();
        if std::env::var_os("PROPTEST_CASES").is_none() {
            config.cases = 64;
        }
        config.failure_persistence = None;
        config
    }

    /// `bytes` cut at the given points, in order.
    fn chunks(bytes: &[u8], cuts: &[usize]) -> Vec<Result<Vec<u8>, std::io::Error>> {
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        points.extend([0, bytes.len()]);
        points.sort_unstable();
        points
            .windows(2)
            .map(|w| Ok(bytes[w[0]..w[1]].to_vec()))
            .collect()
    }

    /// The SSE events in `bytes` delivered as `cuts` chunk them: (type, data), or an error.
    fn sse(bytes: &[u8], cuts: &[usize]) -> Vec<Result<(String, String), crate::sse::SseError>> {
        crate::sse::events(futures_util::stream::iter(chunks(bytes, cuts)), MAX_BODY)
            .collect::<Vec<_>>()
            .now_or_never()
            .expect("every chunk is ready")
    }

    fn lines(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
        let mut splitter = LineSplitter::with_limit(MAX_LINE);
        let mut out = Vec::new();
        for chunk in chunks(bytes, cuts) {
            splitter.push(&chunk.unwrap(), &mut |l| out.push(l.to_vec()));
        }
        splitter.finish(&mut |l| out.push(l.to_vec()));
        out
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn arbitrary_streams_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..600),
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
        ) {
            for event in sse(&bytes, &cuts).into_iter().flatten() {
                for wire in [&Anthropic as &dyn Wire, &OpenAi] {
                    let _ = wire.feed(&event.0, &event.1, &mut ReplyBuilder::default());
                }
            }
            let mut reply = ReplyBuilder::default();
            for line in lines(&bytes, &cuts) {
                let _ = Ollama.feed("", &String::from_utf8_lossy(&line), &mut reply);
            }
        }

        #[test]
        fn wire_formats_take_arbitrary_json_events(
            event in "[a-z_]{0,20}",
            data in "\\{(\"[a-z_]{1,8}\":(\"[ -~]{0,6}\"|[0-9]{1,3}|null|\\{\\}|\\[\\]|true),?){0,6}\\}",
        ) {
            let mut reply = ReplyBuilder::default();
            for wire in [&Anthropic as &dyn Wire, &OpenAi, &Ollama] {
                let _ = wire.feed(&event, &data, &mut reply);
                let _ = reply.take_unsent();
            }
        }

        #[test]
        fn printed_sse_events_decode_as_printed(
            events in proptest::collection::vec(("[a-z_]{1,12}", "[ -~\u{e9}\u{4e16}]{0,40}"), 0..6),
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
        ) {
            let mut printed = String::new();
            for (kind, data) in &events {
                printed.push_str(&format!("event: {kind}\ndata: {data}\n\n"));
            }
            let got: Vec<(String, String)> = sse(printed.as_bytes(), &cuts)
                .into_iter()
                .collect::<Result<_, _>>()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(got, events);
        }

        #[test]
        fn printed_ndjson_lines_split_as_printed(
            printed in proptest::collection::vec("[ -~\u{e9}]{0,40}", 0..8),
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
        ) {
            let mut bytes = Vec::new();
            for line in &printed {
                bytes.extend_from_slice(line.as_bytes());
                bytes.push(b'\n');
            }
            let got: Vec<String> = lines(&bytes, &cuts)
                .into_iter()
                .map(|l| String::from_utf8(l).unwrap())
                .collect();
            prop_assert_eq!(got, printed);
        }
    }
}
