//! JSON output of agent CLIs (`output = "json" | "jsonl"`): the JSON documents found in what a
//! CLI printed, and the field paths (`json_text = "result"`) that read the answer, the token
//! counts and the errors out of them.
//!
//! A path is a list of steps separated by dots: a key (`usage`), an array index (`0`, `-1` for
//! the last element), `*` (every element or value), and filters in brackets after a step, or
//! alone: `[type=result]` keeps an object whose `type` is `result`, `[result^=[API Error:]`
//! one whose `result` starts with `[API Error:`. A filter applied to an array keeps its
//! matching elements. A path can match many values: texts are joined, numbers added up.
//! Paths separated by `|` are read in turn, their values one after the other (gemini's
//! stream ends on an error in either of two kinds of line).

use std::str::FromStr;

use serde_json::Value;

use agent_loop_protocol::usage::Usage;
use agent_loop_protocol::UnknownValue;

/// How a CLI prints its reply (`output`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// Text, read with the regexes.
    #[default]
    Text,
    /// One JSON document (an object or an array).
    Json,
    /// One JSON object per line (an event stream).
    Jsonl,
}

impl FromStr for OutputFormat {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        match s {
            "text" => Ok(OutputFormat::Text),
            "json" => Ok(OutputFormat::Json),
            "jsonl" => Ok(OutputFormat::Jsonl),
            _ => Err(UnknownValue {
                what: "output",
                value: s.to_string(),
                expected: "the formats are text, json, jsonl",
            }),
        }
    }
}

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(i64),
    Any,
    Filter {
        key: String,
        prefix: bool,
        value: String,
    },
}

/// A compiled field path, such as `usage.input_tokens` or `[type=turn.completed].usage`.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    /// The paths separated by `|`, each a list of steps.
    alternatives: Vec<Vec<Step>>,
    text: String,
}

/// What is wrong with a field path as written (`path`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonPathError {
    #[error("the path is empty")]
    Empty,
    #[error("`{path}` has an empty step (two dots, or a dot at an end)")]
    EmptyStep { path: String },
    #[error("`{path}`: a `[` is not closed")]
    Unclosed { path: String },
    #[error("`{path}`: unexpected `{rest}` after a filter")]
    AfterFilter { path: String, rest: String },
    #[error("`{path}`: a filter is `[key=value]` or `[key^=prefix]`")]
    FilterForm { path: String },
    #[error("`{path}`: a filter needs a key before `=`")]
    FilterKey { path: String },
}

impl FromStr for JsonPath {
    type Err = JsonPathError;
    fn from_str(text: &str) -> Result<Self, JsonPathError> {
        let alternatives = split_outside_brackets(text, '|')?
            .into_iter()
            .map(|alternative| steps_of(alternative.trim(), text))
            .collect::<Result<_, _>>()?;
        Ok(JsonPath {
            alternatives,
            text: text.to_string(),
        })
    }
}

/// The steps of one path of `text` (its paths separated by `|`).
fn steps_of(alternative: &str, text: &str) -> Result<Vec<Step>, JsonPathError> {
    let path = || text.to_string();
    let mut steps = Vec::new();
    for segment in split_outside_brackets(alternative, '.')? {
        let (name, filters) = segment.split_at(segment.find('[').unwrap_or(segment.len()));
        match name {
            "" if filters.is_empty() => return Err(JsonPathError::EmptyStep { path: path() }),
            "" => {}
            "*" => steps.push(Step::Any),
            _ => steps.push(match name.parse::<i64>() {
                Ok(i) => Step::Index(i),
                Err(_) => Step::Key(name.to_string()),
            }),
        }
        let mut rest = filters;
        while let Some(inner) = rest.strip_prefix('[') {
            let end = inner
                .find(']')
                .ok_or_else(|| JsonPathError::Unclosed { path: path() })?;
            steps.push(filter(&inner[..end], text)?);
            rest = &inner[end + 1..];
        }
        if !rest.is_empty() {
            let rest = rest.to_string();
            return Err(JsonPathError::AfterFilter { path: path(), rest });
        }
    }
    Ok(steps)
}

