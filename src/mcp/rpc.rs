//! JSON-RPC 2.0 as MCP uses it: the requests and notifications agent-loop sends, and what a
//! server sends back, sorted into answers to ours, requests of its own and notifications. Both
//! transports (stdio lines, Streamable HTTP bodies and events) carry these same messages.

use serde_json::{json, Value};

/// One message from a server.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// The answer to our request `id`: its result, or the message of its error.
    Answer {
        id: u64,
        outcome: Result<Value, String>,
    },
    /// A request of the server's own; [`reply`] answers it.
    Request { id: Value, method: String },
    /// Progress, log lines, list changes: nothing agent-loop acts on.
    Notification,
}

/// Why a request got no answer.
#[derive(Debug)]
pub enum Failure {
    /// The server refused it: a JSON-RPC error's message, or an HTTP status with its body.
    Refused(String),
    /// The transport is gone (the process exited, the connection failed); the cause where
    /// one is known.
    Closed(String),
}

/// Request `id` of `method`.
pub fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

/// A notification: no id, no answer.
pub fn notification(method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
        .to_string()
        .into_bytes()
}

/// The answer to a server's request: `ping` is answered; sampling, roots and elicitation,
/// which agent-loop does not declare among its capabilities, are refused as unknown methods.
pub fn reply(id: &Value, method: &str) -> Vec<u8> {
    let message = if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32601,
            "message": format!("agent-loop does not offer `{method}`"),
        }})
    };
    message.to_string().into_bytes()
}

/// The messages in one line, body or event: a message or a batch of them. What is not
/// JSON-RPC (a stray line of text on stdout) is passed over.
pub fn parse(bytes: &[u8]) -> Vec<Incoming> {
    match serde_json::from_slice(bytes) {
        Ok(Value::Array(batch)) => batch.into_iter().filter_map(incoming).collect(),
        Ok(one) => incoming(one).into_iter().collect(),
        Err(_) => Vec::new(),
    }
}

fn incoming(mut message: Value) -> Option<Incoming> {
    let object = message.as_object_mut()?;
    let method = object
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    match (method, object.remove("id")) {
        (Some(method), Some(id)) => Some(Incoming::Request { id, method }),
        (Some(_), None) => Some(Incoming::Notification),
        (None, Some(id)) => {
            // Ours are numbers; a server that echoes them as strings is understood too.
            let id = id.as_u64().or_else(|| id.as_str()?.parse().ok())?;
            let outcome = match object.remove("error") {
                Some(error) => Err(match error.get("message").and_then(Value::as_str) {
                    Some(message) => message.to_string(),
                    None => error.to_string(),
                }),
                None => Ok(object.remove("result").unwrap_or_default()),
            };
            Some(Incoming::Answer { id, outcome })
        }
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_requests_notifications_and_batches() {
        let got = parse(br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#);
        assert_eq!(
            got,
            [Incoming::Answer {
                id: 3,
                outcome: Ok(json!({"tools": []}))
            }]
        );
        let got = parse(
            br#"[{"jsonrpc":"2.0","id":"4","error":{"code":-1,"message":"no"}},
            {"jsonrpc":"2.0","method":"notifications/progress","params":{}},
            {"jsonrpc":"2.0","id":"s1","method":"ping"}]"#,
        );
        assert_eq!(
            got,
            [
                Incoming::Answer {
                    id: 4,
                    outcome: Err("no".into())
                },
                Incoming::Notification,
                Incoming::Request {
                    id: json!("s1"),
                    method: "ping".into()
                },
            ]
        );
        assert_eq!(parse(b"npm WARN something"), []);
        assert_eq!(parse(br#"{"jsonrpc":"2.0","id":null,"error":{}}"#), []);
    }

    #[test]
    fn replies_to_a_servers_requests() {
        let ping: Value = serde_json::from_slice(&reply(&json!(7), "ping")).unwrap();
        assert_eq!(ping, json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
        let other: Value = serde_json::from_slice(&reply(&json!("a"), "roots/list")).unwrap();
        assert_eq!(other["error"]["code"], -32601);
        assert_eq!(other["id"], "a");
    }
}
