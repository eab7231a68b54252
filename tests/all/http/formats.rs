//! One tool round trip per wire format, streamed and whole: the model asks for two tools in
//! one reply (read, then ls), both run in order, and the follow-up request carries both
//! results under the ids the provider gave the calls.

use serde_json::{json, Value};

use super::server::Recorded;
use super::*;

/// Runs "read the notes" against the `tools` then `text` fixtures; checks what every
/// format shares and returns the run and the two requests.
fn round_trip(format: Format, stream: bool, extra_args: &[&str]) -> (Run, Vec<Recorded>) {
    let answers = if stream {
        vec![streamed(format, "tools"), streamed(format, "text")]
    } else {
        vec![whole(format, "tools"), whole(format, "text")]
    };
    let (ws, server) = setup(format, answers, "");
    let mut args = extra_args.to_vec();
    if !stream {
        args.push("--no-stream");
    }
    args.push("read the notes");
    let run = run_api(&ws, &args);
    run.expect_code(0);
    let (stdout, stderr) = (run.stdout(), run.stderr());
    if stream {
        // Streamed text reaches stdout as it arrives, the text that came with the calls too.
        assert_eq!(stdout, "I'll look at the notes.\nThe notes say hello.\n");
    } else {
        assert_eq!(stdout, "The notes say hello.\n");
        assert!(stderr.contains("I'll look at the notes.\n"), "{stderr}");
    }
    let read = stderr.find("[tool read] notes.txt").expect(&stderr);
    let ls = stderr.find("[tool ls] .").expect(&stderr);
    assert!(read < ls, "the calls ran in order:\n{stderr}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{stderr}");
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, format.path());
        assert_eq!(request.header("content-type"), Some("application/json"));
        // Replies stream: nothing may hold them back in a gzip buffer.
        assert_eq!(request.header("accept-encoding"), None);
        let body = request.json();
        let tools: Vec<&str> = tool_names(format, &body);
        assert_eq!(
            tools,
            ["bash", "read", "write", "edit", "ls", "grep", "read_url"]
        );
    }
    (run, requests)
}

fn tool_names(format: Format, body: &Value) -> Vec<&str> {
    let pointer = if format == Anthropic {
        "/name"
    } else {
        "/function/name"
    };
    body["tools"]
        .as_array()
        .expect("tools are sent")
        .iter()
        .map(|t| t.pointer(pointer).and_then(Value::as_str).unwrap())
        .collect()
}

fn text_of(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}

fn check_anthropic(stream: bool) {
    let (run, requests) = round_trip(Anthropic, stream, &[]);
    let first = &requests[0];
    assert_eq!(first.header("x-api-key"), Some(KEY));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(first.header("authorization"), None);
    let body = first.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body.get("stream"), stream.then_some(&json!(true)));
    assert_eq!(body.get("temperature"), None, "sent only when set");
    assert!(text_of(&body["system"]).contains("working directory"));
    assert_eq!(
        body["tools"][1]["input_schema"]["required"],
        json!(["path"])
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "read the notes"}]}])
    );

    let messages = requests[1].json()["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 3);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "I'll look at the notes."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read", "input": {"path": "notes.txt"}},
            {"type": "tool_use", "id": "toolu_01B7zLhQmWv6dCjXsNvYj2kP", "name": "ls", "input": {}},
        ]})
    );
    let results = &messages[2];
    assert_eq!(results["role"], "user");
    assert_eq!(results["content"][0]["type"], "tool_result");
    assert_eq!(
        results["content"][0]["tool_use_id"],
        "toolu_01A09q90qw90lq917835lq9"
    );
    assert_eq!(results["content"][0]["is_error"], false);
    assert!(text_of(&results["content"][0]["content"]).contains("hello from notes"));
    assert_eq!(
        results["content"][1]["tool_use_id"],
        "toolu_01B7zLhQmWv6dCjXsNvYj2kP"
    );
    assert!(text_of(&results["content"][1]["content"]).contains("notes.txt"));

    let stderr = run.stderr();
    assert!(stderr.contains("[tokens in 412 / out 87]\n"), "{stderr}");
    assert!(
        stderr.contains("[tokens in 530 / out 9 / cache read 400]\n"),
        "{stderr}"
    );
}

