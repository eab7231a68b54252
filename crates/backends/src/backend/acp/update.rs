//! What an ACP agent reports while it works (`session/update`), turned into agent-loop's
//! events: the answer's text as it streams, thinking (shown where thinking is shown), the
//! agent's own tool calls as tool activity, its plan, its slash commands and mode, and the
//! token counts it puts in `_meta`. The updates are read as JSON, not as the SDK's types, so
//! that an update type newer than the SDK is passed over (and logged) instead of failing the
//! whole message.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::backend::Ran;
use crate::event::{Event, OutputStream, PlanEntry};
use crate::parse::{Pattern, Usage};

/// The most of an answer's text and tool calls one turn keeps: the agent is untrusted, and
/// what it sends in a turn is memory agent-loop holds until the turn ends.
const GATHERED_CAP: usize = 16 * 1024 * 1024;

/// What one turn has gathered from the updates.
#[derive(Default)]
pub struct Gathered {
    pub text: String,
    /// Bytes kept of the tool calls' updates.
    call_bytes: usize,
    /// Set when the agent sent more than [`GATHERED_CAP`]: why the turn must end.
    pub over: Option<String>,
    /// The newest token counts an update carried.
    pub usage: Option<Usage>,
    /// The agent's tool calls in the order they began, each as its updates left it.
    calls: Vec<Value>,
    /// The tool calls announced bare (a name, no input, no files), as claude-agent-acp and
    /// opencode do: the update that first says more is shown too.
    bare: HashSet<String>,
    /// The agent's own slash commands (`available_commands_update`): names without `/`,
    /// and what each does.
    pub commands: Option<Vec<(String, String)>>,
    /// The mode the agent said it switched to (`current_mode_update`).
    pub mode: Option<String>,
    /// A message that this matches whole is a notice, not answer text (`notice_regex`).
    pub notice: Option<Pattern>,
    /// The tool calls it asked permission for (`session/request_permission`).
    asked: HashSet<String>,
}

impl Gathered {
    /// Gathers a turn whose message chunks that `notice` matches whole are notices.
    pub fn new(notice: Option<Pattern>) -> Self {
        Gathered {
            notice,
            ..Gathered::default()
        }
    }

    /// Reads one `session/update`'s parameters, reporting through `emit`.
    pub fn update(&mut self, backend: &str, params: &Value, emit: &mut dyn FnMut(Event)) {
        let update = &params["update"];
        if let Some(usage) = usage_in(&update["_meta"]).or_else(|| usage_in(&params["_meta"])) {
            self.add(usage);
        }
        let line = |stream, line: String| Event::BackendOutput {
            backend: backend.to_string(),
            stream,
            line,
        };
        let kind = update["sessionUpdate"].as_str().unwrap_or("");
        match kind {
            "agent_message_chunk" => {
                if let Some(text) = text_of(&update["content"]) {
                    if self.is_notice(text) {
                        return emit(line(OutputStream::Screen, format!("({})", text.trim())));
                    }
                    if self.text.len() + self.call_bytes + text.len() > GATHERED_CAP {
                        self.over = Some(over_cap("answer"));
                        return;
                    }
                    self.text.push_str(text);
                    emit(Event::TextDelta {
                        backend: backend.to_string(),
                        text: text.to_string(),
                    });
                }
            }
            "agent_thought_chunk" => {
                if let Some(text) = text_of(&update["content"]) {
                    emit(Event::ThinkingDelta {
                        backend: backend.to_string(),
                        text: text.to_string(),
                    });
                }
            }
            "tool_call" => {
                let id = update["toolCallId"].as_str().unwrap_or("").to_string();
                let no_input = update["rawInput"].as_object().is_none_or(|i| i.is_empty());
                if no_input && paths(update).is_empty() {
                    self.bare.insert(id.clone());
                }
                let call = self.call(update);
                emit(Event::OwnTool {
                    backend: backend.to_string(),
                    activity: activity(&title(call), call),
                    call_id: Some(id),
                });
            }
            "tool_call_update" => {
                let id = update["toolCallId"].as_str().unwrap_or("").to_string();
                let known = self
                    .calls
                    .iter()
                    .find(|c| c["toolCallId"] == update["toolCallId"])
                    .map(title);
                let call = self.call(update);
                let title = title(call);
                let status = call["status"].as_str().unwrap_or("").to_string();
                // The start was reported; a failure, a change with a diff, or what a bare
                // start left out (a new title, the files) are news.
                let told = (known.as_ref() != Some(&title) || !paths(update).is_empty())
                    && self.bare.remove(&id);
                if status == "failed" || has_diff(update) || told {
                    let mut activity = activity(&title, update);
                    if matches!(status.as_str(), "failed" | "completed") {
                        activity.push_str(&format!(" ({status})"));
                    }
                    emit(Event::OwnTool {
                        backend: backend.to_string(),
                        activity,
                        call_id: Some(id),
                    });
                }
            }
            "plan" => {
                let field = |e: &Value, key: &str| e[key].as_str().unwrap_or("").to_string();
                let entries = update["entries"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|e| PlanEntry {
                        content: field(e, "content"),
                        priority: field(e, "priority"),
                        status: field(e, "status"),
                    })
                    .collect();
                emit(Event::Plan {
                    backend: backend.to_string(),
                    entries,
                });
            }
            "available_commands_update" => {
                let names: Vec<(String, String)> = update["availableCommands"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| {
                        let name = c["name"].as_str()?.trim_start_matches('/').to_string();
                        Some((name, c["description"].as_str().unwrap_or("").to_string()))
                    })
                    .collect();
                self.commands = Some(names);
            }
            "current_mode_update" => {
                let mode = update["currentModeId"].as_str().unwrap_or("?");
                emit(line(OutputStream::Screen, format!("(agent mode: {mode})")));
                self.mode = Some(mode.to_string());
            }
            "usage_update" => {
                if let Some(cost) = update["cost"]
                    .as_object()
                    .filter(|c| c.get("currency").and_then(Value::as_str) == Some("USD"))
                    .and_then(|c| c.get("amount")?.as_f64())
                {
                    self.usage.get_or_insert_with(Usage::default).cost = Some(cost);
                }
            }
            // The user's own message, replayed by `session/load`; session details.
            "user_message_chunk" | "session_info_update" | "config_option_update" => {}
            other => emit(line(
                OutputStream::Stderr,
                format!("(ignored a session update of unknown type `{other}`)"),
            )),
        }
    }

