//! CLI backends (`type = "cli"`, the default): an agent CLI run once per model step. The
//! checked definition, and how an entry of `backends.toml` becomes one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::http::WireFormat;
use super::keys::{
    context_settings, located_pattern, parse_located, prices, DEFAULT_PROGRESS_S, DEFAULT_TIMEOUT_S,
};
use super::raw::RawBackend;
use super::source::Located;
use super::ConfigError;
use crate::context::{ContextSettings, PromptStyle};
use crate::parse::{JsonFields, JsonPath, OutputFormat, Parsers, Pattern, Prices, Render};

const DEFAULT_TOOL_CALL_REGEX: &str = r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>";
const DEFAULT_TOOL_CALL_FORMAT: &str = "<tool_call>{json}</tool_call>";
const DEFAULT_MAX_OUTPUT_BYTES: u64 = 4 * 1024 * 1024;

/// How a CLI backend receives its prompt, decided by the placeholders in its `args`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptVia {
    /// `{prompt}` in `args`: the prompt is one argument.
    Arg,
    /// `{prompt_file}` in `args`: the prompt is written to a temporary file named there.
    File,
    /// Neither: the prompt is written to the child's stdin.
    Stdin,
}

/// A fully resolved CLI backend.
#[derive(Debug, Clone)]
pub struct BackendDef {
    pub name: String,
    pub description: String,
    /// Where it was (last) defined, for messages: `file:line`.
    pub defined_at: String,
    pub command: String,
    pub args: Vec<String>,
    /// Added after `args` when agent-loop runs the tools (`tools = "loop"`): they turn the
    /// CLI's own tools off. See `config::cli_args`.
    pub loop_args: Vec<String>,
    /// In `loop` mode, what keeps its own tools from running whatever its own settings
    /// allow (`[backends.NAME.guard]`, without `meta`): agent-loop runs the tools there.
    pub guard: Option<super::Guard>,
    /// Added last when a model is set (`model`, `--model`): the CLI's model flag.
    pub model_args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    pub timeout: Duration,
    pub progress_every: Duration,
    pub max_output_bytes: usize,
    pub model: Option<String>,
    pub prompt_via: PromptVia,
    pub style: PromptStyle,
    pub parsers: Parsers,
    /// How its output becomes text (`render`).
    pub render: Render,
    /// Prices per million tokens, to compute a cost the backend does not report.
    pub prices: Option<Prices>,
    /// `context`, `max_context_tokens`, `tool_result_max_chars` (`context_format` is in
    /// `style`).
    pub context: ContextSettings,
    /// A failed run (non-zero exit, or `json_error` set) whose stdout or stderr matches this
    /// is tried again, as `retry` says; without it, a failed run is not retried.
    pub retry_regex: Option<Pattern>,
    pub retry: super::RetrySettings,
    /// The proactive rate limiter's limits (`backend::ratelimit`).
    pub requests_per_minute: Option<u64>,
    pub tokens_per_minute: Option<u64>,
}

