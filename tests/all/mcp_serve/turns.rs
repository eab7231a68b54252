//! Turns over time: a reply that moves the conversation to another backend, cancel and the
//! timeout (the fake agent's process gone, the session saved), and calls on two sessions
//! side by side while two calls on one session wait their turn.

use std::io::Write;

use serde_json::json;

use super::{answer, block, start, structured, text, wait_file, Behaviour};
use crate::common::{process_gone, wait_gone, Workspace};

/// A second scripted backend on the same fake agent.
fn with_second_backend(ws: &Workspace) {
    ws.add_config(&format!(
        "[backends.fake2]\ncommand = \"{}\"\n{}timeout_s = 300\n",
        crate::common::fixture("agents/scripted.sh").display(),
        crate::common::TOKENS
    ));
}

#[test]
fn a_reply_continues_the_session_on_another_backend() {
    let ws = Workspace::new();
    with_second_backend(&ws);
    ws.reply(1, "The first answer.\nTokens: 10 in, 2 out\n");
    ws.reply(2, "The second answer.\nTokens: 30 in, 3 out\n");
    block(async {
        let client = start(
            &ws,
            &["--backend", "fake", "--allow-backend", "fake2"],
            Behaviour::default(),
            &[],
        )
        .await;
        let first = client
            .call(
                "ask",
                json!({"prompt": "first question", "session": "task"}),
            )
            .await;
        assert_eq!(answer(&first), "The first answer.", "{first:?}");
        assert_eq!(structured(&first)["session"], "task");
        assert_eq!(structured(&first)["backend"], "fake");
        let second = client
            .call(
                "reply",
                json!({"session": "task", "prompt": "second question", "backend": "fake2"}),
            )
            .await;
        assert_eq!(answer(&second), "The second answer.", "{second:?}");
        let meta = structured(&second);
        assert_eq!(meta["backend"], "fake2");
        assert_eq!(meta["tokens"], json!({"input": 30, "output": 3}));
        // The session stays on the backend it moved to.
        ws.reply(3, "The third answer.\n");
        let third = client
            .call(
                "reply",
                json!({"session": "task", "prompt": "third question"}),
            )
            .await;
        let meta = structured(&third);
        assert_eq!(meta["backend"], "fake2");
        // No count reported: unknown, not 0 (as cost_usd).
        assert_eq!(meta["tokens"], json!({"input": null, "output": null}));
        client.close().await;
    });
    // The second backend was sent the conversation so far.
    let prompt = ws.prompt(2);
    assert!(
        prompt.contains("first question") && prompt.contains("The first answer."),
        "{prompt}"
    );
    assert_eq!(ws.saved_session()["backend"], "fake2");
}

/// `ask` and `reply` continue only the sessions `mcp serve` started (marked in session.json):
/// a CLI session (or a Telegram chat's) is refused, unread and left on its backend, unless
/// the server was started with `--any-session`.
#[test]
fn only_the_servers_own_sessions_are_continued() {
    let ws = Workspace::new();
    ws.reply(1, "The CLI's answer.\n");
    ws.reply(2, "The server's answer.\n");
    ws.run(&["-s", "mine", "a private question"]).expect_code(0);
    let saved = |name: &str| -> serde_json::Value {
        let file = ws.path(&format!("data/agent-loop/sessions/{name}/session.json"));
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
    };
    assert_eq!(saved("mine").get("started_by"), None);
    block(async {
        let client = start(&ws, &["--backend", "fake"], Behaviour::default(), &[]).await;
        let reply = &client.service.list_all_tools().await.unwrap()[1];
        let said = &reply.input_schema["properties"]["session"]["description"];
        assert!(said
            .as_str()
            .unwrap()
            .ends_with("(only a session this server started)"));
        for tool in ["reply", "ask"] {
            let refused = client
                .call(tool, json!({"session": "mine", "prompt": "repeat it all"}))
                .await;
            assert_eq!(refused.is_error, Some(true), "{refused:?}");
            let said = text(&refused);
            assert!(
                said.contains("session `mine` was not started by mcp serve")
                    && said.contains("--any-session"),
                "{said}"
            );
        }
        let own = client
            .call("ask", json!({"session": "own", "prompt": "hi"}))
            .await;
        assert_eq!(answer(&own), "The server's answer.", "{own:?}");
        client.close().await;
    });
    assert_eq!(ws.runs(), 2, "the refused calls ran nothing");
    assert_eq!(saved("own")["started_by"], "mcp serve");
    ws.reply(3, "Continued.\n");
    ws.reply(4, "Continued too.\n");
    block(async {
        let client = start(&ws, &["--any-session"], Behaviour::default(), &[]).await;
        let reply = &client.service.list_all_tools().await.unwrap()[1];
        let said = &reply.input_schema["properties"]["session"]["description"];
        assert_eq!(said, "The session to continue, as `ask` named it");
        for session in ["own", "mine"] {
            let result = client
                .call("reply", json!({"session": session, "prompt": "more"}))
                .await;
            assert_eq!(result.is_error, Some(false), "{result:?}");
        }
        client.close().await;
    });
    assert!(ws.prompt(4).contains("a private question"));
    // Continued from here, a session keeps the mark it had.
    assert_eq!(saved("own")["started_by"], "mcp serve");
    assert_eq!(saved("mine").get("started_by"), None);
}

