//! Approval at the calling client: an elicitation allowed and declined, a client without
//! elicitation (refused, unless an --allow rule covers the call), the same for the question
//! an ACP agent backend asks (its `session/request_permission`), the client's root as the
//! confinement, and progress while the turn runs.

use serde_json::json;

use super::{answer, block, call, start, structured, text, Behaviour};
use crate::common::Workspace;
use crate::http::{KEY, KEY_ENV};

/// The fake agent asks to write `out.txt`, then answers "done".
fn writes(ws: &Workspace) {
    ws.reply(
        1,
        call("write", json!({"path": "out.txt", "content": "written\n"})),
    );
    ws.reply(2, "done\n");
}

#[test]
fn an_elicitation_allowed_runs_the_call() {
    let ws = Workspace::new();
    writes(&ws);
    let behaviour = Behaviour {
        elicit: Some("allow"),
        ..Behaviour::default()
    };
    block(async {
        let client = start(&ws, &["--backend", "fake"], behaviour, &[]).await;
        let result = client.call("ask", json!({"prompt": "write it"})).await;
        assert_eq!(answer(&result), "done", "{result:?}");
        let asked = client.seen.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        // What the write puts into the file is shown, not only its path.
        assert_eq!(
            asked[0],
            "Allow write? It asks to write out.txt (1 line):\n  | written\\n"
        );
        client.close().await;
    });
    assert_eq!(
        std::fs::read_to_string(ws.work().join("out.txt")).unwrap(),
        "written\n"
    );
}

#[test]
fn an_elicitation_declined_refuses_the_call_and_the_model_is_told() {
    let ws = Workspace::new();
    writes(&ws);
    let behaviour = Behaviour {
        elicit: Some("decline"),
        ..Behaviour::default()
    };
    block(async {
        let client = start(&ws, &["--backend", "fake"], behaviour, &[]).await;
        let result = client.call("ask", json!({"prompt": "write it"})).await;
        assert_eq!(structured(&result)["stop_reason"], "end_turn");
        // The calling model is told which call did not run, whatever the answer says.
        assert_eq!(answer(&result), "done");
        assert_eq!(
            structured(&result)["refused"],
            json!([{"tool": "write", "call": "out.txt", "reason": "the user declined it"}])
        );
        assert_eq!(client.seen.asked.lock().unwrap().len(), 1);
        client.close().await;
    });
    assert!(!ws.work().join("out.txt").exists());
    assert!(
        ws.prompt(2).contains("the user declined it"),
        "{}",
        ws.prompt(2)
    );
}

#[test]
fn without_elicitation_only_what_a_rule_allows_runs() {
    let ws = Workspace::new();
    writes(&ws);
    block(async {
        let client = start(&ws, &["--backend", "fake"], Behaviour::default(), &[]).await;
        let result = client.call("ask", json!({"prompt": "write it"})).await;
        let refused = &structured(&result)["refused"];
        assert_eq!(refused[0]["tool"], "write", "{result:?}");
        assert!(
            refused[0]["reason"]
                .as_str()
                .unwrap()
                .contains("offers no elicitation"),
            "{result:?}"
        );
        client.close().await;
    });
    assert!(!ws.work().join("out.txt").exists());
    assert!(
        ws.prompt(2).contains("offers no elicitation"),
        "{}",
        ws.prompt(2)
    );
    // The same call under `--allow write`: it runs, and nobody is asked.
    ws.fake_file("count", "0");
    block(async {
        let client = start(
            &ws,
            &["--backend", "fake", "--allow", "write"],
            Behaviour::default(),
            &[],
        )
        .await;
        let result = client.call("ask", json!({"prompt": "write it"})).await;
        assert_eq!(answer(&result), "done");
        client.close().await;
    });
    assert!(ws.work().join("out.txt").exists());
}

/// `agent-loop mcp serve ARGS` on the fake ACP agent (backend `acp`), one `ask` whose prompt
/// makes the agent ask permission to write notes.txt: the agent's answer names the option it
/// was given, and the questions the client was sent.
fn acp_permission(args: &[&str], behaviour: Behaviour) -> (String, Vec<String>) {
    let ws = crate::acp::acp("");
    let mut argv = vec!["--backend", "acp"];
    argv.extend(args);
    block(async {
        let client = start(&ws, &argv, behaviour, &[]).await;
        let result = client.call("ask", json!({"prompt": "permission"})).await;
        let asked = client.seen.asked.lock().unwrap().clone();
        client.close().await;
        (answer(&result), asked)
    })
}