    /// Takes the turn's token counts (a prompt's result holds them: gemini's, claude-agent-acp's)
    /// over those added up from its updates, keeping the cost a `usage_update` reported
    /// (claude-agent-acp sends it there).
    pub fn counts(&mut self, mut usage: Usage) {
        usage.cost = usage.cost.or(self.usage.as_ref().and_then(|u| u.cost));
        self.usage = Some(usage);
    }

    /// Adds one model request's counts, as an update's `_meta` reports them (qwen sends each
    /// request's on a chunk of its own): a turn of two requests is their sum.
    fn add(&mut self, usage: Usage) {
        let Some(sum) = self.usage.as_mut() else {
            self.usage = Some(usage);
            return;
        };
        let plus = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        sum.input = plus(sum.input, usage.input);
        sum.output = plus(sum.output, usage.output);
        sum.total = plus(sum.total, usage.total);
        sum.cache_read = plus(sum.cache_read, usage.cache_read);
        sum.cache_write = plus(sum.cache_write, usage.cache_write);
        sum.thinking = plus(sum.thinking, usage.thinking);
    }

    /// The tool call an update is about, with the update's fields laid over what was known
    /// of it (ACP's `tool_call_update` carries only what changed).
    fn call(&mut self, update: &Value) -> &Value {
        let size = update.to_string().len();
        if self.text.len() + self.call_bytes + size > GATHERED_CAP {
            self.over = Some(over_cap("tool calls"));
            return &Value::Null;
        }
        self.call_bytes += size;
        let id = &update["toolCallId"];
        let at = match self.calls.iter().position(|c| c["toolCallId"] == *id) {
            Some(at) => at,
            None => {
                self.calls.push(json!({}));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[at];
        for (key, value) in update.as_object().into_iter().flatten() {
            if key != "sessionUpdate" && !value.is_null() {
                call[key] = value.clone();
            }
        }
        call
    }

    /// Notes a permission question about a tool call.
    pub fn asked(&mut self, params: &Value) {
        if let Some(id) = params["toolCall"]["toolCallId"].as_str() {
            self.asked.insert(id.to_string());
        }
    }

    /// The agent's tool calls that changed files (an edit, a deletion, a move) and completed
    /// without a permission question: what its own settings allowed (a rule it keeps, a
    /// config that asks nothing), each as its title.
    pub fn unasked_changes(&self) -> Vec<String> {
        self.calls
            .iter()
            .filter(|c| matches!(c["kind"].as_str(), Some("edit" | "delete" | "move")))
            .filter(|c| c["status"] == "completed")
            .filter(|c| {
                !c["toolCallId"]
                    .as_str()
                    .is_some_and(|id| self.asked.contains(id))
            })
            .map(title)
            .collect()
    }

    /// The agent's tool calls of this turn, as the conversation records them.
    pub fn ran(&self) -> Vec<Ran> {
        self.calls.iter().map(ran).collect()
    }

    /// Whether a message is a notice: codex-acp sends its warnings (an unknown model's
    /// metadata, a long thread) as message chunks of their own, each one whole.
    fn is_notice(&self, text: &str) -> bool {
        let text = text.trim();
        self.notice.as_ref().is_some_and(|notice| {
            !text.is_empty() && notice.find_all(text).any(|m| m == (0..text.len()))
        })
    }

    /// Reads an update that came before the prompt: its text is a note, not the answer.
    pub fn before_prompt(&mut self, backend: &str, params: &Value, emit: &mut dyn FnMut(Event)) {
        let update = &params["update"];
        if update["sessionUpdate"] != "agent_message_chunk" {
            return self.update(backend, params, emit);
        }
        if let Some(text) = text_of(&update["content"]).filter(|t| !t.trim().is_empty()) {
            emit(Event::BackendOutput {
                backend: backend.to_string(),
                stream: OutputStream::Screen,
                line: format!("({})", text.trim()),
            });
        }
    }
}

/// Whether an update is part of a loaded session's history (`session/load` replays it).
pub fn replays(params: &Value) -> bool {
    matches!(
        params["update"]["sessionUpdate"].as_str(),
        Some(
            "user_message_chunk"
                | "agent_message_chunk"
                | "agent_thought_chunk"
                | "tool_call"
                | "tool_call_update"
                | "plan"
        )
    )
}

/// A tool call as the conversation records it: what the agent reported, in words.
fn ran(call: &Value) -> Ran {
    let kind = call["kind"].as_str().unwrap_or("other");
    let status = call["status"].as_str().unwrap_or("pending");
    let mut args = json!({ "title": title(call), "kind": kind });
    let paths = paths(call);
    if !paths.is_empty() {
        args["locations"] = json!(paths);
    }
    if let Some(input) = call.get("rawInput").filter(|v| !v.is_null()) {
        args["raw_input"] = input.clone();
    }
    let mut output = format!("status: {status}");
    for block in call["content"].as_array().into_iter().flatten() {
        output.push('\n');
        match block["type"].as_str() {
            Some("content") => match text_of(&block["content"]) {
                Some(text) => output.push_str(text),
                None => output.push_str("(content that is not text)"),
            },
            Some("diff") => {
                let old = block["oldText"].as_str().map_or(0, |t| t.lines().count());
                let new = block["newText"].as_str().unwrap_or("");
                output.push_str(&format!(
                    "changed {}: {old} lines became {}:\n{new}",
                    block["path"].as_str().unwrap_or("?"),
                    new.lines().count()
                ));
            }
            Some("terminal") => output.push_str("(the output of a terminal agent-loop ran)"),
            _ => output.push_str(&block.to_string()),
        }
    }
    if call["content"].as_array().is_none_or(|c| c.is_empty()) {
        if let Some(raw) = call.get("rawOutput").filter(|v| !v.is_null()) {
            output.push('\n');
            output.push_str(&match raw.as_str() {
                Some(text) => text.to_string(),
                None => raw.to_string(),
            });
        }
    }
    Ran {
        name: format!("acp_{kind}"),
        args,
        ok: status != "failed",
        output,
    }
}

/// A content block's text; `None` for images, audio and resources.
fn text_of(content: &Value) -> Option<&str> {
    (content["type"] == "text").then(|| content["text"].as_str())?
}

fn title(update: &Value) -> String {
    match update["title"].as_str() {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => update["kind"].as_str().unwrap_or("tool").to_string(),
    }
}

/// `Shell: ls`, with the files it touches.
fn activity(title: &str, update: &Value) -> String {
    let paths = paths(update);
    if paths.is_empty() {
        title.to_string()
    } else {
        format!("{title} ({})", paths.join(", "))
    }
}

/// Every file a tool call names: its locations and the paths of its diffs.
pub fn paths(call: &Value) -> Vec<String> {
    let locations = call["locations"].as_array().into_iter().flatten();
    let diffs = call["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "diff");
    let mut paths: Vec<String> = Vec::new();
    for path in locations.chain(diffs).filter_map(|v| v["path"].as_str()) {
        if !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    paths
}

fn has_diff(update: &Value) -> bool {
    update["content"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "diff"))
}

/// Token counts in the shapes agents report them: ACP's own `usage` (camelCase), qwen's
/// `_meta.usage`, gemini's `_meta.quota.token_count` (snake_case).
pub fn usage_in(value: &Value) -> Option<Usage> {
    let shaped = [
        &value["usage"],
        &value["quota"]["token_count"],
        &value["_meta"]["usage"],
        &value["_meta"]["quota"]["token_count"],
    ];
    let found = shaped.into_iter().find(|v| v.is_object())?;
    let count = |names: &[&str]| names.iter().find_map(|n| found[*n].as_u64());
    let usage = Usage {
        input: count(&["inputTokens", "input_tokens", "promptTokens"]),
        output: count(&["outputTokens", "output_tokens", "completionTokens"]),
        total: count(&["totalTokens", "total_tokens"]),
        cache_read: count(&["cachedReadTokens", "cached_read_tokens"]),
        cache_write: count(&["cachedWriteTokens", "cached_write_tokens"]),
        thinking: count(&["thoughtTokens", "thought_tokens"]),
        cost: None,
    };
    (usage.input.is_some() || usage.output.is_some() || usage.total.is_some()).then_some(usage)
}

/// Why a turn ended whose agent sent more than the cap.
fn over_cap(what: &str) -> String {
    format!(
        "its {what} in this turn went past {} MiB, the most agent-loop keeps of one turn",
        GATHERED_CAP / (1024 * 1024)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_is_read_in_every_agents_shape() {
        let gemini = json!({"stopReason": "end_turn", "_meta": {"quota": {"token_count": {"input_tokens": 12, "output_tokens": 3}}}});
        let u = usage_in(&gemini).unwrap();
        assert_eq!((u.input, u.output), (Some(12), Some(3)));
        let qwen = json!({"usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}});
        let u = usage_in(&qwen).unwrap();
        assert_eq!((u.input, u.output, u.total), (Some(5), Some(7), Some(12)));
        assert!(usage_in(&json!({"stopReason": "end_turn"})).is_none());
    }

    #[test]
    fn a_chunk_the_notice_regex_matches_whole_is_a_notice() {
        let notice = Pattern::compile("^Heads up: .*$", false).unwrap();
        let mut gathered = Gathered::new(Some(notice));
        let mut lines = Vec::new();
        let mut emit = |e: Event| {
            if let Event::BackendOutput { line, .. } = e {
                lines.push(line)
            }
        };
        for text in [
            "Heads up: long thread.\n",
            "He",
            "ads up: ",
            "x",
            "Heads up",
        ] {
            let update = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}});
            gathered.update("a", &json!({"sessionId": "s", "update": update}), &mut emit);
        }
        // Only the whole chunk: a model's deltas that spell it out stay the answer.
        assert_eq!(lines, ["(Heads up: long thread.)"]);
        assert_eq!(gathered.text, "Heads up: xHeads up");
    }

    #[test]
    fn updates_become_events_and_unknown_ones_are_noted() {
        let mut gathered = Gathered::default();
        let mut events = Vec::new();
        let mut emit = |e: Event| events.push(e);
        for update in [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "lo"}, "_meta": {"usage": {"inputTokens": 1, "outputTokens": 2}}}),
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Shell: ls", "kind": "execute"}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed"}),
            json!({"sessionUpdate": "something_new"}),
        ] {
            gathered.update("a", &json!({"sessionId": "s", "update": update}), &mut emit);
        }
        assert_eq!(gathered.text, "Hello");
        assert_eq!(gathered.usage.unwrap().output, Some(2));
        let shown: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                Event::OwnTool { activity, .. } => Some(activity.clone()),
                Event::BackendOutput { line, .. } => Some(line.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            shown,
            [
                "Shell: ls",
                "Shell: ls (failed)",
                "(ignored a session update of unknown type `something_new`)"
            ]
        );
    }

    #[test]
    fn each_requests_counts_in_updates_add_up_and_a_results_replace_them() {
        // qwen sends each model request's counts on an empty chunk of its own.
        let mut gathered = Gathered::default();
        let mut emit = |_: Event| {};
        for _ in 0..2 {
            let update = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}, "_meta": {"usage": {"inputTokens": 1611, "outputTokens": 4, "totalTokens": 1615, "cachedReadTokens": 0}, "durationMs": 64}});
            gathered.update("a", &json!({"sessionId": "s", "update": update}), &mut emit);
        }
        let u = gathered.usage.unwrap();
        assert_eq!(
            (u.input, u.output, u.total),
            (Some(3222), Some(8), Some(3230))
        );
        assert_eq!((u.cache_read, u.thinking), (Some(0), None));
        // A prompt's result has the turn's own.
        gathered
            .counts(usage_in(&json!({"usage": {"inputTokens": 5, "outputTokens": 1}})).unwrap());
        assert_eq!(gathered.usage.unwrap().input, Some(5));
    }
}
