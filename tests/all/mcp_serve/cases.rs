//! The tools listed, an ask through the demo backend and through the HTTP mock (its answer
//! redacted), the backends tool, and calls that are refused.

use serde_json::json;

use super::wait_file;
use super::{answer, block, start, structured, text, Behaviour, Client};
use crate::common::{process_gone, Workspace};
use crate::http::server::{response, Server};
use crate::http::{KEY, KEY_ENV};

#[test]
fn tools_are_listed_and_an_ask_runs_a_demo_turn_in_a_saved_session() {
    let ws = Workspace::new();
    block(async {
        let client = start(&ws, &["--allow-backend", "demo"], Behaviour::default(), &[]).await;
        let tools = client.service.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| &*t.name).collect();
        assert_eq!(names, ["ask", "reply", "backends"]);
        let ask = &tools[0];
        assert_eq!(ask.input_schema["required"], json!(["prompt"]));
        assert_eq!(
            ask.input_schema["properties"]["backend"]["enum"],
            json!(["demo"])
        );
        assert!(ask.output_schema.is_some());
        let result = client.call("ask", json!({"prompt": "hello there"})).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert!(answer(&result).contains("offline demo agent"), "{result:?}");
        let meta = structured(&result);
        assert_eq!(meta["backend"], "demo");
        assert_eq!(meta["stop_reason"], "end_turn");
        assert!(meta["tokens"]["input"].as_u64().unwrap() > 0, "{meta}");
        let session = meta["session"].as_str().unwrap().to_string();
        client.close().await;
        let saved = ws.saved_session();
        assert_eq!(saved["name"], session.as_str());
        assert!(saved["conversation"].to_string().contains("hello there"));
    });
}

#[test]
fn an_ask_through_an_http_api_counts_its_tokens_and_keeps_the_key_out() {
    // The model's answer quotes the key: the calling agent must never see it.
    let body = format!(
        "{{\"id\":\"c1\",\"object\":\"chat.completion\",\"model\":\"test-model\",\"choices\":[{{\"index\":0,\
         \"message\":{{\"role\":\"assistant\",\"content\":\"the key is {KEY}.\"}},\"finish_reason\":\"stop\"}}],\
         \"usage\":{{\"prompt_tokens\":12,\"completion_tokens\":5,\"total_tokens\":17}}}}"
    );
    let server = Server::start(vec![response(
        200,
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )]);
    let ws = Workspace::new();
    block(async {
        let client = start_on_api(&ws, &server.url).await;
        let result = client
            .call("ask", json!({"prompt": "what is the key?"}))
            .await;
        let answer = answer(&result);
        assert!(answer.contains("the key is [REDACTED]."), "{answer}");
        assert!(!format!("{result:?}").contains(KEY), "{result:?}");
        let meta = structured(&result);
        assert_eq!(meta["backend"], "api");
        assert_eq!(meta["model"], "test-model");
        assert_eq!(meta["tokens"], json!({"input": 12, "output": 5}));
        client.close().await;
    });
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
}

/// The chats of one server share their HTTP clients: the second `ask`, a new session with a
/// chat of its own, is sent on the connection the first one opened, as an API keeps it open.
#[test]
fn asks_share_the_connection_to_the_api() {
    let completion = |text: &str| {
        format!(
            "{{\"id\":\"c1\",\"object\":\"chat.completion\",\"model\":\"test-model\",\"choices\":[{{\"index\":0,\
             \"message\":{{\"role\":\"assistant\",\"content\":\"{text}\"}},\"finish_reason\":\"stop\"}}]}}"
        )
    };
    let server = Server::keep_alive(vec![completion("first."), completion("second.")]);
    let ws = Workspace::new();
    let answers = block(async {
        let client = start_on_api(&ws, &server.url).await;
        let mut answers = Vec::new();
        for prompt in ["one", "two"] {
            let result = client.call("ask", json!({ "prompt": prompt })).await;
            answers.push((answer(&result), structured(&result)["session"].clone()));
        }
        client.close().await;
        answers
    });
    assert!(answers[0].0.contains("first."), "{answers:?}");
    assert!(answers[1].0.contains("second."), "{answers:?}");
    assert_ne!(answers[0].1, answers[1].1, "two sessions: {answers:?}");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.connections(), 1, "one connection for both asks");
}

/// The server on an OpenAI-style backend `api` at `url` (whole replies), its key set.
async fn start_on_api(ws: &Workspace, url: &str) -> Client {
    ws.add_config(&format!(
        "[backends.api]\ntype = \"openai\"\nbase_url = \"{url}/v1\"\napi_key_env = \"{KEY_ENV}\"\n\
         model = \"test-model\"\nstream = false\ntimeout_s = 300\n"
    ));
    start(
        ws,
        &["--backend", "api"],
        Behaviour::default(),
        &[(KEY_ENV, KEY)],
    )
    .await
}

