//! Exact token counts against the mock: an OpenAI model's messages counted with its encoding
//! (the refusal of a prompt over the budget quotes the exact count), and, with
//! `count_tokens = "api"`, Anthropic's and Gemini's count-tokens endpoints asked once per
//! message with the exact bodies, their counts in the budget, and a failing endpoint given
//! up for the estimate with a notice.

use super::server::{json, Answer};
use super::{run_api, setup, whole, Format, KEY, KEY_ENV};
use crate::common::Workspace;
use agent_loop_context::{Encoding, Message};

/// `count_tokens` and `max_context_tokens` in config.toml.
fn settings(ws: &Workspace, text: &str) {
    let file = ws.path("xdg/agent-loop/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

#[test]
fn an_openai_models_message_is_counted_with_its_encoding() {
    let (ws, server) = setup(Format::OpenAi, vec![], "");
    settings(&ws, "max_context_tokens = 1000\n");
    let big = "hello world ".repeat(1_000);
    let exact = Encoding::O200kBase.count_message(&Message::user(big.as_str()));
    let run = run_api(&ws, &["--no-stream", "--model", "gpt-4o", &big]);
    run.expect_code(2);
    let wanted = format!("the current message ~{exact}");
    assert!(run.stderr().contains(&wanted), "{wanted}\n{}", run.stderr());
    // A model whose encoding is not known: the estimate, from bytes.
    let run = run_api(&ws, &["--no-stream", &big]);
    run.expect_code(2);
    assert!(!run.stderr().contains(&wanted), "{}", run.stderr());
    assert!(server.requests().is_empty());
}

/// The body of a count request to Anthropic for a message of `text`.
fn anthropic_count(text: &str) -> serde_json::Value {
    serde_json::json!({"model": "test-model", "messages": [{"role": "user", "content": text}]})
}

#[test]
fn anthropics_endpoint_counts_each_message_once() {
    let count = |n: u64| json(200, &format!(r#"{{"input_tokens":{n}}}"#));
    let answers: Vec<Answer> = vec![
        count(9),
        whole(Format::Anthropic, "tools"),
        count(30),
        count(12),
        count(40),
        whole(Format::Anthropic, "text"),
    ];
    let (ws, server) = setup(Format::Anthropic, answers, "");
    settings(&ws, "count_tokens = \"api\"\n");
    run_api(
        &ws,
        &["--no-stream", "--tools", "read,ls", "read the notes"],
    )
    .expect_code(0);
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    let (count, messages) = ("/v1/messages/count_tokens", "/v1/messages");
    assert_eq!(paths, [count, messages, count, count, count, messages]);
    assert_eq!(requests[0].json(), anthropic_count("read the notes"));
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    assert_eq!(
        requests[2].json(),
        anthropic_count("I'll look at the notes.\nread{\"path\":\"notes.txt\"}\nls{}")
    );
    assert_eq!(
        requests[3].json(),
        anthropic_count("     1\thello from notes")
    );
}

#[test]
fn the_count_is_what_the_budget_holds_the_first_message_to() {
    // 5,000 tokens by the API: over the budget, though its bytes would fit.
    let (ws, server) = setup(
        Format::Anthropic,
        vec![json(200, r#"{"input_tokens":5000}"#)],
        "",
    );
    settings(&ws, "count_tokens = \"api\"\nmax_context_tokens = 1000\n");
    let run = run_api(&ws, &["--no-stream", "hi"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("the current message ~5000"),
        "{}",
        run.stderr()
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn geminis_endpoint_is_beside_its_openai_compatible_one() {
    let (ws, server) = setup(
        Format::OpenAi,
        vec![
            json(200, r#"{"totalTokens":4}"#),
            whole(Format::OpenAi, "text"),
        ],
        "",
    );
    let gemini = format!("{}/v1beta/openai", server.url);
    ws.config(&format!(
        "[backends.api]\ntype = \"openai\"\nbase_url = \"{gemini}\"\napi_key_env = \
         \"{KEY_ENV}\"\nmodel = \"gemini-2.5-flash\"\nretry_base_ms = 1\n"
    ));
    settings(&ws, "count_tokens = \"api\"\n");
    run_api(&ws, &["--no-stream", "hi"]).expect_code(0);
    let requests = server.requests();
    assert_eq!(
        requests[0].path,
        "/v1beta/models/gemini-2.5-flash:countTokens"
    );
    assert_eq!(requests[0].header("x-goog-api-key"), Some(KEY));
    assert_eq!(
        requests[0].json(),
        serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    );
    assert_eq!(requests[1].path, "/v1beta/openai/chat/completions");
}

#[test]
fn a_failing_endpoint_is_given_up_for_the_estimate() {
    let (ws, server) = setup(
        Format::Anthropic,
        vec![
            json(
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"no counting here"}}"#,
            ),
            whole(Format::Anthropic, "text"),
        ],
        "",
    );
    settings(&ws, "count_tokens = \"api\"\n");
    let run = run_api(&ws, &["--no-stream", "hi"]);
    run.expect_code(0);
    assert!(
        run.stderr()
            .contains("backend `api` could not count tokens through its API (")
            && run.stderr().contains("no counting here"),
        "{}",
        run.stderr()
    );
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/v1/messages/count_tokens", "/v1/messages"]);
}

#[test]
fn config_says_how_each_backend_counts() {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.gpt]\ntype = \"openai\"\napi_key_env = \"{KEY_ENV}\"\nmodel = \"gpt-4.1-mini\"\n\
         [backends.old]\ntype = \"openai\"\napi_key_env = \"{KEY_ENV}\"\nmodel = \"gpt-4\"\n\
         [backends.claude]\ntype = \"anthropic\"\napi_key_env = \"{KEY_ENV}\"\nmodel = \"c\"\n\
         [backends.gem]\ntype = \"openai\"\napi_key_env = \"{KEY_ENV}\"\nmodel = \"g\"\n\
         base_url = \"https://generativelanguage.googleapis.com/v1beta/openai\"\n"
    ));
    let config = |api: bool| {
        let mut cmd = ws.cmd(&["config"]);
        cmd.env(KEY_ENV, KEY);
        if api {
            cmd.env("AGENT_LOOP_COUNT_TOKENS", "api");
        }
        let run = ws.run_cmd(cmd);
        run.expect_code(0);
        run.stdout()
    };
    let local = config(false);
    for line in [
        "  gpt: exact, o200k_base\n",
        "  old: exact, cl100k_base\n",
        "  claude: estimated from bytes, calibrated by reported usage\n",
        "  gem: estimated from bytes, calibrated by reported usage\n",
        "  every other backend: estimated from bytes, calibrated by reported usage\n",
    ] {
        assert!(local.contains(line), "{line}\nnot in\n{local}");
    }
    let api = config(true);
    for line in [
        "  claude: exact, Anthropic's count_tokens API\n",
        "  gem: exact, Gemini's countTokens API\n",
    ] {
        assert!(api.contains(line), "{line}\nnot in\n{api}");
    }
}
