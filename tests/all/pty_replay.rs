//! Recorded sessions of real terminal agents (fixtures/pty/, recorded by
//! scripts/record-fixtures/record-pty.py against the mock provider: an answer, and a shell
//! command the TUI asked approval for, allowed and denied) replayed through the same virtual
//! screen a live `type = "pty"` turn reads, with the preset's own patterns: the rules that
//! decide readiness, the approval question and the turn's end must hold on the recorded
//! screens, and the answer read off the screen must be exactly the mock's text, without the
//! tool rows, dialogs and notices.

use agent_loop_backends::backend::{question, Detail, ScreenReader};
use agent_loop_config::{Config, Definition, PtyDef, Source};

use crate::common::{fixture, path_with};

fn preset(name: &str) -> PtyDef {
    let config = Config::from_sources(&[Source::builtin()]).unwrap();
    let Definition::Pty(def) = config.backend(name).unwrap() else {
        panic!("{name} is a pty backend")
    };
    def.clone()
}

fn read(folder: &str, name: &str) -> Vec<u8> {
    std::fs::read(fixture(&format!("pty/{folder}/{name}"))).unwrap()
}

/// The preset's end-of-turn rule (`done_when_ready`) on the screen as it is now.
fn turn_over(def: &PtyDef, reader: &mut ScreenReader) -> bool {
    let screen = reader.visible_text();
    let shows =
        |re: &Option<agent_loop_parse::Pattern>| re.as_ref().is_some_and(|re| re.is_match(&screen));
    shows(&def.ready) && !shows(&def.busy) && !shows(&def.approval) && reader.echoed()
}

/// Replays `fixtures/pty/FOLDER/` through preset `preset`: the answer, after checking each
/// rule on the screen it decides on.
fn replay(folder: &str, preset_name: &str) -> String {
    let (answer, detail) = replay_asking(folder, preset_name);
    if std::fs::exists(fixture(&format!("pty/{folder}/keys"))).unwrap() {
        assert_eq!(detail, Some(whole("touch made.txt")), "{folder}");
    }
    answer
}

fn whole(text: &str) -> Detail {
    Detail {
        text: text.into(),
        cut: false,
    }
}

/// [`replay`], and the detail of the approval question it answered, if any.
fn replay_asking(folder: &str, preset_name: &str) -> (String, Option<Detail>) {
    let mut detail = None;
    let def = preset(preset_name);
    assert!(def.done_when_ready && def.done.is_none());
    let message = String::from_utf8(read(folder, "message")).unwrap();
    let mut reader = ScreenReader::new(&def);
    reader.feed(&read(folder, "before.out"));
    let screen = reader.visible_text();
    for (key, re) in [("ready_regex", &def.ready), ("start_regex", &def.start)] {
        assert!(
            re.as_ref().unwrap().is_match(&screen),
            "{folder}: {key} does not match the recorded screen:\n{screen}"
        );
    }
    reader.start_message(&message);
    reader.feed(&read(folder, "after.out"));
    let shown = || format!("new rows:\n{}", reader_rows(folder, &def));
    if let Ok(keys) = std::fs::read(fixture(&format!("pty/{folder}/keys"))) {
        let screen = reader.visible_text();
        let question = question(&def, &screen).unwrap_or_else(|| {
            panic!("{folder}: approval_regex does not match the question:\n{screen}")
        });
        assert!(
            matches!(question.tool.as_deref(), Some("Shell" | "WriteFile")),
            "{folder}: {:?}",
            question.tool
        );
        detail = question.detail;
        assert!(
            !turn_over(&def, &mut reader),
            "{folder}: the turn looks over while the question shows"
        );
        let typed = if keys == def.approve_keys.as_bytes() {
            "approve_keys"
        } else {
            "deny_keys"
        };
        assert!(
            keys == def.approve_keys.as_bytes() || keys == def.deny_keys.as_bytes(),
            "{folder}: the recording answered {keys:?}, not the preset's keys"
        );
        eprintln!("{folder}: answered with the preset's {typed}");
        reader.feed(&read(folder, "answered.out"));
    }
    assert!(turn_over(&def, &mut reader), "{}", shown());
    (reader.answer(), detail)
}

/// The rows new since the message, for failure messages.
fn reader_rows(folder: &str, def: &PtyDef) -> String {
    let mut reader = ScreenReader::new(def);
    reader.feed(&read(folder, "before.out"));
    reader.start_message(&String::from_utf8(read(folder, "message")).unwrap());
    reader.feed(&read(folder, "after.out"));
    if let Ok(answered) = std::fs::read(fixture(&format!("pty/{folder}/answered.out"))) {
        reader.feed(&answered);
    }
    reader.new_rows().join("\n")
}

#[test]
fn qwen_tui_reads_the_recorded_answer() {
    assert_eq!(replay("qwen", "qwen-tui"), "The answer is 42.");
}

/// Qwen Code 0.24.4 (fixtures/pty/qwen24*) draws another screen: its input box's last rows
/// are its folder and model and its mode (`(shift + tab to cycle)`, no `? for shortcuts`),
/// the answer starts `◆︎ `, and an approval question has no box around it.
#[test]
fn qwen_tui_reads_0_24_as_it_read_0_15() {
    assert_eq!(replay("qwen24", "qwen-tui"), "The answer is 42.");
    assert_eq!(replay("qwen24-allow", "qwen-tui"), "DONE touched");
    assert_eq!(replay("qwen24-deny", "qwen-tui"), "");
}

#[test]
fn gemini_tui_reads_the_recorded_answer() {
    assert_eq!(replay("gemini", "gemini-tui"), "The answer is 42.");
}

