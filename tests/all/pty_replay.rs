//! Recorded sessions of real terminal agents (fixtures/pty/, recorded by
//! scripts/record-fixtures/record-pty.py against the mock provider) replayed through the same
//! virtual screen a live `type = "pty"` turn reads, with the preset's own patterns: the answer
//! read off the screen must be exactly the mock's.

use agent_loop::backend::ScreenReader;
use agent_loop::config::{Config, Definition, Source};

use crate::common::{fixture, path_with};

/// Replays `fixtures/pty/CLI/` through preset `preset`: (answer, the rows new since the
/// message, the final screen).
fn replay(cli: &str, preset: &str) -> (String, String, String) {
    let config = Config::from_sources(&[Source::builtin()]).unwrap();
    let Definition::Pty(def) = config.backend(preset).unwrap() else {
        panic!("{preset} is a pty backend")
    };
    let read = |name: &str| std::fs::read(fixture(&format!("pty/{cli}/{name}"))).unwrap();
    let message = String::from_utf8(read("message")).unwrap();
    let mut reader = ScreenReader::new(def);
    reader.feed(&read("before.out"));
    assert!(
        def.ready.as_ref().unwrap().is_match(&reader.visible_text()),
        "{preset}: ready_regex does not match the recorded screen:\n{}",
        reader.visible_text()
    );
    reader.start_message(&message);
    reader.feed(&read("after.out"));
    let new_rows = reader.new_rows().join("\n");
    // Without a done_regex, the turn ends when the screen is quiet with no spinner.
    assert!(def.done.is_none());
    assert!(
        !def.busy.as_ref().unwrap().is_match(&reader.visible_text()),
        "{preset}: busy_regex still matches at the end:\n{}",
        reader.visible_text()
    );
    (reader.answer(), new_rows, reader.visible_text())
}

#[test]
fn qwen_tui_reads_the_recorded_answer() {
    let (answer, rows, screen) = replay("qwen", "qwen-tui");
    assert_eq!(
        answer, "The answer is 42.",
        "new rows:\n{rows}\nscreen:\n{screen}"
    );
}

#[test]
fn gemini_tui_reads_the_recorded_answer() {
    let (answer, rows, screen) = replay("gemini", "gemini-tui");
    assert_eq!(
        answer, "The answer is 42.",
        "new rows:\n{rows}\nscreen:\n{screen}"
    );
}

/// The built binary with preset `preset`, its command `cli` on PATH being the recorded
/// session (fixtures/agents/pty-replay.py): the live turn, readiness and completion decided
/// by the preset's patterns and quiet, reads the recorded answer.
fn live(cli: &str, preset: &str) {
    let ws = crate::common::Workspace::new();
    let shims = ws.path("bin");
    std::fs::create_dir(&shims).unwrap();
    let shim = shims.join(cli);
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\nexec python3 '{}' '{}'\n",
            fixture("agents/pty-replay.py").display(),
            fixture(&format!("pty/{cli}")).display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let message = std::fs::read_to_string(fixture(&format!("pty/{cli}/message"))).unwrap();
    let mut cmd = ws.cmd(&["--backend", preset, &message]);
    cmd.env("PATH", path_with(&[&shims]));
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The answer is 42.\n");
    assert!(
        run.stderr()
            .contains(&format!("[{preset}] The answer is 42.\n")),
        "{}",
        run.stderr()
    );
    ws.assert_no_leftovers();
}

#[test]
fn gemini_tui_runs_the_recorded_session_end_to_end() {
    live("gemini", "gemini-tui");
}
