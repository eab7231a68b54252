//! Choosing the display: `--quiet`, the environment variables, `auto` on and off a terminal,
//! and an explicit `--display terminfo` that cannot be honoured.

use crate::common::{assert_append_only, Pty, Workspace};

const READ_CALL: &str =
    "Reading.\n<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>\nTokens: 5 in, 1 out\n";

fn read_scenario() -> Workspace {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.txt"), "forty-two\n").unwrap();
    ws.reply(1, READ_CALL);
    ws.reply(2, "It says forty-two.\n");
    ws
}

#[test]
fn quiet_prints_the_answer_and_nothing_else() {
    let ws = read_scenario();
    let run = ws.run(&["-q", "--backend", "fake", "what do the notes say?"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "It says forty-two.\n");
    assert_eq!(run.stderr(), "");
}

#[test]
fn quiet_still_reports_errors_on_stderr() {
    let ws = Workspace::new();
    ws.fake_file("rc.1", "1");
    ws.fake_file("stderr.1", "no credit left\n");
    let run = ws.run(&["--quiet", "--backend", "fake", "task"]);
    run.expect_code(1);
    assert_eq!(run.stdout(), "");
    assert!(run.stderr().contains("no credit left"), "{}", run.stderr());
}

#[test]
fn quiet_on_a_terminal_writes_no_escape_either() {
    let ws = read_scenario();
    let pty = Pty::spawn(
        &ws,
        &[],
        &["-q", "--backend", "fake", "what do the notes say?"],
    );
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0);
    assert_eq!(String::from_utf8_lossy(&bytes), "It says forty-two.\n");
}

#[test]
fn environment_variables_choose_the_display_and_the_output() {
    let ws = read_scenario();
    // On a terminal `auto` would draw with terminfo; AGENT_LOOP_DISPLAY=plain keeps it plain.
    let pty = Pty::spawn(
        &ws,
        &[("AGENT_LOOP_DISPLAY", "plain")],
        &["--backend", "fake", "what do the notes say?"],
    );
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0);
    assert_append_only("AGENT_LOOP_DISPLAY=plain on a terminal", &bytes);
    let screen = String::from_utf8_lossy(&bytes);
    assert!(screen.contains("[tool read] notes.txt"), "{screen}");

    ws.reply(0, "Again.\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "again"]);
    cmd.env("AGENT_LOOP_OUTPUT", "jsonl");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert!(run.stdout().starts_with("{\"ts\":"), "{}", run.stdout());

    // A flag wins over the variable.
    let mut cmd = ws.cmd(&["--output", "text", "--backend", "fake", "once more"]);
    cmd.env("AGENT_LOOP_OUTPUT", "jsonl");
    let run = ws.run_cmd(cmd);
    assert!(!run.stdout().starts_with('{'), "{}", run.stdout());

    let mut cmd = ws.cmd(&["--backend", "fake", "task"]);
    cmd.env("AGENT_LOOP_DISPLAY", "fancy");
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(run.stderr().contains("fancy"), "{}", run.stderr());
}

#[test]
fn auto_is_plain_through_a_pipe_and_on_a_dumb_terminal() {
    let ws = read_scenario();
    // Piped (every other integration test checks this too).
    ws.run(&["--backend", "fake", "what do the notes say?"])
        .expect_code(0);
    let ws = read_scenario();
    let pty = Pty::spawn(
        &ws,
        &[("TERM", "dumb")],
        &["--backend", "fake", "what do the notes say?"],
    );
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0);
    assert_append_only("TERM=dumb", &bytes);
}

#[test]
fn terminfo_that_cannot_be_honoured_is_a_configuration_error() {
    let ws = Workspace::new();
    let mut cmd = ws.cmd(&["--display", "terminfo", "--backend", "fake", "task"]);
    cmd.env("TERM", "no-such-terminal");
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("no usable terminfo entry for TERM=no-such-terminal"),
        "{}",
        run.stderr()
    );
    let mut cmd = ws.cmd(&["--backend", "fake", "task"]);
    cmd.env("AGENT_LOOP_DISPLAY", "terminfo").env_remove("TERM");
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(run.stderr().contains("TERM is not set"), "{}", run.stderr());
    assert_eq!(ws.runs(), 0);
}

#[test]
fn usage_errors_and_help_are_plain_on_a_terminal() {
    let ws = Workspace::new();
    for args in [&["--no-such-flag"][..], &["--help"]] {
        let (code, bytes) = Pty::spawn(&ws, &[], args).finish();
        assert_eq!(code, if args == ["--help"] { 0 } else { 2 });
        assert_append_only("clap's output", &bytes);
    }
}
