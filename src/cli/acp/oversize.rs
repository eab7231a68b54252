//! A message from the editor past the cap on one message (a prompt with something huge
//! pasted in): it is not read, but the connection and its sessions go on. The reader
//! ([`OversizeLines`](agent_loop::process::oversize::OversizeLines)) drops the line and puts
//! in its place, for a request, a request of our own method with the same id, which the
//! handler here answers with an error saying how big it was and by how much it passed the
//! cap (the SDK reads only whole messages, so the answer must come through it); for an
//! answer to one of our requests (a file read through the editor), an error answer with its
//! id, so the call waiting for it fails instead of waiting forever. Either way stderr says so.

use agent_client_protocol::{Error as RpcError, ErrorCode, JsonRpcRequest};
use serde::{Deserialize, Serialize};
use serde_json::json;

use agent_loop::process::capped;
use agent_loop::process::oversize::{Oversize, Replace};

const METHOD: &str = "_agent_loop/oversize";

/// What takes an oversize request's place: the method and size of what was dropped.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_agent_loop/oversize", response = serde_json::Value)]
pub struct Dropped {
    /// The dropped request's method.
    pub method: String,
    pub bytes: usize,
}

/// The reader's replacement of a line past `cap`, telling stderr what became of it.
pub fn replace(cap: usize) -> Replace {
    Box::new(move |line: &Oversize| {
        let size = size(line.bytes);
        let (note, replaced) = match (&line.id, &line.method) {
            (Some(id), Some(method)) => (
                format!(
                    "{} of {size}: it was answered with an error",
                    request(method)
                ),
                with_id(
                    id,
                    json!({"jsonrpc": "2.0", "method": METHOD,
                           "params": {"method": method, "bytes": line.bytes}}),
                ),
            ),
            (Some(id), None) => (
                format!("an answer of {size}: the request it answers fails"),
                with_id(
                    id,
                    json!({"jsonrpc": "2.0", "error": {
                    "code": -32600,
                    "message": format!(
                        "the editor's answer was {size}, more than the {} cap on one message",
                        capped::size(cap)
                    )}}),
                ),
            ),
            (None, Some(method)) => (format!("a {} notification of {size}", name(method)), None),
            (None, None) => (format!("a line of {size} with no JSON-RPC id"), None),
        };
        eprintln!(
            "agent-loop acp: the editor sent {note}; it was not read, being longer than {}, \
             the cap on one message; the connection goes on",
            capped::size(cap)
        );
        replaced
    })
}

/// `message` as a line with `id` first, written as the editor wrote it, so the SDK reads the
/// id it would have read in a short message (parsed and written again, `1e1` would be `10.0`,
/// an id the editor never sent). The SDK takes strings and whole numbers: `1e1` it answers
/// `Invalid request` with id null, as it does a short message.
fn with_id(id: &str, message: serde_json::Value) -> Option<Vec<u8>> {
    let rest = message.to_string();
    Some(format!("{{\"id\":{id},{}\n", rest.strip_prefix('{')?).into_bytes())
}

/// What stderr calls a request of `method`.
fn request(method: &str) -> String {
    match method {
        "" => "a request with a method too long to read".to_string(),
        method => format!("a {method} request"),
    }
}

/// A method's name, or what stands for one too long to read.
fn name(method: &str) -> &str {
    match method {
        "" => "(too long to read)",
        method => method,
    }
}

/// The answer to a request dropped for its size.
pub fn refusal(dropped: &Dropped, cap: usize) -> RpcError {
    let what = match dropped.method.as_str() {
        "session/prompt" => "the prompt".to_string(),
        "" => "the request".to_string(),
        method => format!("the {method} request"),
    };
    RpcError::new(
        ErrorCode::INVALID_PARAMS,
        format!(
            "{what} is too big: {} ({} bytes), {} more than the {} agent-loop takes in one \
             message. It was not read; the session goes on: send less at once",
            size(dropped.bytes),
            dropped.bytes,
            size(dropped.bytes.saturating_sub(cap)),
            capped::size(cap)
        ),
    )
}

/// `20.0 MiB`, `3.5 KiB`, `12 bytes`.
fn size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    match bytes as f64 {
        b if b >= KIB * KIB => format!("{:.1} MiB", b / (KIB * KIB)),
        b if b >= KIB => format!("{:.1} KiB", b / KIB),
        _ => format!("{bytes} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced(line: Oversize) -> Option<serde_json::Value> {
        let bytes = replace(100)(&line)?;
        assert_eq!(bytes.last(), Some(&b'\n'));
        Some(serde_json::from_slice(&bytes).unwrap())
    }

    /// A request becomes ours under its id; an answer, an error answer to our request; what
    /// has no id is dropped.
    #[test]
    fn each_line_past_the_cap_is_replaced_by_what_answers_it() {
        let line = |id: Option<&str>, method: Option<&str>| Oversize {
            bytes: 300,
            id: id.map(str::to_string),
            method: method.map(str::to_string),
        };
        assert_eq!(
            replaced(line(Some(r#""p1""#), Some("session/prompt"))),
            Some(json!({"jsonrpc": "2.0", "id": "p1", "method": METHOD,
                        "params": {"method": "session/prompt", "bytes": 300}}))
        );
        assert_eq!(
            replaced(line(Some("7"), None)),
            Some(json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32600,
                "message": "the editor's answer was 300 bytes, more than the 100 bytes cap on one message"}}))
        );
        assert_eq!(replaced(line(None, Some("session/cancel"))), None);
        assert_eq!(replaced(line(None, None)), None);
        // A method too long to read is still a request, answered under its id, which comes
        // back as the editor wrote it.
        let bytes = replace(100)(&line(Some("1e1"), Some(""))).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with(r#"{"id":1e1,"jsonrpc":"2.0","method":"_agent_loop/oversize","#),
            "{text}"
        );
    }

    #[test]
    fn the_refusal_says_how_big_and_by_how_much() {
        let cap = 16 * 1024 * 1024;
        let dropped = Dropped {
            method: "session/prompt".into(),
            bytes: cap + 4 * 1024 * 1024 + 512 * 1024,
        };
        let e = refusal(&dropped, cap);
        assert_eq!(
            e.message,
            "the prompt is too big: 20.5 MiB (21495808 bytes), 4.5 MiB more than the 16 MiB \
             agent-loop takes in one message. It was not read; the session goes on: send less \
             at once"
        );
    }
}
