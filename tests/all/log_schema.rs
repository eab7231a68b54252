//! The JSONL log schema: session ids that are ids, and the keys of every record.

use serde_json::Value;

use crate::common::Workspace;

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn is_id(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[test]
fn session_ids_are_random_ids_not_names() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let ids: Vec<Value> = (0..2)
        .map(|_| {
            let run = ws.run(&[
                "--backend",
                "fake",
                "--no-save",
                "--output",
                "jsonl",
                "task",
            ]);
            run.expect_code(0);
            let records = lines(&run.stdout());
            let id = records[0]["session_id"].clone();
            assert!(is_id(&id), "{id}");
            assert!(records.iter().all(|r| r["session_id"] == id));
            id
        })
        .collect();
    assert_ne!(ids[0], ids[1], "two --no-save runs share a session id");

    // A saved session keeps its id in session.json, and its log uses it, across runs.
    ws.run(&["--backend", "fake", "--session", "kept", "one"])
        .expect_code(0);
    ws.run(&["--session", "kept", "two"]).expect_code(0);
    let saved = ws.saved_session();
    assert!(is_id(&saved["id"]), "{saved}");
    let log = std::fs::read_to_string(ws.path("data/agent-loop/sessions/kept/log.jsonl")).unwrap();
    let records = lines(&log);
    assert!(records.len() > 4);
    for r in &records {
        assert_eq!(r["session_id"], saved["id"], "{r}");
    }
}

/// The one table of docs/sessions-and-logs.md is the schema the library writes
/// (`agent_loop::jsonl::SCHEMA`, which a unit test checks every record against).
#[test]
fn the_documented_table_is_the_schema() {
    use agent_loop::jsonl::{COMMON, SCHEMA, VERSION};
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sessions-and-logs.md"),
    )
    .unwrap();
    let table = doc
        .split("## The JSONL schema")
        .nth(1)
        .expect("the schema section");
    assert!(table.contains(&format!("version {VERSION}")), "the version");
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---") && !l.starts_with("| `event`"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    assert_eq!(rows[0][0], "(every record)");
    assert_eq!(ticked(rows[0][2]), COMMON);
    let documented: Vec<(String, String, Vec<String>)> = rows[1..]
        .iter()
        .map(|r| (ticked(r[0]).concat(), r[1].to_string(), ticked(r[2])))
        .collect();
    let schema: Vec<(String, String, Vec<String>)> = SCHEMA
        .iter()
        .map(|(e, a, keys)| {
            (
                e.to_string(),
                a.to_string(),
                keys.iter().map(|k| k.to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(documented, schema);
}

/// The session's own log opens with `session_start`, and `/clear` ends it with
/// `session_clear`; every record has the common keys.
#[test]
fn the_session_log_starts_and_clears() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let (code, screen) = crate::repl::repl(
        &ws,
        "--backend fake --session one",
        "first\n/clear\n/exit\n",
    );
    assert_eq!(code, 0, "{screen}");
    let log = std::fs::read_to_string(ws.path("data/agent-loop/sessions/one/log.jsonl")).unwrap();
    let records = lines(&log);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"session_start"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"session_clear"), "{kinds:?}");
    assert_eq!(records[0]["session"], "one");
    for r in &records {
        for key in agent_loop::jsonl::COMMON {
            assert!(r.get(key).is_some(), "no {key} in {r}");
        }
    }
}

/// A log of schema version 1 (no `v`, `level` or `actor`: fixtures/logs/v1.jsonl) in a saved
/// session is no obstacle: the session resumes, is listed and loads with `/load`, and its log
/// keeps the old lines as they were, with the current version's records after them.
#[test]
fn a_log_of_an_earlier_version_is_kept_and_appended_to() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    ws.run(&["--backend", "fake", "--session", "old", "one"])
        .expect_code(0);
    let path = ws.path("data/agent-loop/sessions/old/log.jsonl");
    let old = std::fs::read_to_string(crate::common::fixture("logs/v1.jsonl")).unwrap();
    std::fs::write(&path, &old).unwrap();
    ws.run(&["--session", "old", "two"]).expect_code(0);
    let listed = ws.run(&["sessions"]);
    listed.expect_code(0);
    assert!(listed.stdout().contains("old"), "{}", listed.stdout());
    let (code, screen) = crate::repl::repl(&ws, "--backend fake", "/load old\nthree\n/exit\n");
    assert_eq!(code, 0, "{screen}");
    let log = std::fs::read_to_string(&path).unwrap();
    let new = log.strip_prefix(&old).expect("the old lines, as they were");
    let records = lines(new);
    let turns: Vec<&Value> = records
        .iter()
        .filter(|r| r["event"] == "user_message")
        .map(|r| &r["turn"])
        .collect();
    assert_eq!(turns, [2, 3], "{new}");
    assert!(records.iter().all(|r| r["v"] == agent_loop::jsonl::VERSION));
}