/// Checks one merged CLI backend entry.
pub(super) fn resolve(
    name: &str,
    mut raw: RawBackend,
    defined_at: String,
) -> Result<BackendDef, ConfigError> {
    let bad = |key: &str, why: String| ConfigError::key(&defined_at, name, key, why);
    let prices = prices(&raw);
    let context = context_settings(&raw, name, &bad)?;
    super::http::check_timeouts(&raw, &bad)?;
    super::http::check_rates(&raw, &bad)?;
    if raw.max_output_bytes == Some(0) {
        // Every turn would fail on its first byte.
        return Err(bad("max_output_bytes", "must be at least 1".into()));
    }
    let format = parse_located(raw.context_format.as_ref(), name, "context_format")?;
    let output: OutputFormat =
        parse_located(raw.output.as_ref(), name, "output")?.unwrap_or_default();
    let json = json_fields(&raw, name, output, &defined_at)?;
    let render = parse_located(raw.render.as_ref(), name, "render")?.unwrap_or_default();
    let own_tools = match raw.tools.as_ref().map(|t| (t, t.value.as_str())) {
        None | Some((_, "loop")) => false,
        Some((_, "own")) => true,
        Some((t, other)) => {
            return Err(ConfigError::key(
                t.at(),
                name,
                "tools",
                format!("unknown mode `{other}`; use `loop` (agent-loop runs its tools) or `own` (the CLI runs its own)"),
            ))
        }
    };
    let error = raw
        .error_regex
        .as_ref()
        .map(|r| pattern(Some(r), "", name, "error_regex"))
        .transpose()?;
    let retry_regex = raw
        .retry_regex
        .as_ref()
        .map(|r| pattern(Some(r), "", name, "retry_regex"))
        .transpose()?;
    let retry = super::http::retry_settings(&raw);
    let tool_activity = raw
        .tool_activity_regex
        .as_ref()
        .map(|r| pattern(Some(r), "", name, "tool_activity_regex"))
        .transpose()?;
    if let Some(key) = raw.http_only_keys().first() {
        return Err(bad(
            key,
            format!(
                "only HTTP backends read it; set `type` to one of {} to call an API",
                WireFormat::ALL.map(WireFormat::type_name).join(", ")
            ),
        ));
    }
    let Some(command) = raw.command else {
        return Err(ConfigError::NoCommand {
            at: defined_at,
            backend: name.to_string(),
        });
    };
    let guard = match raw.guard.take() {
        Some(g) => Some(super::Guard::resolve(g, name, &defined_at, false)?),
        None => None,
    };
    let args = raw.args.unwrap_or_default();
    let (loop_args, model_args) = (
        raw.loop_args.unwrap_or_default(),
        raw.model_args.unwrap_or_default(),
    );
    let has = |p: &str| {
        args.iter()
            .chain(&loop_args)
            .chain(&model_args)
            .any(|a| a.contains(p))
    };
    let prompt_via = match (has("{prompt}"), has("{prompt_file}")) {
        (true, true) => {
            return Err(bad(
                "args",
                "uses both {prompt} and {prompt_file}; pick one".into(),
            ))
        }
        (true, false) => PromptVia::Arg,
        (false, true) => PromptVia::File,
        (false, false) => PromptVia::Stdin,
    };
    let (tool_call, groups) = checked(
        raw.tool_call_regex.as_ref(),
        DEFAULT_TOOL_CALL_REGEX,
        name,
        "tool_call_regex",
    )?;
    if groups.is_some_and(|groups| groups.iter().all(|g| g != "json" && g != "name")) {
        let at = raw
            .tool_call_regex
            .as_ref()
            .map_or(defined_at.clone(), |r| r.at());
        return Err(ConfigError::key(
            at,
            name,
            "tool_call_regex",
            "needs a named group `json`, or `name` (and optional `args`)",
        ));
    }
    let tokens = match &raw.tokens_regex {
        Some(r) => {
            let (re, groups) = checked(Some(r), "", name, "tokens_regex")?;
            if groups.is_some_and(|groups| {
                groups
                    .iter()
                    .all(|g| !matches!(g.as_str(), "input" | "output" | "total"))
            }) {
                return Err(ConfigError::key(
                    r.at(),
                    name,
                    "tokens_regex",
                    "needs a named group `input`, `output` or `total`",
                ));
            }
            Some(re)
        }
        None => None,
    };
    let skip_lines = raw
        .skip_lines
        .iter()
        .flatten()
        .map(|r| pattern(Some(r), "", name, "skip_lines"))
        .collect::<Result<Vec<_>, _>>()?;
    let tool_call_format = match raw.tool_call_format {
        // The key's own line, as a regex key's: the table's may be far above it.
        Some(format) if !format.value.contains("{json}") && !format.value.contains("{name}") => {
            return Err(ConfigError::key(
                format.at(),
                name,
                "tool_call_format",
                "must contain {json}, or {name} and {args}",
            ));
        }
        Some(format) => format.value,
        None => DEFAULT_TOOL_CALL_FORMAT.into(),
    };
    let style = PromptStyle {
        tool_call_format,
        format: format.unwrap_or_default(),
        own_tools,
    };
    if let (Some(at), None, false) = (&raw.json_text_delta, style.call_opening(), own_tools) {
        return Err(ConfigError::key(
            at.at(),
            name,
            "json_text_delta",
            "needs a `tool_call_format` that starts with text (`<tool_call>{json}</tool_call>`): a call's markup is held back from where that text appears",
        ));
    }
    Ok(BackendDef {
        name: name.to_string(),
        description: raw.description.unwrap_or_default(),
        defined_at,
        command: command.value,
        args,
        loop_args,
        model_args,
        guard,
        env: raw.env.unwrap_or_default(),
        cwd: raw.cwd.map(PathBuf::from),
        timeout: Duration::from_secs(raw.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1)),
        progress_every: Duration::from_secs(raw.progress_s.unwrap_or(DEFAULT_PROGRESS_S).max(1)),
        max_output_bytes: raw.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES) as usize,
        model: raw.model,
        prompt_via,
        style,
        parsers: Parsers {
            tool_call,
            tokens,
            skip_lines,
            output,
            json: Box::new(json),
            error,
            tool_activity,
            own_tools,
            thinking_in_output: raw.thinking_in_output.unwrap_or(true),
        },
        render,
        prices,
        context,
        retry_regex,
        retry,
        requests_per_minute: raw.requests_per_minute,
        tokens_per_minute: raw.tokens_per_minute,
    })
}

