//! What a reply carries beside its text: the backend's thinking as `agent_thought_chunk`,
//! never in the answer; an ACP agent's plan passed on as `plan`; an answer the model stopped
//! early answered with `stopReason` `max_tokens` or `refusal`. And the sessions share their
//! connection to an API.

use serde_json::json;

use super::{drive, drive_with, open, Seen};
use crate::common::{fixture, Workspace};
use crate::http::server::{Answer, Server};
use crate::http::{setup, streamed, whole, Format, KEY, KEY_ENV};

/// One prompt to backend `api` speaking `format`, answered with `answer`.
fn prompt_api(format: Format, answer: Answer) -> Seen {
    let (ws, _server) = setup(format, vec![answer], "");
    let mut steps = open(&ws);
    steps.push(json!({"op": "prompt", "session": 0, "text": "hi"}));
    drive_with(
        &ws,
        json!({ "steps": steps }),
        &["--backend", "api", "--no-save"],
        &[("AGENT_LOOP_TEST_API_KEY", "test-key")],
    )
}

#[test]
fn thinking_arrives_as_thought_chunks_apart_from_the_message() {
    let seen = prompt_api(Format::Anthropic, streamed(Format::Anthropic, "thinking"));
    assert_eq!(seen.result(2)["result"]["stopReason"], "end_turn");
    let thought: String = seen
        .of_kind("agent_thought_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(thought, "The user greets me.\nI should quote the notes.");
    assert_eq!(seen.message(), "The notes say hello.");
}

#[test]
fn an_acp_agents_plan_is_passed_on() {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n",
        fixture("agents/fake-acp.py").display()
    ));
    let mut steps = open(&ws);
    steps.push(json!({"op": "prompt", "session": 0, "text": "tool please"}));
    let seen = drive(
        &ws,
        json!({ "steps": steps }),
        &["--backend", "acp", "--no-save"],
    );
    assert_eq!(seen.result(2)["result"]["stopReason"], "end_turn");
    let plans = seen.of_kind("plan");
    assert_eq!(plans.len(), 1, "{plans:?}");
    assert_eq!(
        plans[0]["entries"],
        json!([
            {"content": "look", "priority": "high", "status": "completed"},
            {"content": "answer", "priority": "high", "status": "in_progress"},
        ])
    );
}

#[test]
fn an_answer_stopped_early_says_why_in_its_stop_reason() {
    let seen = prompt_api(Format::OpenAi, streamed(Format::OpenAi, "length"));
    assert_eq!(seen.result(2)["result"]["stopReason"], "max_tokens");
    assert_eq!(seen.message(), "The notes say");
    let seen = prompt_api(Format::Anthropic, whole(Format::Anthropic, "refusal"));
    assert_eq!(seen.result(2)["result"]["stopReason"], "refusal");
}

/// The sessions of one `agent-loop acp` share their HTTP clients: the second session's
/// first prompt is sent on the connection the first session's opened, as an API keeps it.
#[test]
fn a_new_sessions_first_prompt_reuses_the_open_connection() {
    let answer = |text: &str| {
        format!(
            "{{\"id\":\"c1\",\"object\":\"chat.completion\",\"choices\":[{{\"index\":0,\
             \"message\":{{\"role\":\"assistant\",\"content\":\"{text}\"}},\"finish_reason\":\"stop\"}}]}}"
        )
    };
    let server = Server::keep_alive(vec![answer("first."), answer("second.")]);
    let ws = Workspace::new();
    ws.add_config(&format!(
        "[backends.api]\ntype = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"{KEY_ENV}\"\n\
         model = \"test-model\"\nstream = false\n",
        server.url
    ));
    let mut steps = open(&ws);
    steps.extend([
        json!({"op": "new", "cwd": ws.work()}),
        json!({"op": "prompt", "session": 0, "text": "one"}),
        json!({"op": "prompt", "session": 1, "text": "two"}),
    ]);
    let seen = drive_with(
        &ws,
        json!({ "steps": steps }),
        &["--backend", "api", "--no-save"],
        &[(KEY_ENV, KEY)],
    );
    assert_eq!(seen.result(3)["result"]["stopReason"], "end_turn");
    assert_eq!(seen.result(4)["result"]["stopReason"], "end_turn");
    assert_eq!(seen.message(), "first.second.");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.connections(), 1, "one connection for both sessions");
}