fn check_openai(stream: bool) {
    let (run, requests) = round_trip(OpenAi, stream, &[]);
    let first = &requests[0];
    assert_eq!(
        first.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    let body = first.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body.get("temperature"), None, "sent only when set");
    if stream {
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    } else {
        assert_eq!(body.get("stream"), None);
    }
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["tools"][0]["type"], "function");

    let messages = requests[1].json()["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 5);
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "I'll look at the notes.", "tool_calls": [
            {"id": "call_Dn9MxcDTMcGrT3yZqJAGU1Ax", "type": "function",
             "function": {"name": "read", "arguments": "{\"path\":\"notes.txt\"}"}},
            {"id": "call_Q1oC8zbRrX1TMYcF5xbWQ3mQ", "type": "function",
             "function": {"name": "ls", "arguments": "{}"}},
        ]})
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_Dn9MxcDTMcGrT3yZqJAGU1Ax");
    assert!(text_of(&messages[3]["content"]).contains("hello from notes"));
    assert_eq!(messages[4]["tool_call_id"], "call_Q1oC8zbRrX1TMYcF5xbWQ3mQ");
    assert!(text_of(&messages[4]["content"]).contains("notes.txt"));

    let stderr = run.stderr();
    assert!(stderr.contains("[tokens in 412 / out 87]\n"), "{stderr}");
    assert!(
        stderr.contains("[tokens in 530 / out 9 / cache read 384]\n"),
        "{stderr}"
    );
}

fn check_ollama(stream: bool) {
    let (run, requests) = round_trip(Ollama, stream, &[]);
    let first = &requests[0];
    assert_eq!(first.header("authorization"), None, "no key configured");
    let body = first.json();
    assert_eq!(body["model"], "test-model");
    // Ollama streams unless told otherwise, so the flag is always sent.
    assert_eq!(body["stream"], stream);
    assert_eq!(body["options"], json!({"num_predict": 100}));

    let messages = requests[1].json()["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 5);
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "I'll look at the notes.", "tool_calls": [
            {"function": {"name": "read", "arguments": {"path": "notes.txt"}}},
            {"function": {"name": "ls", "arguments": {}}},
        ]})
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_name"], "read");
    assert!(text_of(&messages[3]["content"]).contains("hello from notes"));
    assert_eq!(messages[4]["tool_name"], "ls");
    assert!(text_of(&messages[4]["content"]).contains("notes.txt"));

    let stderr = run.stderr();
    assert!(stderr.contains("[tokens in 412 / out 87]\n"), "{stderr}");
    assert!(stderr.contains("[tokens in 530 / out 9]\n"), "{stderr}");
}

#[test]
fn anthropic_streamed() {
    check_anthropic(true);
}

#[test]
fn anthropic_whole() {
    check_anthropic(false);
}

#[test]
fn openai_streamed() {
    check_openai(true);
}

#[test]
fn openai_whole() {
    check_openai(false);
}

#[test]
fn ollama_streamed() {
    check_ollama(true);
}

#[test]
fn ollama_whole() {
    check_ollama(false);
}

#[test]
fn model_and_temperature_flags_override_the_entry() {
    for format in [Anthropic, OpenAi, Ollama] {
        let (_, requests) = round_trip(format, false, &["--model", "other", "--temp", "0.2"]);
        let body = requests[0].json();
        assert_eq!(body["model"], "other", "{format:?}");
        let temperature = match format {
            Ollama => &body["options"]["temperature"],
            _ => &body["temperature"],
        };
        assert_eq!(temperature, &json!(0.2), "{format:?}");
    }
}

/// The recorded tool replies decode the same through `decode_recorded` (the benchmarks' way
/// in) whatever pieces the body arrives in, down to one byte at a time.
#[test]
fn recorded_streams_decode_in_any_pieces() {
    use agent_loop_backends::backend::decode_recorded;
    use agent_loop_config::WireFormat;
    for (format, file) in [
        (WireFormat::Anthropic, "anthropic/tools.sse"),
        (WireFormat::OpenAi, "openai/tools.sse"),
        (WireFormat::Ollama, "ollama/tools.ndjson"),
    ] {
        let body = std::fs::read(crate::common::fixture(&format!("http/{file}"))).unwrap();
        for chunk in [1, 7, 1460, body.len()] {
            let (reply, pieces) = decode_recorded(format, &body, chunk).unwrap();
            let names: Vec<&str> = reply.calls.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["read", "ls"], "{file} in {chunk}-byte pieces");
            assert!(reply.usage.is_some(), "{file}");
            assert!(pieces >= 1, "{file}");
        }
        let cut = &body[..body.len() / 2];
        assert!(decode_recorded(format, cut, 1460).is_err(), "{file} cut");
    }
}
