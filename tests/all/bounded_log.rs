//! A backend that floods: the session log obeys `max_output_bytes` like memory does, notes
//! what was dropped in one record, and holds the lines it keeps once.

use crate::common::{fixture, Workspace};

#[test]
fn a_flood_leaves_a_log_bounded_by_the_cap_with_one_note_of_what_was_dropped() {
    let ws = Workspace::new();
    let cap = 100_000u64;
    let flood = 20_000_000u64;
    ws.add_config(&format!(
        "[backends.flood]\ncommand = '{}'\nmax_output_bytes = {cap}\ntimeout_s = 600\n",
        fixture("agents/flood.sh").display()
    ));
    let mut cmd = ws.cmd(&["--backend", "flood", "--session", "f", "--quiet", "go"]);
    cmd.env("FLOOD_BYTES", flood.to_string());
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let log = ws.path("data/agent-loop/sessions/f/log.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    let dropped: Vec<_> = records
        .iter()
        .filter(|r| r["event"] == "backend_output_dropped")
        .collect();
    assert_eq!(dropped.len(), 1, "{kinds:?}");
    assert_eq!(dropped[0]["stdout_dropped_bytes"], flood - cap);
    // The lines are logged once, in the raw record, not one record per line as well.
    assert!(!kinds.contains(&"assistant_delta"), "{kinds:?}");
    // The raw record and the answer each hold at most the cap, plus JSON framing.
    let size = text.len() as u64;
    assert!(
        size < 2 * cap + 10_000,
        "log of {size} bytes for a cap of {cap}"
    );
}

/// The answer of a flood is its stdout: the raw record does not repeat it, so the log of a
/// flood a few times the cap stays under twice the cap (it was just over: the answer and the
/// raw record each held the cap, and JSON escaping adds to both), and says what it left out.
#[test]
fn the_raw_record_shares_the_cap_with_the_answer() {
    let ws = Workspace::new();
    let cap = 100_000u64;
    let flood = 5 * cap;
    ws.add_config(&format!(
        "[backends.flood]\ncommand = '{}'\nmax_output_bytes = {cap}\n",
        fixture("agents/flood.sh").display()
    ));
    let mut cmd = ws.cmd(&["--backend", "flood", "--session", "f", "--quiet", "go"]);
    cmd.env("FLOOD_BYTES", flood.to_string());
    ws.run_cmd(cmd).expect_code(0);
    let text = std::fs::read_to_string(ws.path("data/agent-loop/sessions/f/log.jsonl")).unwrap();
    let size = text.len() as u64;
    assert!(size < 2 * cap, "log of {size} bytes for a cap of {cap}");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let find = |kind: &str| {
        records
            .iter()
            .find(|r| r["event"] == kind)
            .unwrap_or_else(|| panic!("no {kind} record in {text:.2000}"))
    };
    // The answer is all there, and the note says what was dropped and what was left out.
    let answer = find("assistant_message")["text"].as_str().unwrap();
    assert!(
        answer.starts_with(&format!("{:0999}\n", 0)),
        "{answer:.100}"
    );
    assert!(
        answer.contains("bytes were dropped past max_output_bytes"),
        "{answer:.100}"
    );
    let raw = &find("backend_output")["raw"];
    let note = find("backend_output_dropped");
    assert_eq!(note["stdout_dropped_bytes"], flood - cap);
    let logged = raw["stdout"].as_str().unwrap().len() as u64;
    let unlogged = note["stdout_unlogged_bytes"].as_u64().unwrap();
    assert_eq!(logged + unlogged, cap, "{note}");
    assert!(unlogged >= cap - 200, "the answer holds the stdout: {note}");
}

/// A JSON backend's answer is an extract of its events: its raw record keeps every event (up
/// to the cap per stream), even when stdout and stderr together pass the cap.
#[test]
fn a_json_backend_keeps_its_events_in_the_raw_record() {
    let ws = Workspace::new();
    let cap = 100_000usize;
    ws.add_config(&format!(
        "[backends.events]\ncommand = '{}'\noutput = \"jsonl\"\njson_text = \"[type=result].text\"\n\
         max_output_bytes = {cap}\n",
        fixture("agents/scripted.sh").display()
    ));
    let mut events: String = (0..1200)
        .map(|n| {
            format!(
                "{{\"type\":\"progress\",\"n\":{n},\"pad\":\"{}\"}}\n",
                "x".repeat(30)
            )
        })
        .collect();
    events.push_str("{\"type\":\"result\",\"text\":\"done\"}\n");
    assert!(events.len() < cap && events.len() > cap / 2);
    ws.reply(0, &events);
    ws.fake_file("stderr.1", "e".repeat(cap / 2));
    ws.run(&["--backend", "events", "--session", "j", "--quiet", "go"])
        .expect_code(0);
    let log = ws.session_log("j");
    let raw = &log
        .iter()
        .find(|r| r["event"] == "backend_output")
        .expect("a raw record")["raw"];
    assert_eq!(raw["stdout"].as_str().unwrap(), events);
    assert_eq!(raw["stderr"].as_str().unwrap().len(), cap / 2);
    assert!(
        !log.iter().any(|r| r["event"] == "backend_output_dropped"),
        "nothing was dropped or left out"
    );
}