/// `key=value` or `key^=value`.
fn filter(inner: &str, path: &str) -> Result<Step, JsonPathError> {
    let path = path.to_string();
    let Some((key, value)) = inner.split_once('=') else {
        return Err(JsonPathError::FilterForm { path });
    };
    let (key, prefix) = match key.strip_suffix('^') {
        Some(k) => (k, true),
        None => (key, false),
    };
    if key.is_empty() {
        return Err(JsonPathError::FilterKey { path });
    }
    Ok(Step::Filter {
        key: key.to_string(),
        prefix,
        value: value.to_string(),
    })
}

/// Splits at each `separator` that is not inside `[...]`.
fn split_outside_brackets(text: &str, separator: char) -> Result<Vec<&str>, JsonPathError> {
    if text.is_empty() {
        return Err(JsonPathError::Empty);
    }
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            ']' if depth == 1 => depth = 0,
            c if c == separator && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    Ok(parts)
}

impl JsonPath {
    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether a document written as `text` may hold a value the path reaches: one of its
    /// paths has no key, or `text` names that path's last key.
    fn may_reach(&self, text: &[u8]) -> bool {
        self.alternatives.iter().any(|steps| {
            let last_key = steps.iter().rev().find_map(|step| match step {
                Step::Key(key) => Some(key.as_str()),
                _ => None,
            });
            last_key.is_none_or(|key| {
                memchr::memmem::find(text, format!("\"{key}\"").as_bytes()).is_some()
            })
        })
    }

    /// Every value the path reaches in `root`, those of each of its paths in turn.
    pub fn select<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut found = Vec::new();
        for steps in &self.alternatives {
            let mut current = vec![root];
            for step in steps {
                current = current.into_iter().flat_map(|v| apply(step, v)).collect();
            }
            found.extend(current);
        }
        found
    }
}

fn apply<'a>(step: &Step, value: &'a Value) -> Vec<&'a Value> {
    match (step, value) {
        (Step::Key(k), Value::Object(map)) => map.get(k).into_iter().collect(),
        (Step::Index(i), Value::Array(items)) => {
            let index = if *i < 0 { items.len() as i64 + i } else { *i };
            usize::try_from(index)
                .ok()
                .and_then(|i| items.get(i))
                .into_iter()
                .collect()
        }
        (Step::Any, Value::Array(items)) => items.iter().collect(),
        (Step::Any, Value::Object(map)) => map.values().collect(),
        (Step::Filter { .. }, Value::Array(items)) => {
            items.iter().filter(|v| matches(step, v)).collect()
        }
        (Step::Filter { .. }, v) if matches(step, v) => vec![v],
        _ => Vec::new(),
    }
}

fn matches(step: &Step, value: &Value) -> bool {
    let Step::Filter {
        key,
        prefix,
        value: want,
    } = step
    else {
        return false;
    };
    let Some(found) = value.get(key) else {
        return false;
    };
    let found = match found {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if *prefix {
        found.starts_with(want.as_str())
    } else {
        found == *want
    }
}

/// The field paths of a backend with JSON output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonFields {
    pub text: Option<JsonPath>,
    pub input_tokens: Option<JsonPath>,
    pub output_tokens: Option<JsonPath>,
    pub total_tokens: Option<JsonPath>,
    /// Reasoning tokens (`json_thinking_tokens`), part of the output once `thinking_in_output`
    /// has been applied.
    pub thinking_tokens: Option<JsonPath>,
    /// Input tokens read from and written to the prompt cache (`json_cache_read_tokens`,
    /// `json_cache_write_tokens`), where the CLI counts them apart from its input.
    pub cache_read_tokens: Option<JsonPath>,
    pub cache_write_tokens: Option<JsonPath>,
    pub cost: Option<JsonPath>,
    pub error: Option<JsonPath>,
    /// The pieces of the answer a JSONL stream carries as it is written
    /// (`json_text_delta`), shown as they come.
    pub text_delta: Option<JsonPath>,
    /// Where the CLI lists the tools it offers its model (`json_offered_tools`).
    pub offered_tools: Option<JsonPath>,
}