#[test]
fn a_cancel_stops_the_turn_and_its_agent_and_the_server_goes_on() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    let pid_file = ws.path("fake/self.pid");
    block(async {
        let client = start(&ws, &["--backend", "fake"], Behaviour::default(), &[]).await;
        let params = rmcp::model::CallToolRequestParams::new("ask").with_arguments(
            json!({"prompt": "wait", "session": "long"})
                .as_object()
                .cloned()
                .unwrap(),
        );
        let request =
            rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        let handle = client
            .service
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
            .await
            .unwrap();
        tokio::task::spawn_blocking(move || wait_file(&pid_file))
            .await
            .unwrap();
        handle
            .cancel(Some("the user pressed Esc".into()))
            .await
            .unwrap();
        let pid: i32 = std::fs::read_to_string(ws.path("fake/self.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = tokio::task::spawn_blocking(move || wait_gone(pid) || process_gone(pid))
            .await
            .unwrap();
        assert!(gone, "the fake agent still runs after the cancel");
        // The session is free again: the next call on it runs.
        ws.reply(2, "Back again.\n");
        let next = client
            .call("ask", json!({"prompt": "again", "session": "long"}))
            .await;
        assert_eq!(answer(&next), "Back again.", "{next:?}");
        client.close().await;
    });
    assert!(
        ws.saved_messages().contains("[turn cancelled by the user]"),
        "{}",
        ws.saved_messages()
    );
    ws.assert_no_leftovers();
}

#[test]
fn a_turn_at_its_iteration_cap_says_why_it_stopped() {
    let ws = Workspace::new();
    ws.reply(1, super::call("ls", json!({"path": "."})));
    block(async {
        let args = ["--backend", "fake", "--max-iterations", "1"];
        let client = start(&ws, &args, Behaviour::default(), &[]).await;
        let result = client.call("ask", json!({"prompt": "look"})).await;
        assert_eq!(
            structured(&result)["stop_reason"],
            "max_iterations",
            "{result:?}"
        );
        let note = structured(&result)["note"].as_str().unwrap().to_string();
        assert!(note.contains("(the --max-iterations cap)"), "{note}");
        client.close().await;
    });
}

#[test]
fn a_call_over_its_timeout_is_stopped_and_says_so() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    block(async {
        let client = start(
            &ws,
            &["--backend", "fake", "--timeout", "1"],
            Behaviour::default(),
            &[],
        )
        .await;
        let result = client.call("ask", json!({"prompt": "wait"})).await;
        assert_eq!(structured(&result)["stop_reason"], "timeout", "{result:?}");
        // Nothing was answered, and the note does not pretend otherwise.
        assert_eq!(answer(&result), "", "{result:?}");
        assert_eq!(
            structured(&result)["note"],
            "the turn was stopped after 1s (--timeout), before it had answered anything"
        );
        client.close().await;
    });
    // Saved as what it was: nobody cancelled it.
    let saved = ws.saved_messages();
    assert!(
        saved.contains("[turn stopped after 1s (--timeout)]") && !saved.contains("cancelled"),
        "{saved}"
    );
    ws.assert_no_leftovers();
}

