//! Sessions across processes: resuming, listing, removing, broken files left untouched, the
//! JSONL log, and a session folder that cannot be written.

use crate::common::Workspace;

fn sessions_dir(ws: &Workspace) -> std::path::PathBuf {
    ws.path("data/agent-loop/sessions")
}

#[test]
fn a_named_session_resumes_in_a_second_process() {
    let ws = Workspace::new();
    ws.reply(1, "The first answer.\n");
    ws.reply(2, "The second answer.\n");
    ws.run(&["--backend", "fake", "--session", "work", "first question"])
        .expect_code(0);
    let run = ws.run(&["--session", "work", "second question"]);
    run.expect_code(0);
    // The backend came from the session; the prompt carries the first turn.
    let second = ws.prompt(2);
    assert!(
        second.contains(
            "User: first question\n\nAssistant: The first answer.\n\nUser: second question"
        ),
        "{second}"
    );
    assert!(
        run.stderr()
            .contains("[continuing session work (1 turn, last used "),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr()
            .contains("[session work: 2 turns, tokens unknown]"),
        "{}",
        run.stderr()
    );
}

/// A session folder copied under another name (to fork it, or a backup put back) is a session
/// of that name: its turns are saved there, the original is left as it was.
#[test]
fn a_copied_folder_is_saved_under_its_own_name() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    ws.run(&["--backend", "fake", "--session", "work", "first"])
        .expect_code(0);
    let (work, fork) = (
        sessions_dir(&ws).join("work"),
        sessions_dir(&ws).join("fork"),
    );
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .args([&work, &fork])
        .status()
        .unwrap();
    assert!(copied.success());
    let before = std::fs::read(work.join("session.json")).unwrap();
    let run = ws.run(&["--session", "fork", "second"]);
    run.expect_code(0);
    assert!(
        run.stderr()
            .contains("[session fork: 2 turns, tokens unknown]"),
        "{}",
        run.stderr()
    );
    assert_eq!(std::fs::read(work.join("session.json")).unwrap(), before);
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fork.join("session.json")).unwrap()).unwrap();
    let original: serde_json::Value = serde_json::from_slice(&before).unwrap();
    assert_eq!(saved["name"], "fork");
    assert_eq!(saved["turns"], 2);
    assert_ne!(saved["id"], original["id"]);
    let listed = ws.run(&["sessions"]);
    // Listed under its own name, not as a second `work`.
    assert!(
        listed.stdout().contains("fork") && listed.stdout().matches("work").count() == 1,
        "{}",
        listed.stdout()
    );
}

#[test]
fn continue_picks_the_most_recent_session() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    ws.run(&["--backend", "fake", "--session", "older", "one"])
        .expect_code(0);
    ws.run(&["--backend", "fake", "--session", "newer", "two"])
        .expect_code(0);
    // Make "older" the most recently used.
    ws.run(&["--session", "older", "three"]).expect_code(0);
    ws.run(&["-c", "four"]).expect_code(0);
    let last = ws.prompt(4);
    assert!(
        last.contains("User: one") && last.contains("User: three") && !last.contains("User: two"),
        "{last}"
    );
}

#[test]
fn sessions_are_listed_and_removed() {
    let ws = Workspace::new();
    ws.reply(0, "ok\nTokens: 1.5k in, 20 out\n");
    ws.run(&["--backend", "fake", "--session", "alpha", "one"])
        .expect_code(0);
    let list = ws.run(&["sessions"]);
    list.expect_code(0);
    let out = list.stdout();
    assert!(out.starts_with("NAME"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("alpha"))
        .expect("alpha listed");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[..5], ["alpha", "fake", "1", "1500", "20"], "{row}");
    ws.run(&["sessions", "rm", "alpha"]).expect_code(0);
    assert!(!sessions_dir(&ws).join("alpha").exists());
    let again = ws.run(&["sessions", "rm", "alpha"]);
    again.expect_code(2);
    assert!(
        again.stderr().contains("no session named `alpha`"),
        "{}",
        again.stderr()
    );
}