impl JsonFields {
    /// The piece of the answer one line of a JSONL stream carries (`json_text_delta`): every
    /// string the path reaches, joined; `None` when the line is no JSON object or carries none.
    pub fn delta(&self, line: &str) -> Option<String> {
        let path = self.text_delta.as_ref()?;
        let line = line.trim();
        if !line.starts_with('{') {
            return None;
        }
        let doc: Value = serde_json::from_str(line).ok()?;
        let piece: String = path
            .select(&doc)
            .into_iter()
            .filter_map(Value::as_str)
            .collect();
        (!piece.is_empty()).then_some(piece)
    }

    /// Whether one line of a stream may hold some of the answer: the text path reaches a
    /// string in it, or it looks like JSON but cannot be read whole (a part of a line).
    pub fn may_hold_text(&self, line: &[u8]) -> bool {
        let Some(path) = &self.text else { return false };
        let line = line.trim_ascii_start();
        if !line.starts_with(b"{") {
            return false;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(doc) => path.select(&doc).iter().any(|v| v.is_string()),
            Err(_) => true,
        }
    }

    /// The answer: every string the text path reaches, joined with newlines; without a text
    /// path, the pieces `json_text_delta` reaches, joined as they came (a stream that never
    /// says its answer whole, Gemini CLI's).
    pub fn text(&self, docs: &[Value]) -> Option<String> {
        let (path, separator) = match (&self.text, &self.text_delta) {
            (Some(path), _) => (path, "\n"),
            (None, Some(pieces)) => (pieces, ""),
            (None, None) => return None,
        };
        let texts: Vec<&str> = docs
            .iter()
            .flat_map(|d| path.select(d))
            .filter_map(Value::as_str)
            .collect();
        (!texts.is_empty()).then(|| texts.join(separator))
    }

    /// The sum of the numbers `path` reaches, `None` if it reaches none.
    fn sum(path: Option<&JsonPath>, docs: &[Value]) -> Option<f64> {
        let numbers: Vec<f64> = docs
            .iter()
            .flat_map(|d| path.map(|p| p.select(d)).unwrap_or_default())
            .filter_map(Value::as_f64)
            .collect();
        (!numbers.is_empty()).then(|| numbers.iter().sum())
    }

    /// Token counts and cost, where the paths reach numbers.
    pub fn usage(&self, docs: &[Value]) -> Option<Usage> {
        let count = |p: &Option<JsonPath>| Self::sum(p.as_ref(), docs).map(|n| n.round() as u64);
        let usage = Usage {
            input: count(&self.input_tokens),
            output: count(&self.output_tokens),
            total: count(&self.total_tokens),
            thinking: count(&self.thinking_tokens),
            cache_read: count(&self.cache_read_tokens),
            cache_write: count(&self.cache_write_tokens),
            cost: Self::sum(self.cost.as_ref(), docs),
        };
        (usage != Usage::default()).then_some(usage)
    }

    /// The tools the CLI says it offers its model (`json_offered_tools`): each string the
    /// path reaches, and each element of an array it reaches (a name, or an object's `name`).
    /// Empty without the path, or where the list it reaches is empty.
    pub fn offered_tools(&self, docs: &[Value]) -> Vec<String> {
        let Some(path) = &self.offered_tools else {
            return Vec::new();
        };
        let name = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            Value::Object(map) => Some(match map.get("name") {
                Some(Value::String(name)) => name.clone(),
                _ => v.to_string(),
            }),
            other => Some(other.to_string()),
        };
        let mut names = Vec::new();
        for value in docs.iter().flat_map(|d| path.select(d)) {
            match value {
                Value::Array(items) => names.extend(items.iter().filter_map(name)),
                other => names.extend(name(other)),
            }
        }
        names
    }

    /// As [`Self::offered_tools`], for one line of a JSONL stream, read as it comes: a line
    /// that does not hold the path's last key (`"tools"`) is not parsed, so a stream's
    /// other lines, some megabytes long, cost a search and no more.
    pub fn offered_in_line(&self, line: &[u8]) -> Vec<String> {
        let Some(path) = &self.offered_tools else {
            return Vec::new();
        };
        let line = line.trim_ascii_start();
        if !line.starts_with(b"{") || !path.may_reach(line) {
            return Vec::new();
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(doc) => self.offered_tools(std::slice::from_ref(&doc)),
            Err(_) => Vec::new(),
        }
    }

    /// The CLI's error message, if the error path reaches a value that is set: a non-empty
    /// string, `true`, a number, or an object (its `message`, else the object itself).
    pub fn error(&self, docs: &[Value]) -> Option<String> {
        let path = self.error.as_ref()?;
        docs.iter()
            .flat_map(|d| path.select(d))
            .find_map(|v| match v {
                Value::String(s) if !s.trim().is_empty() => Some(inner_message(s)),
                Value::Bool(true) => Some(format!("`{}` is true", path.as_str())),
                Value::Number(n) => Some(format!("`{}` is {n}", path.as_str())),
                Value::Object(map) => Some(match map.get("message") {
                    Some(Value::String(m)) => inner_message(m),
                    _ => v.to_string(),
                }),
                _ => None,
            })
    }
}

