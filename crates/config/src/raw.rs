//! The `backends.toml` schema as written, every key optional so that a later file can
//! override single keys of an earlier one. Unknown keys are errors, so a typo is reported
//! instead of silently ignored.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::mcp::RawMcp;
use super::source::{Lines, Located, Overlay, Source};
use super::tools::RawTool;
use super::ConfigError;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    /// The backend used when neither `--backend` nor the `backend` setting names one; it
    /// keeps its line, for the message when it names no backend.
    pub default_backend: Option<Located>,
    /// Backends tried in order when none is named (the built-in file sets it).
    pub auto_order: Option<Vec<String>>,
    /// Each name keeps where it is first written, for messages.
    #[serde(default)]
    pub backends: BTreeMap<Spanned<String>, RawBackend>,
    /// `[mcp.servers.NAME]`: MCP servers whose tools join the built-in ones.
    #[serde(default)]
    pub mcp: RawMcp,
    /// `[tools.NAME]`: custom command tools, and `confirm` of built-in ones.
    #[serde(default)]
    pub tools: BTreeMap<Spanned<String>, RawTool>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a backend's table of keys (`[backends.NAME]`, then `command = ...` or `type = ...`)"
)]
pub struct RawBackend {
    #[serde(rename = "type")]
    pub kind: Option<Located>,
    pub description: Option<String>,
    pub command: Option<Located>,
    pub args: Option<Vec<String>>,
    pub loop_args: Option<Vec<String>>,
    pub model_args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub cwd: Option<String>,
    pub timeout_s: Option<u64>,
    pub progress_s: Option<u64>,
    pub max_output_bytes: Option<u64>,
    pub model: Option<String>,
    pub tool_call_regex: Option<Located>,
    pub tool_call_format: Option<Located>,
    pub tokens_regex: Option<Located>,
    pub skip_lines: Option<Vec<Located>>,
    /// `text` (the default), `json` or `jsonl`; see `parse::json`.
    pub output: Option<Located>,
    pub json_text: Option<Located>,
    pub json_input_tokens: Option<Located>,
    pub json_output_tokens: Option<Located>,
    pub json_total_tokens: Option<Located>,
    pub json_thinking_tokens: Option<Located>,
    /// Input tokens read from and written to the provider's prompt cache, which some CLIs
    /// count apart from their input (Claude Code's `cache_read_input_tokens`).
    pub json_cache_read_tokens: Option<Located>,
    pub json_cache_write_tokens: Option<Located>,
    /// Whether the output count includes the thinking tokens (true, the OpenAI convention) or
    /// counts them apart (gemini's `candidates`), when they are added to it.
    pub thinking_in_output: Option<bool>,
    pub json_cost: Option<Located>,
    pub json_error: Option<Located>,
    /// With `output = "jsonl"`: the answer's pieces in a line, shown as the CLI prints them.
    pub json_text_delta: Option<Located>,
    /// Where the CLI lists the tools it offers its model (Claude Code's and Qwen Code's init
    /// record): in `loop` mode a tool listed there stops the turn (`backend::offered`).
    pub json_offered_tools: Option<Located>,
    pub error_regex: Option<Located>,
    /// `loop` (the default: agent-loop runs the tools) or `own` (the CLI runs its own).
    pub tools: Option<Located>,
    pub tool_activity_regex: Option<Located>,
    /// `terminal` (the default: what a terminal would show) or `strip`; see `parse::Render`.
    pub render: Option<Located>,
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
    // HTTP backends (`type = "anthropic" | "openai" | "ollama"`), see `config::http`.
    pub base_url: Option<Located>,
    pub api_key_env: Option<Located>,
    /// An environment variable that, when set, replaces `base_url`.
    pub base_url_env: Option<Located>,
    /// What to say, instead of retrying, when nothing listens at the URL (a local server).
    pub unreachable: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub stream: Option<bool>,
    pub images: Option<bool>,
    /// What tool-call ids the API takes, see `config::http::ToolCallIds`.
    pub tool_call_ids: Option<Located>,
    pub connect_timeout_s: Option<u64>,
    pub retries: Option<u32>,
    pub retry_base_ms: Option<u64>,
    pub retry_max_s: Option<u64>,
    /// The proactive rate limiter (`backend::ratelimit`), CLI and HTTP backends.
    pub requests_per_minute: Option<u64>,
    pub tokens_per_minute: Option<u64>,
    /// CLI backends: a failed run whose output matches is tried again (`retries` times).
    pub retry_regex: Option<Located>,
    pub context: Option<Located>,
    pub context_format: Option<Located>,
    pub max_context_tokens: Option<u64>,
    pub tool_result_max_chars: Option<u64>,
    // Terminal agents (`type = "pty"`), see `config::pty`.
    pub size: Option<Located>,
    pub term: Option<String>,
    pub ready_regex: Option<Located>,
    pub start_regex: Option<Located>,
    pub idle_ms: Option<u64>,
    pub submit: Option<String>,
    pub submit_delay_ms: Option<u64>,
    pub bracketed_paste: Option<bool>,
    pub done_regex: Option<Located>,
    pub done_when_ready: Option<bool>,
    pub answer_regex: Option<Located>,
    pub update_regex: Option<Located>,
    pub busy_regex: Option<Located>,
    pub approval_regex: Option<Located>,
    pub approval_clips: Option<bool>,
    pub approval_end_regex: Option<Located>,
    pub approve_keys: Option<String>,
    pub deny_keys: Option<String>,
    pub exit_keys: Option<String>,
    pub exit_by_sigterm: Option<bool>,
    // ACP agents (`type = "acp"`), see `config::acp`.
    pub auto_mode: Option<String>,
    pub ask_mode: Option<String>,
    pub notice_regex: Option<Located>,
    /// `[backends.NAME.guard]`: what keeps the agent asking whatever its own settings allow.
    pub guard: Option<RawGuard>,
}

