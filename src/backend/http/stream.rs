//! Reading a reply body: whole (one JSON document), or streamed as SSE (framed by
//! `eventsource-stream`) or NDJSON (split into lines), each event handed to the wire format
//! and the new text passed on at once.

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::Value;

use super::reply::ReplyBuilder;
use super::wire::{error_in, shorten, Framing, Wire};
use crate::backend::lines::LineSplitter;

/// An NDJSON line longer than this is an error rather than unbounded memory.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Reads a whole JSON reply.
pub async fn whole(response: reqwest::Response, wire: &dyn Wire) -> Result<ReplyBuilder, String> {
    let bytes = response.bytes().await.map_err(|e| {
        format!(
            "the connection broke while reading the reply: {}",
            chain(&e)
        )
    })?;
    let body: Value = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "the reply is not valid JSON ({e}); it began: {}",
            head(&String::from_utf8_lossy(&bytes))
        )
    })?;
    if body.get("error").is_some() {
        let message = error_in(&body).unwrap_or_default();
        return Err(format!("the provider answered with an error: {message}"));
    }
    let mut reply = ReplyBuilder::default();
    wire.parse(&body, &mut reply)?;
    Ok(reply)
}

/// Reads a streamed reply, calling `on_text` with each new piece of text.
pub async fn streamed(
    response: reqwest::Response,
    wire: &dyn Wire,
    on_text: &mut (dyn FnMut(String) + Send),
) -> Result<ReplyBuilder, String> {
    let mut reply = ReplyBuilder::default();
    let mut feed = |event: &str, data: &str, reply: &mut ReplyBuilder| {
        let last = wire
            .feed(event, data, reply)
            .map_err(|why| format!("{why}; the event was: {}", head(data)))?;
        let text = reply.take_unsent();
        if !text.is_empty() {
            on_text(text);
        }
        Ok::<bool, String>(last)
    };
    let broke = |e: &dyn std::error::Error| format!("the connection broke mid-reply: {}", chain(e));
    match wire.framing() {
        Framing::Sse => {
            let mut events = response.bytes_stream().eventsource();
            while let Some(event) = events.next().await {
                let event = event.map_err(|e| broke(&e))?;
                if feed(&event.event, &event.data, &mut reply)? {
                    return Ok(reply);
                }
            }
        }
        Framing::Ndjson => {
            let mut body = response.bytes_stream();
            let mut splitter = LineSplitter::with_limit(MAX_LINE);
            let mut lines = Vec::new();
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| broke(&e))?;
                splitter.push(&chunk, &mut |line| lines.push(line.to_vec()));
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
        Err(
            "the stream ended before the reply was complete: the connection was cut mid-reply"
                .into(),
        )
    }
}

/// An error and its causes, `: `-separated (reqwest's own message hides the root cause).
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The start of a body or event, for messages.
fn head(text: &str) -> String {
    shorten(text, 200)
}
