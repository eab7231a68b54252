//! The three tools as the calling agent sees them: their input and output schemas (the
//! backends offered are an enum, with the default named, so the calling model can choose),
//! and a call's arguments read into a [`Request`]. docs/mcp-server.md shows the same schemas.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::ErrorData as McpError;
use serde::Deserialize;
use serde_json::{json, Value};

use super::Offered;

pub const ASK: &str = "ask";
pub const REPLY: &str = "reply";
pub const BACKENDS: &str = "backends";

/// A call, its arguments checked.
#[derive(Debug, Clone)]
pub enum Request {
    Backends,
    Turn(Turn),
}

/// An `ask` or a `reply`.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub prompt: String,
    pub backend: Option<String>,
    pub model: Option<String>,
    pub session: Option<String>,
    /// `reply`: the session must exist.
    pub reply: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AskArgs {
    prompt: String,
    backend: Option<String>,
    model: Option<String>,
    session: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyArgs {
    session: String,
    prompt: String,
    backend: Option<String>,
    model: Option<String>,
}

/// Reads a call of tool `name`: a missing prompt or an unknown argument is an invalid call,
/// answered as a protocol error naming it.
pub fn parse(name: &str, args: JsonObject) -> Result<Request, McpError> {
    let bad = |e: serde_json::Error| McpError::invalid_params(format!("{name}: {e}"), None);
    let blank = |s: &Option<String>| s.as_deref().is_some_and(|s| s.trim().is_empty());
    let turn = match name {
        BACKENDS => return Ok(Request::Backends),
        ASK => {
            let a: AskArgs = serde_json::from_value(Value::Object(args)).map_err(bad)?;
            Turn {
                prompt: a.prompt,
                backend: a.backend,
                model: a.model,
                session: a.session,
                reply: false,
            }
        }
        REPLY => {
            let a: ReplyArgs = serde_json::from_value(Value::Object(args)).map_err(bad)?;
            Turn {
                prompt: a.prompt,
                backend: a.backend,
                model: a.model,
                session: Some(a.session),
                reply: true,
            }
        }
        other => {
            return Err(McpError::invalid_params(
                format!("no tool `{other}`: the tools are {ASK}, {REPLY} and {BACKENDS}"),
                None,
            ))
        }
    };
    if turn.prompt.trim().is_empty() {
        return Err(McpError::invalid_params(
            format!("{name}: the prompt is empty"),
            None,
        ));
    }
    for (arg, value) in [
        ("backend", &turn.backend),
        ("model", &turn.model),
        ("session", &turn.session),
    ] {
        if blank(value) {
            return Err(McpError::invalid_params(
                format!("{name}: `{arg}` is empty (leave it out for the default)"),
                None,
            ));
        }
    }
    // The calling model chooses the model: it goes into the agent CLI's arguments, where a
    // value that starts with `-` could be read as a flag of its own (`--yolo`).
    if turn.model.as_deref().is_some_and(|m| m.starts_with('-')) {
        return Err(McpError::invalid_params(
            format!("{name}: `model` must not start with `-`"),
            None,
        ));
    }
    // A session name is checked before anything looks for it on disk (`../x` would ask
    // whether a file exists outside the sessions folder).
    if let Some(session) = &turn.session {
        if let Err(e) = agent_loop::chat::Chat::check_session_name(session) {
            return Err(McpError::invalid_params(format!("{name}: {e}"), None));
        }
    }
    Ok(Request::Turn(turn))
}

/// The tools, with the offered backends in their schemas; `own_only`: only the sessions this
/// server started may be continued (not `--any-session`), which the session's text says.
pub fn list(offered: &Offered, own_only: bool) -> Vec<Tool> {
    let which = if own_only {
        " (only a session this server started)"
    } else {
        ""
    };
    let backend = json!({
        "type": "string",
        "enum": offered.names,
        "description": format!(
            "The backend to run the turn on (`backends` describes each); default: {} for a new session, the session's own for one continued",
            offered.default
        ),
    });
    let model = json!({
        "type": "string",
        "description": "The model to ask the backend for; default: the backend's own (or the session's)",
    });
    let prompt = json!({"type": "string", "description": "The task or message for the agent"});
    let ask = object(json!({
        "type": "object",
        "properties": {
            "prompt": prompt,
            "backend": backend,
            "model": model,
            "session": {
                "type": "string",
                "description": format!("A session name to start or continue{which} (letters, digits, `-`, `_`, `.`); default: a new session, named in the result"),
            },
        },
        "required": ["prompt"],
        "additionalProperties": false,
    }));
    let reply = object(json!({
        "type": "object",
        "properties": {
            "session": {"type": "string", "description": format!("The session to continue, as `ask` named it{which}")},
            "prompt": prompt,
            "backend": backend,
            "model": model,
        },
        "required": ["session", "prompt"],
        "additionalProperties": false,
    }));
    let turn = |annotations: ToolAnnotations| {
        annotations
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true)
    };
    vec![
        Tool::new(
            ASK,
            "Run one turn of another agent or model through agent-loop, tool rounds included, and return its answer, with the session (continue it with `reply`), the stop reason, the tool calls refused, the backend, the tokens and the cost where known.",
            ask,
        )
        .with_title("Ask an agent")
        .with_raw_output_schema(turn_output())
        .with_annotations(turn(ToolAnnotations::new())),
        Tool::new(
            REPLY,
            "Continue a session by name with one more turn; naming another backend moves the conversation to it (a task started on one agent continued on another).",
            reply,
        )
        .with_title("Reply in a session")
        .with_raw_output_schema(turn_output())
        .with_annotations(turn(ToolAnnotations::new())),
        Tool::new(
            BACKENDS,
            "The backends this server offers (and the others configured), each with its type, whether it can run here and what it is, and the default.",
            object(json!({"type": "object", "properties": {}, "additionalProperties": false})),
        )
        .with_title("List the backends")
        .with_raw_output_schema(backends_output())
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
    ]
}