impl Overlay for RawBackend {
    fn overlay(&mut self, other: RawBackend) {
        let kind = |b: &RawBackend| {
            b.kind
                .as_ref()
                .map_or("cli", |k| k.value.as_str())
                .to_string()
        };
        if other.kind.is_some() && kind(&other) != kind(self) {
            *self = other;
            return;
        }
        macro_rules! take {
            ($($field:ident),*) => { $( if other.$field.is_some() { self.$field = other.$field; } )* };
        }
        take!(
            kind,
            description,
            command,
            args,
            loop_args,
            model_args,
            env,
            cwd,
            timeout_s,
            progress_s,
            max_output_bytes,
            model,
            tool_call_regex,
            tool_call_format,
            tokens_regex,
            skip_lines,
            output,
            json_text,
            json_input_tokens,
            json_output_tokens,
            json_total_tokens,
            json_thinking_tokens,
            json_cache_read_tokens,
            json_cache_write_tokens,
            thinking_in_output,
            json_cost,
            json_error,
            json_text_delta,
            json_offered_tools,
            error_regex,
            tools,
            tool_activity_regex,
            render,
            base_url,
            api_key_env,
            base_url_env,
            unreachable,
            max_tokens,
            temperature,
            stream,
            images,
            tool_call_ids,
            connect_timeout_s,
            retries,
            retry_base_ms,
            retry_max_s,
            retry_regex,
            requests_per_minute,
            tokens_per_minute,
            price_input_per_mtok,
            price_output_per_mtok,
            context,
            context_format,
            max_context_tokens,
            tool_result_max_chars,
            size,
            term,
            ready_regex,
            start_regex,
            idle_ms,
            submit,
            submit_delay_ms,
            bracketed_paste,
            done_regex,
            done_when_ready,
            answer_regex,
            update_regex,
            busy_regex,
            approval_regex,
            approval_clips,
            approval_end_regex,
            approve_keys,
            deny_keys,
            exit_keys,
            exit_by_sigterm,
            auto_mode,
            ask_mode,
            notice_regex,
            guard
        );
    }
}