/// A reply to a session whose first ask still runs (not saved yet) waits for it, as a
/// second call on one session does, rather than being refused as no saved session.
#[test]
fn a_reply_waits_for_the_ask_that_starts_its_session() {
    let ws = gated(&["a", "b"]);
    block(async {
        let client = start(&ws, &["--backend", "gated"], Behaviour::default(), &[]).await;
        let (first, second) = tokio::join!(
            client.call("ask", json!({"prompt": "gate:a", "session": "lk"})),
            async {
                let a = ws.path("fake/started.a");
                tokio::task::spawn_blocking(move || wait_file(&a))
                    .await
                    .unwrap();
                let params = rmcp::model::CallToolRequestParams::new("reply").with_arguments(
                    json!({"session": "lk", "prompt": "gate:b"})
                        .as_object()
                        .cloned()
                        .unwrap(),
                );
                let request = rmcp::model::ClientRequest::CallToolRequest(
                    rmcp::model::CallToolRequest::new(params),
                );
                let reply = client
                    .service
                    .send_cancellable_request(
                        request,
                        rmcp::service::PeerRequestOptions::no_options(),
                    )
                    .await
                    .unwrap();
                // A call sent after the reply and answered: the server has read the reply
                // by then, while the ask still runs.
                client.call("backends", json!({})).await;
                release(&ws, "a");
                release_when_started(&ws, "b").await;
                reply.await_response().await.unwrap()
            }
        );
        assert_eq!(answer(&first), "released a");
        let rmcp::model::ServerResult::CallToolResult(second) = second else {
            panic!("{second:?}")
        };
        assert_eq!(answer(&second), "released b", "{second:?}");
        client.close().await;
    });
}

/// Releases the fake agent waiting at gate `name` once it has started.
async fn release_when_started(ws: &Workspace, name: &str) {
    let started = ws.path(&format!("fake/started.{name}"));
    tokio::task::spawn_blocking(move || wait_file(&started))
        .await
        .unwrap();
    release(ws, name);
}

/// Releases the fake agent waiting at gate `name`.
fn release(ws: &Workspace, name: &str) {
    let mut gate = std::fs::OpenOptions::new()
        .write(true)
        .open(ws.path(&format!("fake/gate.{name}")))
        .unwrap();
    writeln!(gate, "go").unwrap();
}

/// A workspace whose backend `gated` waits at the FIFO gates `gates`.
fn gated(gates: &[&str]) -> Workspace {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.gated]\ncommand = \"{}\"\ntimeout_s = 300\n",
        crate::common::fixture("agents/blocking.sh").display()
    ));
    for gate in gates {
        let path = ws.path(&format!("fake/gate.{gate}"));
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.unwrap().success());
    }
    ws
}

#[test]
fn two_sessions_run_side_by_side_and_one_session_runs_one_call_at_a_time() {
    let ws = gated(&["a", "b", "c"]);
    block(async {
        let client = start(&ws, &["--backend", "gated"], Behaviour::default(), &[]).await;
        let ask = |session: &'static str, gate: &'static str| {
            client.call(
                "ask",
                json!({"prompt": format!("gate:{gate}"), "session": session}),
            )
        };
        // `one` asks at gate a, then at gate b; `two` asks at gate c meanwhile.
        let (first, second, other, ()) =
            tokio::join!(ask("one", "a"), ask("one", "b"), ask("two", "c"), async {
                let (a, c) = (ws.path("fake/started.a"), ws.path("fake/started.c"));
                // Both sessions' agents run at once; `one`'s second call has not started.
                tokio::task::spawn_blocking(move || {
                    wait_file(&a);
                    wait_file(&c);
                })
                .await
                .unwrap();
                assert!(
                    !ws.path("fake/started.b").exists(),
                    "one session ran two calls at once"
                );
                release(&ws, "c");
                release(&ws, "a");
                release_when_started(&ws, "b").await;
            });
        assert_eq!(answer(&first), "released a");
        assert_eq!(answer(&second), "released b");
        assert_eq!(answer(&other), "released c");
        client.close().await;
    });
}

/// A failed turn's prompt stays in its session: the error says so in a client's terms (it has
/// no /retry nor /undo), not in the REPL's.
#[test]
fn a_failed_turn_says_its_prompt_stays_in_the_session() {
    let ws = Workspace::new();
    ws.fake_file("rc.1", "1\n");
    block(async {
        let client = start(&ws, &["--backend", "fake"], Behaviour::default(), &[]).await;
        let failed = client
            .call("ask", json!({"prompt": "this one fails", "session": "s"}))
            .await;
        assert_eq!(failed.is_error, Some(true), "{failed:?}");
        let said = text(&failed);
        assert!(
            said.ends_with(
                "\n[the prompt stays in session s, unanswered: a reply in the session goes after it]"
            ) && !said.contains("/retry"),
            "{said}"
        );
        client.close().await;
    });
}
