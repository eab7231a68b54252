//! HTTP backend entries of `backends.toml` (`type = "anthropic" | "openai" | "ollama"`): the
//! wire format, where requests go, which environment variable holds the API key, the model
//! and its limits, timeouts and retries. Checked here; requests are built in `backend::http`.

use std::time::Duration;

use super::keys::DEFAULT_TIMEOUT_S;
use super::raw::RawBackend;
use super::source::Located;
use super::ConfigError;

const DEFAULT_CONNECT_TIMEOUT_S: u64 = 10;
const DEFAULT_RETRIES: u32 = 2;
const DEFAULT_RETRY_BASE_MS: u64 = 1000;
const DEFAULT_RETRY_MAX_S: u64 = 60;
/// The Anthropic API requires `max_tokens`; the others fall back to the server's default.
const DEFAULT_ANTHROPIC_MAX_TOKENS: u32 = 8192;

/// The API an HTTP backend speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// Anthropic Messages (`POST {base_url}/v1/messages`).
    Anthropic,
    /// OpenAI Chat Completions and the servers compatible with it
    /// (`POST {base_url}/chat/completions`).
    OpenAi,
    /// Ollama's native chat API (`POST {base_url}/api/chat`).
    Ollama,
}

impl WireFormat {
    /// Every `type` an entry can have besides `cli`.
    pub const ALL: [WireFormat; 3] = [
        WireFormat::Anthropic,
        WireFormat::OpenAi,
        WireFormat::Ollama,
    ];

    /// The format named by a `type` value, if it is one.
    pub fn from_type(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.type_name() == value)
    }

    /// The `type` value in `backends.toml`.
    pub fn type_name(self) -> &'static str {
        match self {
            WireFormat::Anthropic => "anthropic",
            WireFormat::OpenAi => "openai",
            WireFormat::Ollama => "ollama",
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            WireFormat::Anthropic => "https://api.anthropic.com",
            WireFormat::OpenAi => "https://api.openai.com/v1",
            WireFormat::Ollama => "http://localhost:11434",
        }
    }
}

/// What tool-call ids an API takes (`tool_call_ids`). The conversation keeps each call's id
/// as its first backend gave it; a request to another API carries ids made to fit this rule
/// (`backend::http::ids`), while the ids that already fit are sent as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallIds {
    /// Any id, sent as kept (`any`): OpenAI and most compatible servers, some of which
    /// (Kimi's) want their own ids back exactly, repeats included.
    Any,
    /// Letters, digits, `_` and `-`, unique over the request (`anthropic`): the Anthropic
    /// Messages API.
    Anthropic,
    /// Exactly 9 letters or digits, unique over the request (`alnum9`): Mistral's API.
    Alnum9,
}

impl ToolCallIds {
    const ALL: [(&'static str, ToolCallIds); 3] = [
        ("any", ToolCallIds::Any),
        ("anthropic", ToolCallIds::Anthropic),
        ("alnum9", ToolCallIds::Alnum9),
    ];

    fn parse(value: &Located, backend: &str) -> Result<Self, ConfigError> {
        Self::ALL
            .into_iter()
            .find(|(name, _)| *name == value.value)
            .map(|(_, ids)| ids)
            .ok_or_else(|| {
                ConfigError::key(
                    value.at(),
                    backend,
                    "tool_call_ids",
                    format!(
                        "unknown rule `{}`; the rules are any, anthropic (letters, digits, _ and -) and alnum9 (9 letters or digits)",
                        value.value
                    ),
                )
            })
    }
}

/// When and how long to wait before trying a failed request again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrySettings {
    /// Tries after the first (`retries`).
    pub retries: u32,
    /// The first backoff; each later one doubles (`retry_base_ms`).
    pub base: Duration,
    /// No single wait is longer, whatever the server asks (`retry_max_s`).
    pub max_wait: Duration,
}