/// The `json_*` field paths, compiled: each needs `output = "json"` or `"jsonl"`, and JSON
/// output needs `json_text` or `json_text_delta`.
fn json_fields(
    raw: &RawBackend,
    name: &str,
    output: OutputFormat,
    defined_at: &str,
) -> Result<JsonFields, ConfigError> {
    let keys = raw.json_keys();
    if output == OutputFormat::Text {
        if let Some((key, Some(at))) = keys.iter().find(|(_, v)| v.is_some()) {
            let outputs = match *key {
                "json_text_delta" => "`output = \"jsonl\"`",
                _ => "`output = \"json\"` or `\"jsonl\"`",
            };
            return Err(ConfigError::key(
                at.at(),
                name,
                key,
                format!("only read with {outputs}; set `output` too"),
            ));
        }
        return Ok(JsonFields::default());
    }
    if output == OutputFormat::Json {
        if let Some(at) = &raw.json_text_delta {
            return Err(ConfigError::key(
                at.at(),
                name,
                "json_text_delta",
                "only read with `output = \"jsonl\"`: one document is only read once it has ended",
            ));
        }
    }
    let [text, input, output_tokens, total, thinking, cache_read, cache_write, cost, error, text_delta, offered_tools] =
        keys.map(|(key, value)| {
            value
                .map(|v| {
                    v.value.parse::<JsonPath>().map_err(|e| {
                        ConfigError::key(v.at(), name, key, format!("bad field path: {e}"))
                    })
                })
                .transpose()
        });
    let fields = JsonFields {
        text: text?,
        input_tokens: input?,
        output_tokens: output_tokens?,
        total_tokens: total?,
        thinking_tokens: thinking?,
        cache_read_tokens: cache_read?,
        cache_write_tokens: cache_write?,
        cost: cost?,
        error: error?,
        text_delta: text_delta?,
        offered_tools: offered_tools?,
    };
    // Without `json_text`, the pieces of `json_text_delta` are the answer.
    if fields.text.is_none() && fields.text_delta.is_none() {
        let at = raw
            .output
            .as_ref()
            .map_or(defined_at.to_string(), |o| o.at());
        return Err(ConfigError::key(
            at,
            name,
            "output",
            "JSON output needs `json_text`, the field path of the answer (for example `json_text = \"result\"`), or with `output = \"jsonl\"` `json_text_delta`, that of its pieces",
        ));
    }
    Ok(fields)
}

/// A regex key. The line-oriented keys (`tokens_regex`, `skip_lines`, ...) are searched over
/// the whole output at once, so `^` and `$` match at every line's start and end. The built-in
/// file's are compiled when first used (a unit test compiles them all); the user's now, so
/// a mistake is reported before anything runs.
fn pattern(
    value: Option<&Located>,
    default: &str,
    backend: &str,
    key: &str,
) -> Result<Pattern, ConfigError> {
    Ok(checked(value, default, backend, key)?.0)
}

/// As `pattern`, with the names of the groups of a user's pattern (`None` for a built-in one).
fn checked(
    value: Option<&Located>,
    default: &str,
    backend: &str,
    key: &str,
) -> Result<(Pattern, Option<Vec<String>>), ConfigError> {
    let per_line = key != "tool_call_regex";
    match value {
        None => Ok((Pattern::lazy(default, per_line), None)),
        Some(located) => located_pattern(located, per_line, backend, key),
    }
}