#[test]
fn an_allowed_command_leaves_only_the_model_text() {
    assert_eq!(replay("qwen-allow", "qwen-tui"), "DONE touched");
    assert_eq!(replay("gemini-allow", "gemini-tui"), "DONE touched");
}

#[test]
fn a_denied_command_leaves_no_answer() {
    assert_eq!(replay("qwen-deny", "qwen-tui"), "");
    assert_eq!(replay("gemini-deny", "gemini-tui"), "");
}

/// The command of the `wrap` recordings (scripts/record-fixtures/record-pty.py LONG_COMMAND).
const LONG_COMMAND: &str = "touch made.txt && printf '%s\\n' alpha bravo charlie delta echo \
    foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra \
    tango uniform victor whiskey xray yankee zulu > words.txt && mkdir -p \
    a-rather-long-folder-name-that-a-row-may-cut/and-one-more-level-below-it";

#[test]
fn a_command_wrapped_over_rows_is_read_whole_or_said_to_be_cut() {
    // gemini wraps it at spaces in its box, whole.
    let (answer, detail) = replay_asking("gemini-wrap", "gemini-tui");
    assert_eq!(answer, "DONE touched");
    assert_eq!(detail, Some(whole(LONG_COMMAND)));
    // qwen 0.15.10 shows each full row without its last characters (`mike` as `mi`): the
    // detail says where, and that it is cut.
    let (answer, detail) = replay_asking("qwen-wrap", "qwen-tui");
    assert_eq!(answer, "DONE touched");
    let detail = detail.unwrap();
    assert!(detail.cut, "{detail:?}");
    assert!(
        detail.text.starts_with("touch made.txt && printf")
            && detail.text.contains("kilo lima mi…november")
            && detail.text.ends_with(
                "mkdir -…a-rather-long-folder-name-that-a-row-may-cut/and-one-more-level-below-it"
            ),
        "{detail:?}"
    );
    // qwen 0.24.4 wraps its tool's row too, without a box, then shows the command whole:
    // read from there, not from the tool's first row.
    let (answer, detail) = replay_asking("qwen24-wrap", "qwen-tui");
    assert_eq!(answer, "DONE touched");
    assert_eq!(detail, Some(whole(LONG_COMMAND)));
}

#[test]
fn a_command_taller_than_the_screen_is_said_to_be_cut() {
    // gemini hides its first rows, and says so in their place.
    let (answer, detail) = replay_asking("gemini-tall", "gemini-tui");
    assert_eq!(answer, "DONE touched");
    let detail = detail.unwrap();
    assert!(detail.cut, "{detail:?}");
    assert!(
        detail.text.starts_with("... first 34 lines hidden")
            && detail.text.ends_with("echo the-end"),
        "{detail:?}"
    );
}

#[test]
fn a_write_is_asked_about_with_its_file() {
    for (folder, preset) in [("qwen-write", "qwen-tui"), ("gemini-write", "gemini-tui")] {
        let (answer, detail) = replay_asking(folder, preset);
        assert_eq!(answer, "DONE written");
        assert_eq!(detail, Some(whole("Writing to made.txt")), "{folder}");
    }
}

/// The built binary with preset `preset`, its command `cli` on PATH being the recorded
/// session `folder` (fixtures/agents/pty-replay.py), run with `args`: the live turn, every
/// decision made by the preset's rules.
fn live(cli: &str, folder: &str, preset: &str, args: &[&str]) -> crate::common::Run {
    let ws = crate::common::Workspace::new();
    let shims = ws.path("bin");
    std::fs::create_dir(&shims).unwrap();
    let shim = shims.join(cli);
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\nexec python3 '{}' '{}'\n",
            fixture("agents/pty-replay.py").display(),
            fixture(&format!("pty/{folder}")).display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let message = std::fs::read_to_string(fixture(&format!("pty/{folder}/message"))).unwrap();
    let mut all = vec!["--backend", preset];
    all.extend_from_slice(args);
    all.push(&message);
    let mut cmd = ws.cmd(&all);
    cmd.env("PATH", path_with(&[&shims]));
    let run = ws.run_cmd(cmd);
    ws.assert_no_leftovers();
    run
}

#[test]
fn gemini_tui_runs_the_recorded_session_end_to_end() {
    let run = live("gemini", "gemini", "gemini-tui", &[]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The answer is 42.\n");
    assert!(
        run.stderr().contains("[gemini-tui] The answer is 42.\n"),
        "{}",
        run.stderr()
    );
}

#[test]
fn qwen_tui_relays_the_recorded_approval_and_answers_with_the_model_text() {
    let run = live("qwen", "qwen-allow", "qwen-tui", &["--yes"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "DONE touched\n");
    let err = run.stderr();
    assert!(
        err.contains("[qwen-tui] (approval of touch made.txt: allowed)"),
        "{err}"
    );
    assert!(err.contains("[qwen-tui ran] Shell touch made.txt"), "{err}");
}

#[test]
fn gemini_tui_denied_without_an_answer_fails_and_says_so() {
    // Nobody can be asked in a pipe: the question is denied, and the turn that then fails for
    // it is not done (exit 4, docs/reliability.md), with the note on stderr.
    let run = live("gemini", "gemini-deny", "gemini-tui", &[]);
    run.expect_code(4);
    assert_eq!(run.stdout(), "");
    let err = run.stderr();
    assert!(
        err.contains("the agent's request to run `touch made.txt` was denied, and its turn ended without an answer"),
        "{err}"
    );
    assert!(err.contains("[not done: 1 tool call refused"), "{err}");
}