/// A timeout of 0 would end every call at once (it used to become 1 s, silently); there is
/// no "no limit": a backend that never answers must not hold a turn forever.
pub(super) fn check_timeouts(
    raw: &RawBackend,
    bad: &dyn Fn(&str, String) -> ConfigError,
) -> Result<(), ConfigError> {
    for (key, value) in [
        ("timeout_s", raw.timeout_s),
        ("connect_timeout_s", raw.connect_timeout_s),
        ("progress_s", raw.progress_s),
    ] {
        if value == Some(0) {
            return Err(bad(
                key,
                "must be at least 1 (seconds); for a backend that may take very long, set a large value such as 86400".into(),
            ));
        }
    }
    Ok(())
}

/// `requests_per_minute` and `tokens_per_minute`: no limit is written by leaving them out.
pub(super) fn check_rates(
    raw: &RawBackend,
    bad: &dyn Fn(&str, String) -> ConfigError,
) -> Result<(), ConfigError> {
    for (key, value) in [
        ("requests_per_minute", raw.requests_per_minute),
        ("tokens_per_minute", raw.tokens_per_minute),
    ] {
        if value == Some(0) {
            return Err(bad(
                key,
                "must be at least 1 (leave it out for no limit)".into(),
            ));
        }
    }
    Ok(())
}

/// `retries`, `retry_base_ms` and `retry_max_s`, defaults filled in (CLI backends too).
pub(super) fn retry_settings(raw: &RawBackend) -> RetrySettings {
    RetrySettings {
        retries: raw.retries.unwrap_or(DEFAULT_RETRIES),
        base: Duration::from_millis(raw.retry_base_ms.unwrap_or(DEFAULT_RETRY_BASE_MS)),
        max_wait: Duration::from_secs(raw.retry_max_s.unwrap_or(DEFAULT_RETRY_MAX_S)),
    }
}

/// `url` as shown to the user: a user name and password in it (`OLLAMA_HOST` set to
/// `http://user:pass@host:11434`) become `***`, as a key is never shown either.
pub fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_string(),
    }
}

/// A fully resolved HTTP backend.
#[derive(Debug, Clone)]
pub struct HttpDef {
    pub name: String,
    pub description: String,
    /// Where it was (last) defined, for messages: `file:line`.
    pub defined_at: String,
    pub format: WireFormat,
    /// Without a trailing slash.
    pub base_url: String,
    /// The environment variable holding the API key; `None`: no key is sent.
    pub api_key_env: Option<String>,
    /// `unreachable`: the message when the connection is refused, `{url}` replaced by the
    /// base URL; such a refusal then ends the call at once instead of being retried.
    pub unreachable: Option<String>,
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
    /// Sent only when set.
    pub temperature: Option<f64>,
    pub stream: bool,
    /// Whether the model takes images (`images`): a prompt with images to one that does not
    /// is refused before anything is sent.
    pub images: bool,
    /// What tool-call ids the API takes.
    pub tool_call_ids: ToolCallIds,
    pub connect_timeout: Duration,
    /// For the whole request, streamed body included.
    pub timeout: Duration,
    pub retry: RetrySettings,
    /// The proactive rate limiter's limits (`backend::ratelimit`).
    pub requests_per_minute: Option<u64>,
    pub tokens_per_minute: Option<u64>,
    /// Prices per million tokens, to compute the cost of each call.
    pub prices: Option<crate::parse::Prices>,
    /// How much of the conversation each request carries.
    pub context: crate::context::ContextSettings,
    /// Whether the provider's count-tokens endpoint is asked (the `count_tokens` setting,
    /// applied when the backend is built).
    pub count_tokens: crate::context::CountTokens,
}