/// How gemini's stream-json wraps an API's error body.
const API_ERROR: &str = "[API Error: ";

/// An error message that is itself an API's JSON error body passed on as text (gemini's
/// `{"error":{"message":"{\"error\":{...,\"message\":\"API key not valid...` ) gives the
/// innermost `error.message` or `message`, also where the body is wrapped as gemini's
/// stream-json does (`[API Error: {...}]` and, on a 429, a hint after it); any other text is
/// kept as it is.
fn inner_message(text: &str) -> String {
    let mut message = text.to_string();
    // Bounded: each level must parse as a smaller JSON object.
    for _ in 0..4 {
        let body = message.trim();
        let body = body.strip_prefix(API_ERROR).unwrap_or(body);
        // The first document alone: what follows a wrapped body is not JSON.
        let first = serde_json::Deserializer::from_str(body)
            .into_iter::<Value>()
            .next();
        let Some(Ok(Value::Object(map))) = first else {
            break;
        };
        let inner = map
            .get("error")
            .and_then(|e| e.get("message"))
            .or_else(|| map.get("message"));
        match inner {
            Some(Value::String(m)) if !m.trim().is_empty() => message = m.clone(),
            _ => break,
        }
    }
    message
}

/// Every JSON object or array in `text` that starts a line, in order. Lines around them (log
/// lines, stack traces, banners) are skipped, so a JSON error printed after a stack trace is
/// found too.
pub fn documents(text: &str) -> Vec<Value> {
    documents_at(text).into_iter().map(|(_, doc)| doc).collect()
}