#[test]
fn backends_says_what_is_offered_and_what_runs_here() {
    let ws = Workspace::new();
    block(async {
        let client = start(
            &ws,
            &["--backend", "fake", "--allow-backend", "demo"],
            Behaviour::default(),
            &[],
        )
        .await;
        let result = client.call("backends", json!({})).await;
        let meta = structured(&result);
        assert_eq!(meta["default"], "fake");
        let list = meta["backends"].as_array().unwrap();
        let entry = |name: &str| list.iter().find(|b| b["name"] == name).unwrap().clone();
        assert_eq!(entry("fake")["offered"], true);
        assert_eq!(entry("demo")["offered"], true);
        assert_eq!(entry("demo")["here"], "built in");
        assert!(entry("demo")["description"]
            .as_str()
            .unwrap()
            .contains("Offline demo agent"));
        assert_eq!(entry("claude")["offered"], false);
        assert!(text(&result).starts_with("default: fake\n"), "{result:?}");
        client.close().await;
    });
}

#[test]
fn calls_that_cannot_run_say_why() {
    let ws = Workspace::new();
    block(async {
        let client = start(&ws, &["--backend", "fake"], Behaviour::default(), &[]).await;
        let other = client
            .call("ask", json!({"prompt": "hi", "backend": "demo"}))
            .await;
        assert_eq!(other.is_error, Some(true));
        assert!(
            text(&other).contains(
                "backend `demo` is not offered by this server; the backends offered are fake"
            ),
            "{other:?}"
        );
        let missing = client
            .call("reply", json!({"session": "nothing-here", "prompt": "hi"}))
            .await;
        assert_eq!(missing.is_error, Some(true));
        assert!(
            text(&missing).contains("no saved session named `nothing-here`"),
            "{missing:?}"
        );
        let params = rmcp::model::CallToolRequestParams::new("ask")
            .with_arguments(json!({"prompt": ""}).as_object().cloned().unwrap());
        let empty = client.service.call_tool(params).await.unwrap_err();
        assert!(empty.to_string().contains("the prompt is empty"), "{empty}");
        for (args, says) in [
            (
                json!({"session": "s", "prompt": "hi", "model": "--yolo"}),
                "`model` must not start with `-`",
            ),
            (
                json!({"session": "../../etc", "prompt": "hi"}),
                "session name",
            ),
        ] {
            let params = rmcp::model::CallToolRequestParams::new("reply")
                .with_arguments(args.as_object().cloned().unwrap());
            let refused = client.service.call_tool(params).await.unwrap_err();
            assert!(refused.to_string().contains(says), "{refused}");
        }
        client.close().await;
    });
    assert_eq!(ws.runs(), 0, "the fake agent ran");
}

#[test]
fn a_backend_that_is_not_configured_stops_the_start() {
    let ws = Workspace::new();
    let run = ws.run_cmd({
        let mut cmd = std::process::Command::new(crate::common::bin());
        ws.hermetic(&mut cmd)
            .current_dir(ws.work())
            .args(["mcp", "serve", "--config"])
            .arg(ws.path("backends.toml"))
            .args(["--allow-backend", "nosuch"])
            .stdin(std::process::Stdio::null());
        cmd
    });
    run.expect_code(2);
    assert!(run.stderr().contains("nosuch"), "{}", run.stderr());
    assert!(run.stdout().is_empty());
}

#[test]
fn a_long_answer_is_cut_and_saved_whole_in_the_session() {
    let ws = Workspace::new();
    let long: String = (1..=200).map(|i| format!("line {i}\n")).collect();
    ws.reply(1, &long);
    let answer = block(async {
        let client = start(
            &ws,
            &["--backend", "fake", "--max-answer-chars", "300"],
            Behaviour::default(),
            &[],
        )
        .await;
        let result = client
            .call("ask", json!({"prompt": "long", "session": "big"}))
            .await;
        let answer = answer(&result);
        assert!(
            answer.starts_with("line 1\n") && answer.ends_with("line 200"),
            "{answer}"
        );
        assert!(answer.chars().count() < 800, "{answer}");
        client.close().await;
        answer
    });
    let artifacts = ws.path("data/agent-loop/sessions/big/artifacts");
    let saved: Vec<_> = std::fs::read_dir(&artifacts).unwrap().collect();
    assert_eq!(saved.len(), 1);
    let path = saved[0].as_ref().unwrap().path();
    let whole = std::fs::read_to_string(&path).unwrap();
    assert_eq!(whole.trim_end(), long.trim_end());
    // The note is for the calling model, whose tools are its own: what the cut kept, the
    // file's path, and to read it with its own file-reading tool.
    let note = answer
        .lines()
        .find(|l| l.starts_with("[... answer cut here"))
        .unwrap_or_else(|| panic!("no note in {answer}"));
    let kept = |part: &str| part.chars().count().to_string();
    let (head, tail) = answer.split_once(note).unwrap();
    assert!(
        note.contains(&format!(
            "kept are the {} characters before this note",
            kept(head)
        )) && note.contains(&format!(
            "the {} after it",
            kept(tail.trim_start_matches('\n'))
        )) && note.contains(&format!(
            "The whole answer is saved in the file {}: to read what was cut, open that file \
                 with your own file-reading tool",
            path.display()
        )),
        "{note}"
    );
}