/// Checks an HTTP entry; every mistake names the file, the line, the backend and the key.
pub(super) fn resolve(
    name: &str,
    raw: RawBackend,
    defined_at: String,
    format: WireFormat,
) -> Result<HttpDef, ConfigError> {
    let bad = |key: &str, why: String| ConfigError::key(&defined_at, name, key, why);
    if let Some(key) = raw.cli_only_keys().first() {
        return Err(bad(
            key,
            format!(
                "only `type = \"cli\"` backends read it, and this one has type `{}`",
                format.type_name()
            ),
        ));
    }
    let base_url = match &raw.base_url {
        Some(url) => {
            let value = url.value.trim().trim_end_matches('/');
            if !(value.starts_with("http://") || value.starts_with("https://")) {
                return Err(ConfigError::key(
                    url.at(),
                    name,
                    "base_url",
                    format!("`{}` is not an http:// or https:// URL", url.value),
                ));
            }
            value.to_string()
        }
        None => format.default_base_url().to_string(),
    };
    // The provider's own variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, OLLAMA_HOST), when
    // set, points the backend at a gateway, a proxy or a local server.
    let base_url = match raw
        .base_url_env
        .as_ref()
        .and_then(|var| std::env::var(&var.value).ok())
    {
        Some(url) if !url.trim().is_empty() => {
            let url = url.trim().trim_end_matches('/');
            // OLLAMA_HOST is often written without a scheme (`127.0.0.1:11434`).
            if url.contains("://") {
                url.to_string()
            } else {
                format!("http://{url}")
            }
        }
        _ => base_url,
    };
    let api_key_env = match &raw.api_key_env {
        Some(var) if var.value.is_empty() || var.value.contains(['=', '\0']) => {
            return Err(ConfigError::key(
                var.at(),
                name,
                "api_key_env",
                format!("`{}` is not an environment variable name", var.value),
            ))
        }
        Some(var) => Some(var.value.clone()),
        None => None,
    };
    if let Some(t) = raw.temperature.filter(|t| !t.is_finite() || *t < 0.0) {
        return Err(bad(
            "temperature",
            format!("{t} is not a temperature (a number from 0)"),
        ));
    }
    if raw.max_tokens == Some(0) {
        return Err(bad("max_tokens", "must be at least 1".into()));
    }
    let max_tokens = raw
        .max_tokens
        .or((format == WireFormat::Anthropic).then_some(DEFAULT_ANTHROPIC_MAX_TOKENS));
    let tool_call_ids = match &raw.tool_call_ids {
        Some(value) => ToolCallIds::parse(value, name)?,
        None if format == WireFormat::Anthropic => ToolCallIds::Anthropic,
        None => ToolCallIds::Any,
    };
    let prices = super::keys::prices(&raw);
    let context = super::keys::context_settings(&raw, name, &bad)?;
    check_timeouts(&raw, &bad)?;
    let retry = retry_settings(&raw);
    check_rates(&raw, &bad)?;
    Ok(HttpDef {
        requests_per_minute: raw.requests_per_minute,
        tokens_per_minute: raw.tokens_per_minute,
        name: name.to_string(),
        description: raw.description.unwrap_or_default(),
        defined_at,
        format,
        base_url,
        api_key_env,
        unreachable: raw.unreachable,
        model: raw.model,
        max_tokens,
        temperature: raw.temperature,
        stream: raw.stream.unwrap_or(true),
        // Every current Claude model takes images; of the OpenAI-compatible and Ollama
        // models only some do, so those say so in their entry.
        images: raw.images.unwrap_or(format == WireFormat::Anthropic),
        tool_call_ids,
        connect_timeout: Duration::from_secs(
            raw.connect_timeout_s
                .unwrap_or(DEFAULT_CONNECT_TIMEOUT_S)
                .max(1),
        ),
        timeout: Duration::from_secs(raw.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1)),
        retry,
        prices,
        context,
        count_tokens: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Config, Definition, Source};
    use super::*;

    fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_sources(&[
            Source::builtin(),
            Source {
                name: "my.toml".into(),
                text: text.into(),
            },
        ])
    }

    fn http(config: &Config, name: &str) -> HttpDef {
        match config.backend(name).unwrap() {
            Definition::Http(def) => def.clone(),
            Definition::Cli(_) | Definition::Pty(_) | Definition::Acp(_) => {
                panic!("{name} is not an HTTP backend")
            }
        }
    }

    #[test]
    fn presets_name_their_key_variables() {
        let config = load("").unwrap();
        for (name, format, var) in [
            (
                "claude-api",
                WireFormat::Anthropic,
                Some("ANTHROPIC_API_KEY"),
            ),
            ("openai", WireFormat::OpenAi, Some("OPENAI_API_KEY")),
            ("openrouter", WireFormat::OpenAi, Some("OPENROUTER_API_KEY")),
            ("deepseek", WireFormat::OpenAi, Some("DEEPSEEK_API_KEY")),
            ("mistral", WireFormat::OpenAi, Some("MISTRAL_API_KEY")),
            ("ollama", WireFormat::Ollama, None),
        ] {
            let def = http(&config, name);
            assert_eq!(def.format, format, "{name}");
            assert_eq!(def.api_key_env.as_deref(), var, "{name}");
            assert!(def.model.is_some() && def.max_tokens.is_some(), "{name}");
            assert!(def.stream && def.retry.retries == 2, "{name}");
            assert!(def.temperature.is_none(), "{name}");
        }
    }

    #[test]
    fn keys_override_defaults() {
        let config = load(
            "[backends.local]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1/\"\n\
             model = \"m\"\nstream = false\nretries = 5\nretry_base_ms = 10\nretry_max_s = 3\n\
             connect_timeout_s = 2\ntimeout_s = 30\ntemperature = 0.5\n",
        )
        .unwrap();
        let def = http(&config, "local");
        assert_eq!(def.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(def.api_key_env, None);
        assert_eq!(def.max_tokens, None);
        assert!(!def.stream);
        assert_eq!(
            def.retry,
            RetrySettings {
                retries: 5,
                base: Duration::from_millis(10),
                max_wait: Duration::from_secs(3)
            }
        );
        assert_eq!(def.connect_timeout, Duration::from_secs(2));
        assert_eq!(def.timeout, Duration::from_secs(30));
        assert_eq!(def.temperature, Some(0.5));
        assert_eq!(def.tool_call_ids, ToolCallIds::Any);
        assert_eq!(
            http(&config, "claude-api").tool_call_ids,
            ToolCallIds::Anthropic
        );
        assert_eq!(http(&config, "mistral").tool_call_ids, ToolCallIds::Alnum9);
        let config = load("[backends.m]\ntype = \"openai\"\ntool_call_ids = \"alnum9\"\n").unwrap();
        assert_eq!(http(&config, "m").tool_call_ids, ToolCallIds::Alnum9);
        let err =
            load("[backends.m]\ntype = \"openai\"\n\ntool_call_ids = \"mistral\"\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("my.toml:4: backend `m`: key `tool_call_ids`: unknown rule `mistral`"),
            "{err}"
        );
    }

    #[test]
    fn unknown_type_lists_the_types() {
        let err = load("[backends.x]\ntype = \"gemini\"\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "my.toml:2: backend `x`: key `type`: unknown type `gemini`; the types are cli, pty, acp, anthropic, openai, ollama"
        );
    }

    #[test]
    fn keys_of_the_other_type_are_errors() {
        let err =
            load("[backends.x]\ntype = \"ollama\"\nmodel = \"m\"\ncommand = \"ls\"\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "my.toml:1: backend `x`: key `command`: only `type = \"cli\"` backends read it, and this one has type `ollama`"
        );
        let err = load("[backends.y]\ncommand = \"ls\"\napi_key_env = \"K\"\n").unwrap_err();
        assert!(
            err.to_string().starts_with(
                "my.toml:1: backend `y`: key `api_key_env`: only HTTP backends read it"
            ),
            "{}",
            err.to_string()
        );
    }

    #[test]
    fn bad_values_name_the_line() {
        let err =
            load("[backends.x]\ntype = \"openai\"\n\nbase_url = \"localhost:8080\"\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "my.toml:4: backend `x`: key `base_url`: `localhost:8080` is not an http:// or https:// URL"
        );
        let err = load("[backends.x]\ntype = \"openai\"\ntemperature = -1.0\n").unwrap_err();
        assert!(err.to_string().contains("key `temperature`"), "{err}");
    }

    #[test]
    fn a_new_type_replaces_the_entry() {
        // The preset's HTTP keys do not linger when a user turns `openai` into a CLI.
        let config = load("[backends.openai]\ntype = \"cli\"\ncommand = \"codex\"\n").unwrap();
        assert!(
            matches!(config.backend("openai").unwrap(), Definition::Cli(d) if d.command == "codex")
        );
        // Without `type`, single keys are overridden as usual.
        let config = load("[backends.openai]\nmodel = \"gpt-x\"\n").unwrap();
        assert_eq!(http(&config, "openai").model.as_deref(), Some("gpt-x"));
    }
}