#[test]
fn a_session_another_run_uses_is_not_removed() {
    let ws = Workspace::new();
    ws.reply(0, "done\n");
    ws.run(&["--backend", "fake", "--session", "busy", "first"])
        .expect_code(0);
    // The lock another run holds: an OS lock on its file, which names that run's process.
    let locks = ws.path("data/agent-loop/sessions.locks");
    let mut held = std::fs::OpenOptions::new()
        .write(true)
        .open(locks.join("busy"))
        .unwrap();
    held.try_lock().unwrap();
    std::io::Write::write_all(&mut held, b"4242").unwrap();
    let rm = ws.run(&["sessions", "rm", "busy"]);
    rm.expect_code(2);
    assert!(
        rm.stderr()
            .contains("cannot remove session busy: it is in use by process 4242"),
        "{}",
        rm.stderr()
    );
    assert!(sessions_dir(&ws).join("busy/log.jsonl").is_file());
    drop(held);
    // Let go, the lock may still be held for a moment by a child another test thread is
    // starting: between its fork and its exec it has a copy of every file this process holds.
    let removed = crate::common::poll(|| {
        let rm = ws.run(&["sessions", "rm", "busy"]);
        (rm.code() == 0).then_some(())
    });
    assert!(removed.is_some(), "the session was never removed");
    assert!(!sessions_dir(&ws).join("busy").exists());
}

#[test]
fn a_broken_session_file_is_refused_and_left_untouched() {
    let ws = Workspace::new();
    let folder = sessions_dir(&ws).join("work");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("session.json"), "{ this is not json").unwrap();
    ws.reply(0, "fresh start\n");
    let file = folder.join("session.json");
    // Every run says the same, and none forks the session (`work-2`, then `work-3`, ...).
    for _ in 0..2 {
        let run = ws.run(&["--backend", "fake", "--session", "work", "hello"]);
        run.expect_code(2);
        let err = run.stderr();
        assert!(
            err.contains(&format!("session file {} is not valid", file.display())),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "It is left untouched: to start session work afresh, move it aside (mv {0} \
                 {0}.broken); or use another session name",
                file.display()
            )),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{ this is not json"
    );
    assert!(!sessions_dir(&ws).join("work-2").exists());
    // Moved aside as it says, the session starts afresh under its name.
    std::fs::rename(&file, folder.join("session.json.broken")).unwrap();
    ws.run(&["--backend", "fake", "--session", "work", "hello"])
        .expect_code(0);
    assert!(file.is_file());
    assert!(!ws.prompt(1).contains("not json"));
}

#[test]
fn every_event_is_logged_as_jsonl_with_raw_output() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "\x1b[33mlooking\x1b[0m\n<tool_call>{\"name\":\"ls\",\"arguments\":{}}</tool_call>\n",
    );
    ws.reply(2, "done\n");
    ws.run(&["--backend", "fake", "--session", "logged", "go"])
        .expect_code(0);
    let log = std::fs::read_to_string(sessions_dir(&ws).join("logged/log.jsonl")).unwrap();
    let events: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect();
    for e in &events {
        for key in ["ts", "event", "session_id", "turn", "backend"] {
            assert!(e.get(key).is_some(), "{key} missing in {e}");
        }
        // The session's random id, not its name.
        assert_eq!(e["session_id"], ws.saved_session()["id"]);
    }
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"tool_call")
            && kinds.contains(&"tool_result")
            && kinds.contains(&"turn_end"),
        "{kinds:?}"
    );
    let raw = events
        .iter()
        .find_map(|e| e.get("raw"))
        .expect("raw output logged");
    assert!(
        raw["stdout"].as_str().unwrap().contains("\x1b[33mlooking"),
        "{raw}"
    );
}

#[test]
fn log_flag_writes_elsewhere_and_no_save_writes_nothing() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let log = ws.path("custom.jsonl");
    ws.run(&["--backend", "fake", "--log", log.to_str().unwrap(), "go"])
        .expect_code(0);
    assert!(std::fs::read_to_string(&log).unwrap().lines().count() >= 4);
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let run = ws.run(&["--backend", "fake", "--no-save", "go"]);
    run.expect_code(0);
    assert!(!ws.path("data").exists());
    assert!(run.stderr().contains("not saved]"), "{}", run.stderr());
}

