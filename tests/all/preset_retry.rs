//! The presets' `retry_regex` against their recorded errors: the recorded failure (a wrong
//! key) is not retried, and the same recording with a rate-limit or server-error status in
//! its place is.

use agent_loop_config::{Config, Definition, Source};
use agent_loop_parse::strip_ansi;

use crate::common::{fixture, Workspace};

/// (preset, recording without extension, what the recording says, its retryable variant)
const CASES: [(&str, &str, &str, &str); 13] = [
    (
        "claude",
        "claude/error-json",
        "\"api_error_status\":401",
        "\"api_error_status\":529",
    ),
    (
        "codex",
        "codex/error-json",
        "unexpected status 401 Unauthorized",
        "unexpected status 429 Too Many Requests",
    ),
    (
        "codex",
        "codex/error",
        "unexpected status 401 Unauthorized",
        "unexpected status 503 Service Unavailable",
    ),
    (
        "gemini",
        "gemini/error-json",
        "\"code\":400",
        "\"code\":429",
    ),
    ("gemini", "gemini/error", "\"code\":400", "\"code\":503"),
    // Escaped inside its stream's result line (stderr says it unescaped, left as it is).
    (
        "gemini",
        "gemini/error-json",
        "\\\"code\\\":400",
        "\\\"code\\\":500",
    ),
    (
        "qwen",
        "qwen/error-json",
        "API Error: 401",
        "API Error: 429",
    ),
    ("qwen", "qwen/error", "API Error: 401", "API Error: 500"),
    (
        "opencode",
        "opencode/error-json",
        "\"statusCode\":401",
        "\"statusCode\":429",
    ),
    (
        "aider",
        "aider/error",
        "litellm.AuthenticationError",
        "litellm.RateLimitError",
    ),
    ("llm", "llm/error", "Error code: 401", "Error code: 429"),
    (
        "coro",
        "coro/scen-http401",
        "500 - invalid_request_error",
        "429 - rate_limit_exceeded",
    ),
    (
        "claude",
        "claude/error-json",
        "\"api_error_status\":401",
        "\"api_error_status\":500",
    ),
];

fn read(rec: &str, exts: [&str; 2]) -> String {
    let bytes = exts
        .iter()
        .find_map(|e| std::fs::read(fixture(&format!("{rec}.{e}"))).ok())
        .unwrap_or_default();
    strip_ansi(&bytes)
}

#[test]
fn presets_retry_rate_limits_and_server_errors_but_not_their_recorded_auth_errors() {
    let config = Config::from_sources(&[Source::builtin()]).expect("built-in file loads");
    for (preset, rec, said, retryable) in CASES {
        let Definition::Cli(def) = config.backend(preset).unwrap() else {
            panic!("{preset} is a CLI")
        };
        let re = def
            .retry_regex
            .as_ref()
            .unwrap_or_else(|| panic!("{preset} has no retry_regex"));
        let output = read(rec, ["stdout", "out"]) + &read(rec, ["stderr", "err"]);
        assert!(output.contains(said), "{rec} does not say {said:?}");
        assert!(
            re.find_all(&output).next().is_none(),
            "{preset}: the recorded error {rec} would be retried"
        );
        let variant = output.replace(said, retryable);
        assert!(
            re.find_all(&variant).next().is_some(),
            "{preset}: {rec} with {retryable:?} would not be retried"
        );
    }
}

/// `retry_regex` reads the CLI's error report (with JSON output, the documents `json_error`
/// reaches) and stderr, not the rest of stdout: Gemini CLI's stream repeats the prompt, so a
/// conversation that mentions a rate limit made a wrong key's error retried. The recorded
/// error, its prompt line saying `"code": 429`, fails at once; with 429 in its result it is
/// tried again.
#[test]
fn a_rate_limit_the_conversation_mentions_is_not_retried() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.gemini]\ncommand = \"{}\"\nretry_base_ms = 1\nretries = 1\n",
        fixture("agents/replay.sh").display()
    ));
    let rec = ws.path("rec");
    let stdout = read("gemini/error-json", ["stdout", "out"]);
    std::fs::write(
        rec.with_extension("stderr"),
        read("gemini/error-json", ["stderr", "err"]),
    )
    .unwrap();
    std::fs::write(rec.with_extension("rc"), "144\n").unwrap();
    let mentioned = stdout.replace(
        "Answer in one short sentence.",
        "Why does it say \\\"code\\\": 429?",
    );
    let in_result = stdout.replace("\\\"code\\\":400", "\\\"code\\\":429");
    for (out, retried) in [(mentioned, false), (in_result, true)] {
        assert_ne!(out, stdout);
        std::fs::write(rec.with_extension("stdout"), out).unwrap();
        let mut cmd = ws.cmd(&["--backend", "gemini", "--no-save", "question"]);
        cmd.env("REPLAY", &rec);
        let run = ws.run_cmd(cmd);
        assert_ne!(run.code(), 0);
        let err = run.stderr();
        assert!(err.contains("API key not valid"), "{err}");
        assert_eq!(err.contains("[retrying gemini"), retried, "{err}");
    }
}

/// Claude Code retries a failed request itself, ten times over about three minutes, a wrong
/// key's 401 too, showing only that it waits (against the mock: 174 s and 11 requests before
/// the error). The preset lets it try twice (2 s and 3 requests) and retries the rest itself.
#[test]
fn claude_gives_up_soon_on_its_own_and_agent_loop_retries_what_is_worth_it() {
    let config = Config::from_sources(&[Source::builtin()]).expect("built-in file loads");
    let Definition::Cli(def) = config.backend("claude").unwrap() else {
        panic!("claude is a CLI")
    };
    let tries = def.env.get("CLAUDE_CODE_MAX_RETRIES").map(String::as_str);
    assert_eq!(tries, Some("2"));
    assert_eq!(def.retry.retries, 4);
    assert_eq!(def.retry.base, std::time::Duration::from_secs(2));
}