#[test]
fn an_acp_agents_permission_question_reaches_the_client_as_an_elicitation() {
    let elicit = |answer| Behaviour {
        elicit: Some(answer),
        ..Behaviour::default()
    };
    let (answer, asked) = acp_permission(&[], elicit("allow"));
    assert_eq!(answer, "permission: proceed_once");
    assert_eq!(asked.len(), 1, "{asked:?}");
    // The question shows the agent's tool call as the terminal does: its title and kind, and
    // the whole of its input.
    assert!(asked[0].contains("WriteFile notes.txt [edit]"), "{asked:?}");
    assert!(
        asked[0].contains(r#"notes.txt","content":"hello""#),
        "{asked:?}"
    );
    let (answer, asked) = acp_permission(&[], elicit("decline"));
    assert_eq!(answer, "permission: cancel");
    assert_eq!(asked.len(), 1, "{asked:?}");
}

#[test]
fn without_elicitation_an_acp_agents_question_follows_the_rules_of_a_pipe() {
    for (args, option) in [
        (&[][..], "cancel"),
        (&["--yes"][..], "proceed_once"),
        (&["--allow", "edit:*notes.txt*"][..], "proceed_once"),
        (&["--allow", "edit:*other*"][..], "cancel"),
    ] {
        let (answer, asked) = acp_permission(args, Behaviour::default());
        assert_eq!(answer, format!("permission: {option}"), "{args:?}");
        assert!(asked.is_empty(), "{asked:?}");
    }
}

#[test]
fn the_clients_root_is_where_the_file_tools_work_and_stay() {
    let ws = Workspace::new();
    let root = ws.work().join("project");
    std::fs::create_dir_all(&root).unwrap();
    ws.reply(
        1,
        call(
            "write",
            json!({"path": "../escaped.txt", "content": "no\n"}),
        ),
    );
    ws.reply(
        2,
        call("write", json!({"path": "inside.txt", "content": "yes\n"})),
    );
    ws.reply(3, "done\n");
    let behaviour = Behaviour {
        root: Some(root.clone()),
        ..Behaviour::default()
    };
    block(async {
        let client = start(&ws, &["--backend", "fake", "--yes"], behaviour, &[]).await;
        let result = client.call("ask", json!({"prompt": "write"})).await;
        assert_eq!(answer(&result), "done", "{result:?}");
        client.close().await;
    });
    assert!(root.join("inside.txt").exists());
    assert!(!ws.work().join("escaped.txt").exists());
}

#[test]
fn a_clients_root_outside_the_given_root_is_refused() {
    // --root bounds what a client may choose: its root may narrow the confinement, never
    // widen it.
    let ws = Workspace::new();
    let given = ws.work().join("project");
    std::fs::create_dir_all(given.join("sub")).unwrap();
    let given_arg = given.to_str().unwrap().to_string();
    for (root, runs) in [(ws.work(), false), (given.join("sub"), true)] {
        let behaviour = Behaviour {
            root: Some(root.clone()),
            ..Behaviour::default()
        };
        ws.reply(1, "done\n");
        block(async {
            let args = ["--backend", "fake", "--root", &given_arg];
            let client = start(&ws, &args, behaviour, &[]).await;
            let result = client.call("ask", json!({"prompt": "hi"})).await;
            if runs {
                assert_eq!(answer(&result), "done", "{result:?}");
            } else {
                assert_eq!(result.is_error, Some(true), "{result:?}");
                assert!(text(&result).contains("is not inside --root"), "{result:?}");
            }
            client.close().await;
        });
    }
    assert_eq!(ws.runs(), 1, "the fake agent ran for the refused root");
}

#[test]
fn progress_tells_the_client_of_the_tool_calls_as_they_run() {
    let ws = Workspace::new();
    writes(&ws);
    block(async {
        let client = start(
            &ws,
            &["--backend", "fake", "--yes"],
            Behaviour::default(),
            &[],
        )
        .await;
        let result = client.call("ask", json!({"prompt": "write it"})).await;
        assert_eq!(answer(&result), "done");
        // The first one is never held back by the rate limit.
        let seen = client.seen.progress.clone();
        let first = super::eventually(move || seen.lock().unwrap().first().cloned()).await;
        assert!(
            first.contains("write") && first.contains("out.txt"),
            "{first}"
        );
        client.close().await;
    });
}

#[test]
fn the_question_sent_to_the_client_never_holds_a_key() {
    // The model proposes a command that quotes a backend's key: the form the calling client
    // shows (and may keep in its transcript) has it masked, as the events do.
    let ws = Workspace::new();
    ws.add_config(&format!(
        "[backends.api]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         api_key_env = \"{KEY_ENV}\"\n"
    ));
    let command = format!("curl -H 'Authorization: Bearer {KEY}' https://example.invalid/");
    ws.reply(1, call("bash", json!({ "command": command })));
    ws.reply(2, "done\n");
    let behaviour = Behaviour {
        elicit: Some("decline"),
        ..Behaviour::default()
    };
    block(async {
        let client = start(&ws, &["--backend", "fake"], behaviour, &[(KEY_ENV, KEY)]).await;
        client.call("ask", json!({"prompt": "fetch it"})).await;
        let asked = client.seen.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(!asked[0].contains(KEY), "{asked:?}");
        assert!(asked[0].contains("Bearer [REDACTED]"), "{asked:?}");
        client.close().await;
    });
}
