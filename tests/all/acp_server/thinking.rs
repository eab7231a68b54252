//! The backend's thinking as `agent_thought_chunk`, never in the answer; an ACP agent's plan
//! passed on as `plan`.

use serde_json::json;

use super::{drive, drive_with, open};
use crate::common::{fixture, Workspace};
use crate::http::{setup, streamed, Format};

#[test]
fn thinking_arrives_as_thought_chunks_apart_from_the_message() {
    let (ws, _server) = setup(
        Format::Anthropic,
        vec![streamed(Format::Anthropic, "thinking")],
        "",
    );
    let mut steps = open(&ws);
    steps.push(json!({"op": "prompt", "session": 0, "text": "hi"}));
    let seen = drive_with(
        &ws,
        json!({ "steps": steps }),
        &["--backend", "api", "--no-save"],
        &[("AGENT_LOOP_TEST_API_KEY", "test-key")],
    );
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
