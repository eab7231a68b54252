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
            let run = ws.run(&["--backend", "fake", "--no-save", "--output", "jsonl", "task"]);
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