#[test]
fn an_unwritable_session_folder_is_a_clear_error_and_the_answer_still_arrives() {
    let ws = Workspace::new();
    // A file where the sessions folder should be: not even root can create folders in it.
    std::fs::create_dir_all(ws.path("data/agent-loop")).unwrap();
    std::fs::write(sessions_dir(&ws), "in the way").unwrap();
    ws.reply(0, "the answer\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(1);
    assert_eq!(run.stdout(), "the answer\n");
    assert!(
        run.stderr().contains("cannot save session file"),
        "{}",
        run.stderr()
    );
    assert!(run.stderr().contains("Not a directory"), "{}", run.stderr());
    // The file in the way is untouched.
    assert_eq!(
        std::fs::read_to_string(sessions_dir(&ws)).unwrap(),
        "in the way"
    );
    ws.assert_no_leftovers();
}

#[test]
fn completions_come_from_the_flag_definitions() {
    let ws = Workspace::new();
    for shell in ["bash", "zsh", "fish"] {
        let run = ws.run_cmd({
            let mut c = ws.cmd(&[]);
            c.args(["completions", shell]);
            c
        });
        run.expect_code(0);
        assert!(run.stdout().contains("max-iterations"), "{shell}");
        assert!(run.stdout().contains("agent-loop"), "{shell}");
        // The demo agent behind the `demo` backend is not a command for people.
        assert!(!run.stdout().contains("demo-agent"), "{shell}");
    }
}

#[test]
fn api_keys_are_redacted_from_displays_logs_and_session_files() {
    let ws = Workspace::new();
    let secret = "sk-ant-test-0123456789abcdef";
    ws.reply(1, format!("I saw {secret} in the env.\n<tool_call>{{\"name\":\"bash\",\"arguments\":{{\"command\":\"echo $ANTHROPIC_API_KEY\"}}}}</tool_call>\n"));
    ws.reply(2, format!("The key is {secret}.\n"));
    let mut cmd = ws.cmd(&[
        "--backend",
        "fake",
        "--yes",
        "--session",
        "secret",
        "show me the key",
    ]);
    cmd.env("ANTHROPIC_API_KEY", secret);
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The key is [REDACTED].\n");
    assert!(!run.stderr().contains(secret), "{}", run.stderr());
    let folder = sessions_dir(&ws).join("secret");
    for file in ["session.json", "log.jsonl"] {
        let text = std::fs::read_to_string(folder.join(file)).unwrap();
        assert!(!text.contains(secret), "{file} holds the key:\n{text}");
        assert!(text.contains("[REDACTED]"), "{file}");
    }
}

#[test]
fn a_repl_left_or_cleared_before_any_task_saves_no_session() {
    let ws = Workspace::new();
    for keys in ["exit\n", "clear\nexit\n", "/clear\n/clear\n/exit\n"] {
        let (code, screen) = crate::repl::repl(&ws, "--backend demo", keys);
        assert_eq!(code, 0, "{screen}");
        let left: Vec<_> = std::fs::read_dir(sessions_dir(&ws))
            .map(|dir| dir.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{keys:?} left {left:?}\n{screen}");
    }
    // Once a turn has happened, the session is saved, its log with it.
    let (code, screen) = crate::repl::repl(
        &ws,
        "--backend demo --session kept",
        "list the files\nclear\nexit\n",
    );
    assert_eq!(code, 0, "{screen}");
    let kept = sessions_dir(&ws).join("kept");
    assert!(kept.join("session.json").is_file(), "{screen}");
    assert!(kept.join("log.jsonl").is_file(), "{screen}");
    let all: Vec<_> = std::fs::read_dir(sessions_dir(&ws)).unwrap().collect();
    assert_eq!(all.len(), 1, "only the session with a turn: {all:?}");
}

#[test]
fn the_cut_tool_outputs_of_an_unsaved_run_are_removed_at_exit() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"seq 1 5000\"}}</tool_call>\n",
    );
    ws.reply(2, "done\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "--yes", "--no-save", "count"]);
    cmd.env("AGENT_LOOP_TOOL_RESULT_MAX_CHARS", "200");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    // The output was cut and saved as an artifact the model could read during the run...
    let tmp = ws.path("tmp").display().to_string();
    assert!(ws.prompt(2).contains(&tmp), "{}", ws.prompt(2));
    // ...and nothing of it is left in the temporary folder afterwards.
    let left: Vec<_> = std::fs::read_dir(ws.path("tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A session resumed without `--model` runs with the model it ran with; a flag still wins.
#[test]
fn a_resumed_session_runs_with_its_model() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    ws.add_config(&format!(
        "[backends.modelled]\ncommand = \"{}\"\nmodel_args = [\"--model\", \"{{model}}\"]\n",
        crate::common::fixture("agents/scripted.sh").display()
    ));
    let models = |ws: &Workspace| -> Vec<serde_json::Value> {
        ws.session_log("keep")
            .into_iter()
            .filter(|r| r["event"] == "user_message")
            .map(|r| r["model"].clone())
            .collect()
    };
    ws.run(&["--backend", "modelled", "-m", "special", "-s", "keep", "hi"])
        .expect_code(0);
    ws.run(&["-s", "keep", "again"]).expect_code(0);
    assert_eq!(models(&ws), ["special", "special"]);
    ws.run(&["-s", "keep", "-m", "other", "third"])
        .expect_code(0);
    ws.run(&["-s", "keep", "fourth"]).expect_code(0);
    assert_eq!(models(&ws), ["special", "special", "other", "other"]);
}

/// A session resumed without `--context` keeps the context mode it ran with; a flag wins.
#[test]
fn a_resumed_session_keeps_its_context_mode() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    ws.run(&["--context", "sliding:2", "-s", "keep", "hi"])
        .expect_code(0);
    ws.run(&["-s", "keep", "again"]).expect_code(0);
    assert_eq!(ws.saved_session()["context"], "sliding:2");
    ws.run(&["-s", "keep", "--context", "fresh", "third"])
        .expect_code(0);
    assert_eq!(ws.saved_session()["context"], "fresh");
}

/// The user's system prompt is kept with the session: resumed without `--system`, the
/// backend is still sent it.
#[test]
fn a_resumed_session_keeps_its_system_prompt() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let file = ws.path("persona.md");
    std::fs::write(&file, "You answer like a pirate.\n").unwrap();
    ws.run(&["--system", file.to_str().unwrap(), "-s", "keep", "hi"])
        .expect_code(0);
    std::fs::remove_file(&file).unwrap();
    ws.run(&["-s", "keep", "again"]).expect_code(0);
    assert!(ws.prompt(2).contains("like a pirate"), "{}", ws.prompt(2));
    assert_eq!(
        ws.saved_session()["system"]["text"],
        "You answer like a pirate.\n"
    );
}

/// A tool the user answered "always" for runs without asking in the resumed session too.
#[test]
fn a_resumed_session_keeps_the_tools_answered_always() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    ws.run(&["-s", "keep", "hi"]).expect_code(0);
    // As a REPL's "always" answer leaves it.
    let file = ws.path("data/agent-loop/sessions/keep/session.json");
    let mut session: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    session["always"] = serde_json::json!(["write"]);
    std::fs::write(&file, session.to_string()).unwrap();
    ws.reply(
        2,
        "<tool_call>{\"name\": \"write\", \"arguments\": {\"path\": \"out.txt\", \"content\": \"x\"}}</tool_call>\n",
    );
    ws.reply(3, "written\n");
    // No terminal to ask on: without the restored answer the write would be refused.
    ws.run(&["-s", "keep", "write it"]).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(ws.work().join("out.txt")).unwrap(),
        "x"
    );
    assert_eq!(ws.saved_session()["always"], serde_json::json!(["write"]));
}

