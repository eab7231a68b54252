//! Tool calls found in a backend's text by its configured regex: either one `json` group
//! holding `{"name": ..., "arguments": {...}}`, or `name` and `args` groups, where `args` is
//! JSON or a bare string such as the `ls -la` of `bash(ls -la)`.

use agent_loop_scan::json_value;
use serde_json::Value;

use super::Pattern;

/// A tool call as printed, before it is matched against the tool registry.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCall {
    /// The id the backend gave the call (HTTP APIs do); `None` for calls found in text.
    pub id: Option<String>,
    pub name: String,
    pub args: RawArgs,
    /// The matched text, for error messages.
    pub raw: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RawArgs {
    /// A JSON arguments object.
    Json(Value),
    /// A bare argument, mapped later to the tool's main parameter.
    Bare(String),
    /// The call could not be read; the message says why.
    Malformed(String),
}

impl RawArgs {
    /// Arguments written as JSON text: an object, or nothing at all (no arguments).
    pub fn from_json_text(text: &str) -> RawArgs {
        if text.trim().is_empty() {
            return RawArgs::Json(Value::Object(Default::default()));
        }
        match json_value(text) {
            Ok(v) if v.is_object() => RawArgs::Json(v),
            Ok(_) => RawArgs::Malformed("the arguments are not a JSON object".into()),
            Err(e) => RawArgs::Malformed(format!("the arguments are not valid JSON: {e}")),
        }
    }
}

/// Every tool call in `text`, in order.
#[cfg(test)]
pub fn extract(re: &Pattern, text: &str) -> Vec<RawCall> {
    extract_with_spans(re, text).0
}

/// Every tool call in `text`, in order, and the byte ranges they occupy (one search finds
/// both: locating a match is the costly part).
pub fn extract_with_spans(re: &Pattern, text: &str) -> (Vec<RawCall>, Vec<std::ops::Range<usize>>) {
    let mut spans = Vec::new();
    let calls = re
        .captures_all(text)
        .map(|caps| {
            spans.push(caps.range());
            let raw = caps.as_str().to_string();
            if let Some(json) = caps.name("json") {
                from_json(json, raw)
            } else {
                let name = caps.name("name").unwrap_or("").trim().to_string();
                let args = caps.name("args").unwrap_or("").trim();
                let args = if args.starts_with('{') || args.is_empty() {
                    RawArgs::from_json_text(args)
                } else {
                    RawArgs::Bare(args.to_string())
                };
                RawCall {
                    id: None,
                    name,
                    args,
                    raw,
                }
            }
        })
        .collect();
    (calls, spans)
}

fn from_json(json: &str, raw: String) -> RawCall {
    let malformed = |why: String| RawCall {
        id: None,
        name: String::new(),
        args: RawArgs::Malformed(why),
        raw: raw.clone(),
    };
    let mut value = match json_value(json) {
        Ok(v) => v,
        Err(e) => return malformed(format!("the tool call is not valid JSON: {e}")),
    };
    let Some(name) = value
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return malformed("the tool call has no \"name\" string".into());
    };
    // Models write the arguments under several names; all mean the same. Taken out of the
    // call rather than cloned: the call is dropped.
    let key = ["arguments", "args", "parameters", "input"]
        .into_iter()
        .find(|k| value.get(k).is_some());
    let args = key
        .and_then(|k| value.get_mut(k))
        .map_or_else(|| Value::Object(Default::default()), Value::take);
    let args = match args {
        Value::Object(_) => RawArgs::Json(args),
        // Some models send the arguments as a JSON string holding the object.
        Value::String(s) => match json_value(&s) {
            Ok(v) if v.is_object() => RawArgs::Json(v),
            _ => RawArgs::Malformed("\"arguments\" is a string, not a JSON object".into()),
        },
        _ => RawArgs::Malformed("\"arguments\" is not a JSON object".into()),
    };
    RawCall {
        id: None,
        name,
        args,
        raw,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;
    use serde_json::json;

    fn default_re() -> Pattern {
        Regex::new(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>")
            .unwrap()
            .into()
    }

    #[test]
    fn json_calls_with_nested_objects_in_order() {
        let text = r#"a <tool_call>{"name":"write","arguments":{"path":"x","content":"{}"}}</tool_call>
<tool_call> {"name": "bash", "arguments": {"command": "ls"}} </tool_call>"#;
        let calls = extract(&default_re(), text);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "write");
        assert_eq!(
            calls[0].args,
            RawArgs::Json(json!({"path":"x","content":"{}"}))
        );
        assert_eq!(calls[1].args, RawArgs::Json(json!({"command":"ls"})));
    }

    #[test]
    fn the_first_arguments_key_in_priority_order_wins() {
        let call = |json: &str| from_json(json, json.to_string()).args;
        assert_eq!(
            call(r#"{"name":"x","input":{"a":1},"arguments":{"b":2}}"#),
            RawArgs::Json(json!({"b":2}))
        );
        assert_eq!(
            call(r#"{"name":"x","parameters":"{\"c\":3}"}"#),
            RawArgs::Json(json!({"c":3}))
        );
        assert_eq!(
            call(r#"{"name":"x","args":null,"input":{"d":4}}"#),
            RawArgs::Malformed("\"arguments\" is not a JSON object".into())
        );
        assert_eq!(call(r#"{"name":"x"}"#), RawArgs::Json(json!({})));
    }

    #[test]
    fn malformed_json_is_reported_not_dropped() {
        let calls = extract(
            &default_re(),
            r#"<tool_call>{"name": "bash", "arguments": {</tool_call>"#,
        );
        assert_eq!(calls.len(), 1);
        assert!(matches!(&calls[0].args, RawArgs::Malformed(m) if m.contains("not valid JSON")));
    }

    #[test]
    fn name_and_bare_args() {
        let re = Regex::new(r"(?m)^\u{23fa} (?P<name>\w+)\((?P<args>.*)\)$")
            .unwrap()
            .into();
        let calls = extract(&re, "\u{23fa} Bash(ls -la)\n");
        assert_eq!(calls[0].name, "Bash");
        assert_eq!(calls[0].args, RawArgs::Bare("ls -la".into()));
    }
}