/// Without saving, the whole answer the note names is in the server's temporary folder: it is
/// still there when the calling model reads the answer (the call's chat has ended by then),
/// and gone once the server exits.
#[test]
fn without_saving_a_cut_answers_file_lasts_as_long_as_the_server() {
    let ws = Workspace::new();
    let long: String = (1..=200).map(|i| format!("line {i}\n")).collect();
    ws.reply(1, &long);
    let path = block(async {
        let client = start(
            &ws,
            &[
                "--backend",
                "fake",
                "--no-save",
                "--max-answer-chars",
                "300",
            ],
            Behaviour::default(),
            &[],
        )
        .await;
        let result = client.call("ask", json!({"prompt": "long"})).await;
        let answer = answer(&result);
        let path = cut_answer_file(&answer);
        assert!(path.starts_with(ws.path("tmp")), "{}", path.display());
        let whole = std::fs::read_to_string(&path).expect("the whole answer, while serving");
        assert_eq!(whole.trim_end(), long.trim_end());
        client.close().await;
        path
    });
    assert!(!path.parent().unwrap().exists(), "{}", path.display());
}

/// MCP clients commonly stop a stdio server with SIGTERM: the folder of cut answers goes with
/// it, and the call still running is stopped with its agent.
#[test]
fn without_saving_a_signal_removes_the_cut_answers_and_stops_the_turns() {
    let ws = Workspace::new();
    let long: String = (1..=200).map(|i| format!("line {i}\n")).collect();
    ws.reply(1, &long);
    ws.fake_file("hang.2", "");
    let pid_file = ws.path("fake/self.pid");
    let (path, code, pid, stopped) = block(async {
        let args = [
            "--backend",
            "fake",
            "--no-save",
            "--max-answer-chars",
            "300",
        ];
        let client = start(&ws, &args, Behaviour::default(), &[]).await;
        let result = client.call("ask", json!({"prompt": "long"})).await;
        let path = cut_answer_file(&answer(&result));
        assert!(path.exists(), "{}", path.display());
        let peer = client.service.peer().clone();
        let hanging = tokio::spawn(async move {
            let params = rmcp::model::CallToolRequestParams::new("ask")
                .with_arguments(json!({"prompt": "wait"}).as_object().cloned().unwrap());
            peer.call_tool(params).await
        });
        let waited = pid_file.clone();
        tokio::task::spawn_blocking(move || wait_file(&waited))
            .await
            .unwrap();
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let code = client.signal(libc::SIGTERM).await;
        (path, code, pid, hanging.await.unwrap())
    });
    assert_eq!(code, Some(143));
    assert!(!path.parent().unwrap().exists(), "{}", path.display());
    // Stopped as a cancel stops it, and answered before the server let stdout go.
    let stopped = stopped.expect("the running call is answered");
    assert_eq!(
        structured(&stopped)["stop_reason"],
        "cancelled",
        "{stopped:?}"
    );
    assert!(process_gone(pid), "the fake agent still runs after SIGTERM");
}

#[test]
fn without_saving_there_is_nothing_to_reply_in() {
    let ws = Workspace::new();
    ws.reply(1, "An answer.\n");
    block(async {
        let client = start(
            &ws,
            &["--backend", "fake", "--no-save"],
            Behaviour::default(),
            &[],
        )
        .await;
        let result = client.call("ask", json!({"prompt": "hi"})).await;
        assert_eq!(
            structured(&result)["session"],
            serde_json::Value::Null,
            "{result:?}"
        );
        let reply = client
            .call("reply", json!({"session": "any", "prompt": "more"}))
            .await;
        assert_eq!(reply.is_error, Some(true));
        assert!(text(&reply).contains("--no-save"), "{reply:?}");
        client.close().await;
    });
    assert!(!ws.path("data/agent-loop/sessions").exists());
}

/// A line that is not JSON gets no answer (rmcp skips it on purpose, as docs/mcp-server.md
/// says): the next request is answered as if it had not come.
#[test]
fn a_line_that_is_not_json_is_skipped() {
    use std::io::Write as _;
    let ws = Workspace::new();
    let mut cmd = ws.cmd(&["mcp", "serve", "--backend", "demo"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let mut stdin = child.stdin.take().unwrap();
    write!(stdin, "not json\n{initialize}\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert_eq!(lines[0]["id"], 1, "{out}");
    assert!(lines[0]["result"]["serverInfo"].is_object(), "{out}");
}

/// The file a cut answer's note names.
fn cut_answer_file(answer: &str) -> std::path::PathBuf {
    answer
        .split_once("saved in the file ")
        .and_then(|(_, rest)| rest.split_once(": to read"))
        .map(|(path, _)| std::path::PathBuf::from(path))
        .unwrap_or_else(|| panic!("no file named in {answer}"))
}