/// A session continued from another folder than the one it last ran in says which: its
/// conversation is about that folder's files. From the same folder nothing more is said.
#[test]
fn a_session_continued_elsewhere_names_its_folder() {
    let ws = Workspace::new();
    ws.reply(0, "noted\n");
    ws.run(&["--backend", "fake", "--session", "far", "first"])
        .expect_code(0);
    let same = ws.run(&["--backend", "fake", "--session", "far", "second"]);
    assert!(!same.stderr().contains("last run in"), "{}", same.stderr());
    let other = ws.path("other");
    std::fs::create_dir(&other).unwrap();
    let mut cmd = ws.cmd(&["--backend", "fake", "-c", "third"]);
    cmd.current_dir(&other);
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let said = format!(
        ", last run in {}: its conversation is about that folder]",
        ws.work().display()
    );
    assert!(run.stderr().contains(&said), "{}", run.stderr());
}

/// A session whose backends counted some calls only: its totals say how many were not
/// counted, where they read as if those had cost nothing (one turn on a backend with no
/// token count, one on the demo, which counts).
#[test]
fn totals_over_backends_say_what_they_leave_out() {
    let ws = Workspace::new();
    ws.reply(0, "answered\n");
    ws.run(&["--backend", "fake", "-s", "mix", "hello"])
        .expect_code(0);
    std::fs::write(ws.work().join("notes.txt"), "hi\n").unwrap();
    let run = ws.run(&["--backend", "demo", "-s", "mix", "list the files here"]);
    run.expect_code(0);
    let err = run.stderr();
    let line = err
        .lines()
        .find(|l| l.starts_with("[session mix: 2 turns, tokens in "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.ends_with(" (1 backend call not counted)]"), "{line}");
    let list = ws.run(&["sessions"]);
    list.expect_code(0);
    let out = list.stdout();
    let row = out.lines().find(|l| l.starts_with("mix ")).unwrap();
    assert_eq!(row.matches('+').count(), 2, "{row}");
    assert!(
        out.contains("(+: some backend calls of the session reported no token count)"),
        "{out}"
    );
}

/// `/tokens` of a session that two backends answered says what each spent, and so does a
/// later run that continues it: the split is kept in the session file.
#[test]
fn tokens_are_told_by_backend() {
    let ws = Workspace::new();
    ws.reply(0, "noted\nTokens: 100 in, 5 out\n");
    std::fs::write(ws.work().join("notes.txt"), "hi\n").unwrap();
    ws.run(&["--backend", "fake", "-s", "split", "hello"])
        .expect_code(0);
    let one = ws.saved_session();
    assert_eq!(one["usage_by_backend"]["fake"]["input"], 100, "{one}");
    ws.run(&["--backend", "demo", "-s", "split", "list the files here"])
        .expect_code(0);
    let both = ws.saved_session();
    let demo_in = both["usage_by_backend"]["demo"]["input"].as_u64().unwrap();
    assert!(demo_in > 0, "{both}");
    assert_eq!(
        both["usage"]["input"].as_u64(),
        Some(100 + demo_in),
        "{both}"
    );
    let (code, screen) = crate::repl::repl(&ws, "--backend demo -s split", "/tokens\n/exit\n");
    assert_eq!(code, 0, "{screen}");
    let total = format!(
        "[session split: 2 turns, tokens in {} / out ",
        100 + demo_in
    );
    let demo = format!("[backend demo: tokens in {demo_in} / out ");
    for expected in [&total, &demo, "[backend fake: tokens in 100 / out 5]"] {
        assert!(
            screen.contains(expected),
            "missing {expected:?} in\n{screen}"
        );
    }
    // A session of one backend has nothing to split.
    let (_, alone) = crate::repl::repl(&ws, "--backend fake -s alone", "hi\n/tokens\n/exit\n");
    assert!(!alone.contains("[backend fake:"), "{alone}");
}

/// Costs summed in another order than the calls were made differ in their last bits: that is
/// no sign of calls made before the split was kept. A session file from before it was kept,
/// continued, has its earlier calls told on a line of their own.
#[test]
fn tokens_by_backend_tell_earlier_calls_by_their_counts() {
    let ws = Workspace::new();
    let price = "price_input_per_mtok = 1.0\nprice_output_per_mtok = 0.0\n";
    ws.add_config(&format!(
        "{price}\n[backends.other]\ncommand = \"{}\"\n{}{price}",
        crate::common::fixture("agents/scripted.sh").display(),
        crate::common::TOKENS
    ));
    for (n, backend, input) in [
        (1, "fake", 100000),
        (2, "other", 200000),
        (3, "fake", 10000),
    ] {
        ws.reply(n, format!("ok\nTokens: {input} in, 0 out\n"));
        ws.run(&["--backend", backend, "-s", "fl", "hi"])
            .expect_code(0);
    }
    let (_, screen) = crate::repl::repl(&ws, "--backend fake -s fl", "/tokens\n/exit\n");
    assert!(
        screen.contains("[backend fake: tokens in 110000 / out 0, $0.1100]"),
        "{screen}"
    );
    assert!(!screen.contains("[earlier calls"), "{screen}");
    // The same file as an older version wrote it: no split.
    let file = ws.path("data/agent-loop/sessions/fl/session.json");
    let mut old = ws.saved_session();
    old.as_object_mut().unwrap().remove("usage_by_backend");
    std::fs::write(&file, old.to_string()).unwrap();
    ws.reply(0, "ok\nTokens: 5 in, 0 out\n");
    ws.run(&["--backend", "other", "-s", "fl", "hi"])
        .expect_code(0);
    let (_, screen) = crate::repl::repl(&ws, "--backend fake -s fl", "/tokens\n/exit\n");
    for expected in [
        "[backend other: tokens in 5 / out 0, $0.0000]",
        "[earlier calls, not kept by backend: tokens in 310000 / out 0, $0.3100]",
    ] {
        assert!(
            screen.contains(expected),
            "missing {expected:?} in\n{screen}"
        );
    }
}