impl RawBackend {
    /// The keys set here that only CLI backends read.
    pub fn cli_only_keys(&self) -> Vec<&'static str> {
        set_keys(
            &[
                ("command", self.command.is_some()),
                ("args", self.args.is_some()),
                ("loop_args", self.loop_args.is_some()),
                ("model_args", self.model_args.is_some()),
                ("env", self.env.is_some()),
                ("cwd", self.cwd.is_some()),
                ("progress_s", self.progress_s.is_some()),
                ("max_output_bytes", self.max_output_bytes.is_some()),
                ("tool_call_regex", self.tool_call_regex.is_some()),
                ("tool_call_format", self.tool_call_format.is_some()),
                ("tokens_regex", self.tokens_regex.is_some()),
                ("skip_lines", self.skip_lines.is_some()),
                ("output", self.output.is_some()),
                ("error_regex", self.error_regex.is_some()),
                ("retry_regex", self.retry_regex.is_some()),
                ("tools", self.tools.is_some()),
                ("tool_activity_regex", self.tool_activity_regex.is_some()),
                ("render", self.render.is_some()),
                ("thinking_in_output", self.thinking_in_output.is_some()),
            ]
            .into_iter()
            .chain(self.json_keys().into_iter().map(|(k, v)| (k, v.is_some())))
            .collect::<Vec<_>>(),
        )
    }

    /// The `json_*` field paths, by key.
    pub fn json_keys(&self) -> [(&'static str, Option<&Located>); 11] {
        [
            ("json_text", self.json_text.as_ref()),
            ("json_input_tokens", self.json_input_tokens.as_ref()),
            ("json_output_tokens", self.json_output_tokens.as_ref()),
            ("json_total_tokens", self.json_total_tokens.as_ref()),
            ("json_thinking_tokens", self.json_thinking_tokens.as_ref()),
            (
                "json_cache_read_tokens",
                self.json_cache_read_tokens.as_ref(),
            ),
            (
                "json_cache_write_tokens",
                self.json_cache_write_tokens.as_ref(),
            ),
            ("json_cost", self.json_cost.as_ref()),
            ("json_error", self.json_error.as_ref()),
            ("json_text_delta", self.json_text_delta.as_ref()),
            ("json_offered_tools", self.json_offered_tools.as_ref()),
        ]
    }

    /// The keys set here that only HTTP backends read.
    pub fn http_only_keys(&self) -> Vec<&'static str> {
        set_keys(&[
            ("base_url", self.base_url.is_some()),
            ("api_key_env", self.api_key_env.is_some()),
            ("base_url_env", self.base_url_env.is_some()),
            ("unreachable", self.unreachable.is_some()),
            ("max_tokens", self.max_tokens.is_some()),
            ("temperature", self.temperature.is_some()),
            ("stream", self.stream.is_some()),
            ("images", self.images.is_some()),
            ("tool_call_ids", self.tool_call_ids.is_some()),
            ("connect_timeout_s", self.connect_timeout_s.is_some()),
        ])
    }

    fn locate(&mut self, lines: &Lines) {
        for located in [
            &mut self.kind,
            &mut self.command,
            &mut self.tool_call_regex,
            &mut self.tokens_regex,
            &mut self.base_url,
            &mut self.api_key_env,
            &mut self.base_url_env,
            &mut self.tool_call_ids,
            &mut self.context,
            &mut self.context_format,
            &mut self.output,
            &mut self.json_text,
            &mut self.json_input_tokens,
            &mut self.json_output_tokens,
            &mut self.json_total_tokens,
            &mut self.tool_call_format,
            &mut self.json_thinking_tokens,
            &mut self.json_cache_read_tokens,
            &mut self.json_cache_write_tokens,
            &mut self.json_cost,
            &mut self.json_error,
            &mut self.json_text_delta,
            &mut self.json_offered_tools,
            &mut self.error_regex,
            &mut self.retry_regex,
            &mut self.tools,
            &mut self.tool_activity_regex,
            &mut self.render,
            &mut self.size,
            &mut self.ready_regex,
            &mut self.start_regex,
            &mut self.answer_regex,
            &mut self.update_regex,
            &mut self.done_regex,
            &mut self.busy_regex,
            &mut self.approval_regex,
            &mut self.approval_end_regex,
        ]
        .into_iter()
        .flatten()
        .chain(self.skip_lines.iter_mut().flatten())
        {
            located.locate(lines);
        }
    }
}

