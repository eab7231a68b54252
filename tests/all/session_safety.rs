//! Sessions that never lose a turn: one run per session at a time (a second run is refused,
//! or waits with `--wait-session`), a session whose first save was cut off is resumed under
//! its own name, and a save killed before its rename is resumed from its temporary file.

use std::process::Stdio;

use crate::common::{poll, Workspace};

#[test]
fn a_session_in_use_is_refused_or_waited_for_and_no_turn_is_lost() {
    let ws = Workspace::new();
    ws.gated_backend();
    ws.reply(0, "ok\n");
    // The first run holds session `dup` until the test opens the gate.
    let mut first = ws
        .cmd(&["--backend", "slow", "--session", "dup", "first"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(poll(|| ws.gate_reached().then_some(())).is_some());

    let refused = ws.run(&["--backend", "slow", "--session", "dup", "refused"]);
    refused.expect_code(2);
    let holder = format!(
        "session dup is in use by process {}: wait for it to finish, or pass --wait-session \
         to wait for it",
        first.id()
    );
    assert!(refused.stderr().contains(&holder), "{}", refused.stderr());

    let err = ws.path("waiter.err");
    let mut waiter = ws
        .cmd(&[
            "--backend",
            "slow",
            "--session",
            "dup",
            "--wait-session",
            "third",
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let waiting = format!(
        "[waiting for session dup: it is in use by process {}]",
        first.id()
    );
    assert!(
        poll(|| std::fs::read_to_string(&err)
            .ok()
            .filter(|e| e.contains(&waiting)))
        .is_some(),
        "the waiting run never said so: {:?}",
        std::fs::read_to_string(&err)
    );
    ws.open_gate();
    assert!(first.wait().unwrap().success());
    assert!(waiter.wait().unwrap().success());

    // Both turns are saved, the second run saw the first one's, the refused one left nothing.
    let saved = ws.saved_session();
    assert_eq!(saved["turns"], 2, "{saved}");
    let messages = ws.saved_messages();
    assert!(
        messages.contains("first") && messages.contains("third") && !messages.contains("refused"),
        "{messages}"
    );
}

#[test]
fn a_session_stopped_before_its_first_save_keeps_its_name_and_log() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    // What a run killed during its first turn leaves: the folder and its log, no session file.
    let folder = ws.path("data/agent-loop/sessions/fresh");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("log.jsonl"), "{\"event\":\"user_message\"}\n").unwrap();
    let run = ws.run(&["--backend", "fake", "--session", "fresh", "again"]);
    run.expect_code(0);
    assert!(
        run.stderr().contains("[session fresh has no saved turn"),
        "{}",
        run.stderr()
    );
    let saved = ws.saved_session();
    assert_eq!(saved["name"], "fresh", "{saved}");
    assert_eq!(saved["turns"], 1, "{saved}");
    let log = std::fs::read_to_string(folder.join("log.jsonl")).unwrap();
    assert!(log.starts_with("{\"event\":\"user_message\"}\n") && log.lines().count() > 1);
}

#[test]
fn a_save_killed_before_its_rename_is_resumed_by_the_next_run() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    ws.run(&["--backend", "fake", "--session", "cut", "first"])
        .expect_code(0);
    let folder = ws.path("data/agent-loop/sessions/cut");
    let saved = folder.join("session.json");
    // What a run killed between writing its second save and renaming it leaves: the older
    // session file, and the whole newer one under a dead process's temporary name.
    let mut second = ws.saved_session();
    second["turns"] = 2.into();
    second["updated"] = (second["updated"].as_u64().unwrap() + 1).into();
    let tmp = folder.join(".session.json.agent-loop-999999999.tmp");
    std::fs::write(&tmp, second.to_string()).unwrap();
    // Another session's leftover is not this run's business: no start reads every folder.
    let other = ws.path("data/agent-loop/sessions/other");
    std::fs::create_dir_all(&other).unwrap();
    let other_tmp = other.join(".session.json.agent-loop-999999999.tmp");
    std::fs::write(&other_tmp, "{ half").unwrap();

    let run = ws.run(&["--backend", "fake", "--session", "cut", "third"]);
    run.expect_code(0);
    assert!(
        run.stderr().contains("[continuing session cut (2 turns"),
        "{}",
        run.stderr()
    );
    let text = std::fs::read_to_string(&saved).unwrap();
    let session: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(session["turns"], 3, "{session}");
    assert!(!tmp.exists());
    assert!(other_tmp.exists());
}