/// [`documents`], each with where in `text` it was read from.
pub fn documents_at(text: &str) -> Vec<(std::ops::Range<usize>, Value)> {
    let mut docs = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let start = pos + (text[pos..line_end].len() - text[pos..line_end].trim_start().len());
        if text[start..].starts_with(['{', '[']) {
            let mut stream =
                serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
            if let Some(Ok(value)) = stream.next() {
                let end = start + stream.byte_offset();
                docs.push((start..end, value));
                pos = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
                continue;
            }
        }
        pos = line_end;
    }
    docs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(s: &str) -> JsonPath {
        s.parse().unwrap()
    }

    #[test]
    fn an_error_message_holding_a_json_error_body_gives_the_inner_message() {
        let body = json!({"error": {"code": 400, "message": "key not valid"}}).to_string();
        assert_eq!(inner_message(&body), "key not valid");
        let twice = json!({"message": body}).to_string();
        assert_eq!(inner_message(&twice), "key not valid");
        // Gemini CLI's stream-json: wrapped, and on a 429 a hint after it.
        let wrapped = format!("[API Error: {body}]\nPlease wait and try again later.");
        assert_eq!(inner_message(&wrapped), "key not valid");
        let qwen = "[API Error: 401 Incorrect API key provided.]";
        for kept in ["plain text", "{not json", "{\"code\": 1}", qwen] {
            assert_eq!(inner_message(kept), kept);
        }
    }

    #[test]
    fn keys_indexes_wildcards_and_filters() {
        let v = json!({"a": [{"t": "x", "n": 1}, {"t": "y", "n": 2}, {"t": "y", "n": 3}]});
        assert_eq!(path("a.0.n").select(&v), vec![&json!(1)]);
        assert_eq!(path("a.-1.n").select(&v), vec![&json!(3)]);
        assert_eq!(path("a[t=y].n").select(&v), vec![&json!(2), &json!(3)]);
        assert_eq!(path("a.*.t").select(&v).len(), 3);
        assert_eq!(path("a[t^=x].n").select(&v), vec![&json!(1)]);
        assert!(path("[a=b].a").select(&v).is_empty());
        let e = json!({"is_error": true, "result": "bad key"});
        assert_eq!(
            path("[is_error=true].result").select(&e),
            vec![&json!("bad key")]
        );
        let dotted = json!({"type": "turn.completed", "usage": {"n": 5}});
        assert_eq!(
            path("[type=turn.completed].usage.n").select(&dotted),
            vec![&json!(5)]
        );
        // Paths separated by `|`, each in turn; a `|` inside a filter is its value's.
        let either = "a[t=y].n | a.0.t | [x=a|b].x";
        assert_eq!(
            path(either).select(&v),
            vec![&json!(2), &json!(3), &json!("x")]
        );
        assert_eq!(
            path(either).select(&json!({"x": "a|b"})),
            vec![&json!("a|b")]
        );
    }

    #[test]
    fn bad_paths_say_why() {
        let why = |path: &str| path.parse::<JsonPath>().unwrap_err().to_string();
        assert_eq!(
            why("a..b"),
            "`a..b` has an empty step (two dots, or a dot at an end)"
        );
        assert_eq!(why("a[b=c"), "`a[b=c`: a `[` is not closed");
        assert!(why("a[bc]").contains("[key=value]"));
        assert_eq!("".parse::<JsonPath>(), Err(JsonPathError::Empty));
    }

    #[test]
    fn documents_are_found_between_other_lines() {
        let text = "Error: boom\n    at x (/a.js:1)\n{\n  \"error\": {\"message\": \"m\"}\n}\n{\"b\":1}\nnot json {\n";
        let docs = documents(text);
        assert_eq!(
            docs,
            vec![json!({"error": {"message": "m"}}), json!({"b": 1})]
        );
        let fields = JsonFields {
            error: Some(path("error")),
            ..Default::default()
        };
        assert_eq!(fields.error(&docs).as_deref(), Some("m"));
    }

    #[test]
    fn offered_tools_are_names_or_objects_and_a_line_without_the_key_is_not_parsed() {
        let fields = JsonFields {
            offered_tools: Some(path("[type=system][subtype=init].tools")),
            ..Default::default()
        };
        let init = json!({"type": "system", "subtype": "init",
                          "tools": ["exec", {"name": "tool_call"}, {"id": 1}]});
        let offered = ["exec", "tool_call", "{\"id\":1}"];
        assert_eq!(fields.offered_tools(std::slice::from_ref(&init)), offered);
        // qwen's `-o json`: one array, the init record in it.
        let array = json!([init, {"type": "result", "result": "r"}]);
        assert_eq!(fields.offered_tools(&[array]), offered);
        let line = format!("  {init}\n");
        assert_eq!(fields.offered_in_line(line.as_bytes()), offered);
        let empty = json!({"type": "system", "subtype": "init", "tools": []}).to_string();
        assert!(fields.offered_in_line(empty.as_bytes()).is_empty());
        // Not the key's line, not JSON, a line cut short: nothing, and no error.
        let other = json!({"type": "system", "subtype": "init", "tool": ["exec"]}).to_string();
        assert!(fields.offered_in_line(other.as_bytes()).is_empty());
        assert!(fields.offered_in_line(&line.as_bytes()[..20]).is_empty());
        assert!(JsonFields::default()
            .offered_in_line(line.as_bytes())
            .is_empty());
        assert!(path("a.tools").may_reach(b"{\"tools\":1}"));
        assert!(!path("a.tools").may_reach(b"{\"tool\":1}"));
        assert!(path("a.tools | [x=y]").may_reach(b"{}"));
    }
}
