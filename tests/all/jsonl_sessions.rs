//! `--output jsonl` in the REPL across `/clear` and `/load`: the stream on stdout says what
//! the session logs say, a `session_clear` for the session that ended and a `session_start`
//! with the id (and turn count) of the one now in use. The REPL needs a terminal, so the
//! commands are typed on a pty (util-linux `script`, fed through a pipe).

use serde_json::Value;

use crate::common::{Pty, Workspace};

/// The records of a JSONL stream, skipping the terminal's echo of what was typed.
fn records(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.find('{').map(|at| &l[at..]))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// (event, session_id, turn) of the records that say which session is in use.
fn sessions(records: &[Value]) -> Vec<(String, String, u64)> {
    records
        .iter()
        .filter(|r| r["event"] != "backend_output")
        .map(|r| {
            (
                r["event"].as_str().unwrap().to_string(),
                r["session_id"].as_str().unwrap().to_string(),
                r["turn"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn clear_and_load_are_in_the_jsonl_stream_as_in_the_session_logs() {
    let ws = Workspace::new();
    ws.reply(0, "noted\n");
    let mut pty = Pty::spawn(
        &ws,
        &[],
        &["--backend", "fake", "--session", "one", "--output", "jsonl"],
    );
    pty.wait_for("\"event\":\"session_start\"");
    pty.send("first task\n/clear\nsecond task\n/load one\nthird task\nquit\n");
    let (code, out) = pty.finish();
    let out = String::from_utf8_lossy(&out).into_owned();
    assert_eq!(code, 0, "{out}");
    let stream = records(&out);
    let kinds: Vec<&str> = stream
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    let at = |kind: &str, n: usize| {
        stream
            .iter()
            .filter(|r| r["event"] == kind)
            .nth(n)
            .unwrap_or_else(|| panic!("no {kind} #{n} in {kinds:?}"))
    };
    let (one, two) = (
        &at("session_start", 0)["session_id"],
        &at("session_start", 1)["session_id"],
    );
    assert_ne!(one, two);
    // /clear ends session one, and the second task is in the new session.
    assert_eq!(at("session_clear", 0)["session"], "one");
    assert_eq!(&at("session_clear", 0)["session_id"], one);
    assert_eq!(&at("user_message", 1)["session_id"], two);
    assert_eq!(at("user_message", 1)["turn"], 1);
    // /load one continues it: its id and its second turn.
    assert_eq!(at("session_start", 2)["session"], "one");
    assert_eq!(&at("session_start", 2)["session_id"], one);
    assert_eq!(&at("user_message", 2)["session_id"], one);
    assert_eq!(at("user_message", 2)["turn"], 2);
    // The stream, split by session, is what each session's log holds.
    let log = |name: &str| {
        let path = ws.path(&format!("data/agent-loop/sessions/{name}/log.jsonl"));
        records(&std::fs::read_to_string(path).unwrap())
    };
    let new_name = at("session_start", 1)["session"].as_str().unwrap();
    let of = |id: &Value| {
        sessions(&stream)
            .into_iter()
            .filter(|(_, s, _)| s == id.as_str().unwrap())
            .filter(|(e, ..)| e != "assistant_delta")
            .collect::<Vec<_>>()
    };
    assert_eq!(of(one), sessions(&log("one")));
    assert_eq!(of(two), sessions(&log(new_name)));
}

/// `/backend` and `/model` between turns: the records of the next turn name the backend and
/// model it talks to, not the ones the REPL started with. A model chosen for one backend is
/// not passed to the next.
#[test]
fn backend_and_model_switches_are_in_the_jsonl_stream() {
    let ws = Workspace::new();
    ws.takes_models("fake");
    ws.reply(0, "noted\n");
    ws.add_config(&format!(
        "[backends.other]\ncommand = \"{}\"\nmodel_args = [\"--model\", \"{{model}}\"]\n",
        crate::common::fixture("agents/scripted.sh").display()
    ));
    let mut pty = Pty::spawn(&ws, &[], &["--backend", "fake", "--output", "jsonl"]);
    pty.wait_for("\"event\":\"session_start\"");
    pty.send("/model m1\nfirst task\n/backend other\nsecond task\n/model m2\nthird task\nquit\n");
    let (code, out) = pty.finish();
    let out = String::from_utf8_lossy(&out).into_owned();
    assert_eq!(code, 0, "{out}");
    let users: Vec<(Value, Value)> = records(&out)
        .into_iter()
        .filter(|r| r["event"] == "user_message")
        .map(|r| (r["backend"].clone(), r["model"].clone()))
        .collect();
    assert_eq!(
        users,
        [
            ("fake".into(), "m1".into()),
            ("other".into(), Value::Null),
            ("other".into(), "m2".into()),
        ],
        "{out}"
    );
}
