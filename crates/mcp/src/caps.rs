//! The caps on what an MCP server sends, and the readers that hold them: a line of a stdio
//! server's output, an HTTP body, one event of an event stream, a tool list. A server that
//! passes one fails with a message naming the cap, and agent-loop's memory stays bounded
//! however much it sends (tests/all/mcp/caps.rs floods each one).

use futures_util::{Stream, StreamExt};

use crate::failure::BodyError;
use crate::sse::EventLines;

pub use agent_loop_tools::process::capped::{note, size, Breach, CappedLines, LINE};

const MIB: usize = 1024 * 1024;
/// One HTTP body read whole (a JSON answer).
pub const BODY: usize = 16 * MIB;
/// One event of an event stream.
pub const EVENT: usize = 16 * MIB;
/// The start of a refusal's body kept for its message.
pub const ERROR_BODY: usize = 4096;
/// Tools one server may offer.
pub const TOOLS: usize = 1000;
/// The JSON of all of one server's tools together.
pub const TOOL_LIST: usize = 4 * MIB;
/// A body read whole, failing once it passes `cap` bytes (at once if its length says so).
pub async fn read_body<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
    body: impl Stream<Item = Result<bytes::Bytes, E>>,
    length: Option<u64>,
    cap: usize,
) -> Result<Vec<u8>, BodyError> {
    if length.is_some_and(|n| n > cap as u64) {
        return Err(BodyError::TooLong { cap });
    }
    futures_util::pin_mut!(body);
    let mut all = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| BodyError::Broke(e.into()))?;
        if chunk.len() > cap - all.len() {
            return Err(BodyError::TooLong { cap });
        }
        all.extend_from_slice(&chunk);
    }
    Ok(all)
}

/// The first `cap` bytes of a body, for a message; the rest is not read.
pub async fn body_start<E>(
    body: impl Stream<Item = Result<bytes::Bytes, E>>,
    cap: usize,
) -> String {
    futures_util::pin_mut!(body);
    let mut start = Vec::new();
    while start.len() < cap {
        match body.next().await {
            Some(Ok(chunk)) => {
                start.extend_from_slice(&chunk[..chunk.len().min(cap - start.len())])
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&start).into_owned()
}

/// A body's chunks as [`EventLines`] gives them, ending with an error once one event passes
/// `cap`.
pub fn capped_events<E: std::fmt::Display>(
    body: impl Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    cap: usize,
    breach: Breach,
) -> impl Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + 'static {
    let mut lines = EventLines::default();
    let mut over = false;
    body.map(move |chunk| {
        let chunk = chunk.map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut out = Vec::new();
        if over || !lines.feed(&chunk, cap, &mut out) {
            over = true;
            let why = format!(
                "it sent an event longer than {}, the cap on one event",
                size(cap)
            );
            note(&breach, why.clone());
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
        }
        Ok(bytes::Bytes::from(out))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_units() {
        assert_eq!(size(16 * MIB), "16 MiB");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(100), "100 bytes");
    }
}
