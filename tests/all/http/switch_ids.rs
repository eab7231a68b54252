//! Tool-call ids across backend switches in one session: the demo's own `call_1`, then a
//! Kimi-style server's `functions.ls:0` (repeated each turn, and its own `call_1`), then
//! Anthropic, which takes only letters, digits, `_` and `-` and each id once, then a
//! Mistral-style backend (`tool_call_ids = "alnum9"`), then the Kimi-style server again,
//! which must get its own ids back exactly.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::server::{json as json_answer, Server};
use super::*;

/// An OpenAI reply calling `ls` under `id`.
fn openai_ls(id: &str) -> Answer {
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null,
        "tool_calls": [{"id": id, "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
    }}]});
    json_answer(200, &body.to_string())
}

fn openai_text() -> Answer {
    let body = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "done"}}]});
    json_answer(200, &body.to_string())
}

/// Each (call id, result id) pair of an OpenAI request, in order.
fn openai_pairs(body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().unwrap();
    let calls = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["id"].as_str().unwrap().to_string());
    let results = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap().to_string());
    calls.zip(results).collect()
}

/// Each (tool_use id, tool_result id) pair of an Anthropic request, in order.
fn anthropic_pairs(body: &Value) -> Vec<(String, String)> {
    let blocks: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .collect();
    let of = |kind: &str, key: &str| -> Vec<String> {
        blocks
            .iter()
            .filter(|b| b["type"] == kind)
            .map(|b| b[key].as_str().unwrap().to_string())
            .collect()
    };
    of("tool_use", "id")
        .into_iter()
        .zip(of("tool_result", "tool_use_id"))
        .collect()
}

fn unique_and_paired(pairs: &[(String, String)], valid: impl Fn(&str) -> bool) {
    let ids: HashSet<&str> = pairs.iter().map(|(call, _)| call.as_str()).collect();
    assert_eq!(ids.len(), pairs.len(), "ids repeat: {pairs:?}");
    for (call, result) in pairs {
        assert_eq!(call, result, "a result answers another id: {pairs:?}");
        assert!(valid(call), "`{call}` does not fit: {pairs:?}");
    }
}

#[test]
fn every_backend_after_a_switch_gets_ids_it_takes() {
    let kimi = Server::start(vec![
        openai_ls("functions.ls:0"),
        openai_text(),
        openai_ls("functions.ls:0"),
        openai_ls("call_1"),
        openai_text(),
        openai_text(),
    ]);
    let anthropic = Server::start(vec![whole(Anthropic, "text")]);
    let mistral = Server::start(vec![openai_text()]);
    let ws = Workspace::new();
    let entry = |name: &str, kind: &str, url: String, extra: &str| {
        format!(
            "[backends.{name}]\ntype = \"{kind}\"\nbase_url = \"{url}\"\napi_key_env = \"{KEY_ENV}\"\n\
             model = \"m\"\nstream = false\nretry_base_ms = 1\n{extra}\n"
        )
    };
    ws.config(&format!(
        "{}{}{}",
        entry("kimi", "openai", format!("{}/v1", kimi.url), ""),
        entry("an", "anthropic", anthropic.url.clone(), ""),
        entry(
            "mi",
            "openai",
            format!("{}/v1", mistral.url),
            "tool_call_ids = \"alnum9\""
        ),
    ));
    let turn = |backend: &str, prompt: &str| {
        ws.run_cmd(cmd_for(&ws, backend, &["--session", "sw", prompt]))
            .expect_code(0);
    };
    turn("demo", "list the files here");
    turn("kimi", "one");
    turn("kimi", "two");
    turn("an", "three");
    turn("mi", "four");
    turn("kimi", "five");

    let kimi_requests = kimi.requests();
    let last = |requests: &[server::Recorded]| requests.last().unwrap().json();
    let to_anthropic = anthropic_pairs(&last(&anthropic.requests()));
    assert_eq!(to_anthropic.len(), 4, "{to_anthropic:?}");
    unique_and_paired(&to_anthropic, |id| {
        !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    });
    // The demo's id fitted already, and came first.
    assert_eq!(to_anthropic[0].0, "call_1");

    let to_mistral = openai_pairs(&last(&mistral.requests()));
    assert_eq!(to_mistral.len(), 4, "{to_mistral:?}");
    unique_and_paired(&to_mistral, |id| {
        id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric())
    });

    // The Kimi-style server gets back exactly what it gave (and the demo's `call_1`).
    let to_kimi = openai_pairs(&last(&kimi_requests));
    let ids: Vec<&str> = to_kimi.iter().map(|(call, _)| call.as_str()).collect();
    assert_eq!(
        ids,
        ["call_1", "functions.ls:0", "functions.ls:0", "call_1"]
    );
    assert!(to_kimi.iter().all(|(call, result)| call == result));

    // The session keeps the ids as the backends gave them.
    let saved = ws.saved_session().to_string();
    assert!(saved.contains("functions.ls:0"), "{saved}");
}