/// The structured result of `ask` and `reply`.
fn turn_output() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "answer": {"type": "string", "description": "The agent's answer (what it had answered, when the turn was stopped); one longer than --max-answer-chars keeps its head and tail, a note between them saying where the whole answer is saved"},
            "answer_cut": {"type": "boolean", "description": "Whether the answer was cut to --max-answer-chars"},
            "stop_reason": {
                "type": "string",
                "enum": ["end_turn", "max_tokens", "refusal", "max_iterations", "cancelled", "timeout"],
            },
            "note": {"type": ["string", "null"], "description": "Why the turn ended early (max_iterations, timeout); null otherwise"},
            "refused": {
                "type": "array",
                "description": "The tool calls agent-loop did not let run, their approval refused (denied, declined, or the client could not be asked)",
                "items": {
                    "type": "object",
                    "properties": {
                        "tool": {"type": "string"},
                        "call": {"type": "string", "description": "The call in a few words"},
                        "reason": {"type": "string"},
                    },
                    "required": ["tool", "call", "reason"],
                },
            },
            "session": {"type": ["string", "null"], "description": "The session's name (null when sessions are not saved)"},
            "backend": {"type": "string"},
            "model": {"type": ["string", "null"]},
            "tokens": {
                "type": "object",
                "properties": {
                    "input": {"type": ["integer", "null"]},
                    "output": {"type": ["integer", "null"]},
                },
                "description": "null where the backend reports no count",
                "required": ["input", "output"],
            },
            "cost_usd": {"type": ["number", "null"], "description": "null when the backend reports no cost and none could be priced"},
        },
        "required": ["answer", "answer_cut", "stop_reason", "note", "refused", "session", "backend", "model", "tokens", "cost_usd"],
    }))
}

fn backends_output() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "default": {"type": "string"},
            "backends": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "type": {"type": "string"},
                        "offered": {"type": "boolean", "description": "Whether ask and reply may use it"},
                        "here": {"type": "string", "description": "Whether it can run here: its program found, its API key set, its server answering"},
                        "model": {"type": ["string", "null"]},
                        "description": {"type": "string"},
                    },
                    "required": ["name", "type", "offered", "here", "model", "description"],
                },
            },
        },
        "required": ["default", "backends"],
    }))
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("every schema here is an object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn calls_are_read_and_bad_ones_named() {
        let Request::Turn(turn) =
            parse(REPLY, args(json!({"session": "s", "prompt": "hi"}))).unwrap()
        else {
            panic!("not a turn");
        };
        assert!(turn.reply && turn.session.as_deref() == Some("s"));
        let unknown = parse(ASK, args(json!({"prompt": "hi", "sesion": "s"}))).unwrap_err();
        assert!(
            unknown.message.contains("unknown field `sesion`"),
            "{unknown:?}"
        );
        let empty = parse(ASK, args(json!({"prompt": " "}))).unwrap_err();
        assert!(empty.message.contains("the prompt is empty"), "{empty:?}");
        let blank = parse(ASK, args(json!({"prompt": "hi", "backend": ""}))).unwrap_err();
        assert!(blank.message.contains("`backend` is empty"), "{blank:?}");
        assert!(parse("run", JsonObject::new()).is_err());
    }
}