/// The names of the keys marked as set.
fn set_keys(keys: &[(&'static str, bool)]) -> Vec<&'static str> {
    keys.iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| *k)
        .collect()
}

/// Parses one file; a syntax or schema error names the file, the line and the backend, tool
/// or MCP server it is in.
pub fn parse(source: &Source, lines: &Lines) -> Result<RawFile, ConfigError> {
    let mut file: RawFile = toml::from_str(&source.text).map_err(|e| syntax(source, lines, e))?;
    if let Some(default) = file.default_backend.as_mut() {
        default.locate(lines);
    }
    for backend in file.backends.values_mut() {
        backend.locate(lines);
    }
    for server in file.mcp.servers.values_mut() {
        server.locate(lines);
    }
    for tool in file.tools.values_mut() {
        tool.locate(lines);
    }
    Ok(file)
}

/// Where a syntax or schema error is, and what it is. A value of the wrong type names its
/// key too (a backend's whole-number key says from what number), and `key =` with no value
/// says so, as config.toml's does.
fn syntax(source: &Source, lines: &Lines, e: toml::de::Error) -> ConfigError {
    let Some(line) = e.span().map(|s| lines.line(s.start)) else {
        return ConfigError::syntax(source.name.clone(), None, e);
    };
    let mut place = format!("{}:{line}", source.name);
    let table = table_at(&source.text, line);
    match &table {
        Some((BACKENDS, b)) => place.push_str(&format!(": backend `{b}`")),
        Some((TOOLS, t)) => place.push_str(&format!(": tool `{t}`")),
        Some((_, s)) => place.push_str(&format!(": MCP server `{s}`")),
        None => {}
    }
    if let Some(key) = super::source::key_without_value(&source.text, line) {
        return ConfigError::Syntax {
            message: format!("{place}: key `{key}`: {}", super::source::NO_VALUE),
            source: e,
        };
    }
    let key = key_at(&source.text, line);
    let wrong_type = ["invalid type: ", "invalid value: "]
        .iter()
        .any(|p| e.message().starts_with(p));
    // A tool's line always names its key; a backend's or server's when the value is of the
    // wrong type (a line of `[backends]` itself names a backend, and says so already).
    let tool = matches!(table, Some((TOOLS, _)));
    if let Some(key) = key
        .as_ref()
        .filter(|_| tool || (wrong_type && table.is_some()))
    {
        place.push_str(&format!(": key `{key}`"));
    }
    // The least whole number is a backend's or a tool's key's: an MCP server's are read
    // from 0.
    let own_key = matches!(table, Some((BACKENDS | TOOLS, _)));
    ConfigError::syntax(place, key.as_deref().filter(|_| own_key), e)
}

/// The prefix of backend tables.
pub const BACKENDS: &str = "backends.";
/// The prefix of MCP server tables.
pub const MCP_SERVERS: &str = "mcp.servers.";
/// The prefix of tool tables.
pub const TOOLS: &str = "tools.";

/// The key written on line `line` (`key = value`), for naming which value is wrong.
fn key_at(text: &str, line: usize) -> Option<String> {
    let (key, _) = text.lines().nth(line.checked_sub(1)?)?.split_once('=')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

/// The `[backends.NAME]`, `[mcp.servers.NAME]` or `[tools.NAME]` table that line `line` belongs to, as
/// (prefix, name): for naming where a syntax error is, which the parser cannot tell.
fn table_at(text: &str, line: usize) -> Option<(&'static str, String)> {
    text.lines()
        .take(line)
        .filter_map(|l| {
            let inner = l.trim().strip_prefix('[')?.trim_start_matches('[');
            let inner = inner.split(']').next()?.trim();
            Some(
                [BACKENDS, MCP_SERVERS, TOOLS]
                    .into_iter()
                    .find_map(|prefix| {
                        let rest = inner.strip_prefix(prefix)?;
                        let name = rest.split('.').next().unwrap_or(rest);
                        Some((prefix, name.trim().trim_matches('"').to_string()))
                    }),
            )
        })
        .last()
        .flatten()
}

/// `[backends.NAME.guard]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGuard {
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub file: Option<String>,
    pub file_name: Option<String>,
    pub replaces: Option<String>,
    pub meta: Option<toml::Table>,
    pub refuse: Option<Vec<String>>,
    pub refuse_keys: Option<BTreeMap<String, Vec<String>>>,
    pub keep_env: Option<Vec<String>>,
    pub keep_env_from: Option<Vec<String>>,
    pub per_name: Option<RawPerName>,
}

/// `per_name` of a guard as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPerName {
    pub files: Vec<String>,
    pub table: String,
    pub args: Vec<String>,
    pub entry: Option<toml::Table>,
    pub when: Option<BTreeMap<String, toml::Table>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::line_of;

    #[test]
    fn lines_agree_with_counting_newlines() {
        let source = Source {
            name: "f.toml".into(),
            text: "a = 1\r\n\n[backends.x]\ncommand = \"x\"\n[[mcp.servers.\"s\".more]]\nend"
                .into(),
        };
        let lines = Lines::of(&source);
        for pos in 0..=source.text.len() + 2 {
            assert_eq!(lines.line(pos), line_of(&source.text, pos), "at {pos}");
        }
        assert_eq!(lines.name(), "f.toml");
        assert_eq!(table_at(&source.text, 4), Some((BACKENDS, "x".into())));
        assert_eq!(table_at(&source.text, 6), Some((MCP_SERVERS, "s".into())));
        assert_eq!(table_at(&source.text, 1), None);
    }
}
