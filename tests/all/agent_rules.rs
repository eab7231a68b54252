//! The rules every backend type keeps for a script in a pipe (issue 58): `--debug` never
//! touches stdout's bytes; a refused tool call is a non-zero exit (4) and a line on stderr;
//! every subcommand that takes a backend takes `--backend`.

use crate::common::{fixture, Run, Workspace};

/// The fake ACP agent as backend `acp`.
fn with_acp(ws: &Workspace, extra: &str) {
    ws.add_config(&format!(
        "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n{extra}",
        fixture("agents/fake-acp.py").display()
    ));
}

/// stdout of the same run with and without `--debug` is the same, and the debug run did
/// trace (so the comparison saw streamed pieces with debug lines between them).
fn assert_debug_leaves_stdout(name: &str, run: impl Fn(&[&str]) -> Run) {
    let plain = run(&[]);
    plain.expect_code(0);
    let debug = run(&["--debug"]);
    debug.expect_code(0);
    assert!(!plain.stdout().is_empty(), "{name}: {}", plain.stderr());
    assert_eq!(
        plain.stdout(),
        debug.stdout(),
        "{name}: stdout changed with --debug"
    );
    assert!(
        debug.stderr().contains("debug: event "),
        "{name}: {}",
        debug.stderr()
    );
}

#[test]
fn debug_never_touches_stdout_for_any_backend_type() {
    // CLI.
    let ws = Workspace::new();
    ws.reply(0, "The answer is 42.\n");
    assert_debug_leaves_stdout("cli", |extra| {
        ws.run(&[&["--backend", "fake", "--no-save"], extra, &["hello"]].concat())
    });
    // HTTP, streamed in pieces.
    use crate::http::{run_api, setup, streamed, Format};
    for format in [Format::OpenAi, Format::Anthropic] {
        let (ws, _server) = setup(
            format,
            vec![streamed(format, "text"), streamed(format, "text")],
            "",
        );
        assert_debug_leaves_stdout(&format!("{format:?}"), |extra| {
            run_api(&ws, &[&["--no-save"], extra, &["hello"]].concat())
        });
    }
    // ACP, two chunks.
    let ws = Workspace::new();
    with_acp(&ws, "");
    assert_debug_leaves_stdout("acp", |extra| {
        ws.run(&[&["--backend", "acp", "--no-save"], extra, &["hello"]].concat())
    });
    // A TUI through the pty.
    let ws = crate::pty::tui("timeout_s = 60");
    assert_debug_leaves_stdout("pty", |extra| {
        ws.run(&[&["--backend", "tui", "--no-save"], extra, &["hello"]].concat())
    });
}

#[test]
fn doctor_takes_the_backend_as_a_flag_too() {
    let ws = Workspace::new();
    ws.reply(0, "The answer is 42.\n");
    for args in [
        &["doctor", "--backend", "demo"][..],
        &["doctor", "-b", "demo"],
        &["--backend", "demo", "doctor"],
        &["doctor", "demo"],
    ] {
        let run = ws.run(args);
        run.expect_code(0);
        assert!(
            run.stdout().starts_with("backend demo ("),
            "{args:?}: {}",
            run.stdout()
        );
    }
    // Named twice: bad usage.
    ws.run(&["doctor", "demo", "--backend", "fake"])
        .expect_code(2);
}

/// A refused call, then an answer: exit 4 and a `[not done: ...]` line on stderr, whatever the
/// backend type; nothing about it on stdout.
fn assert_not_done(name: &str, run: &Run) {
    run.expect_code(4);
    assert!(
        run.stderr()
            .contains("[not done: 1 tool call refused: approval cannot be asked here"),
        "{name}: {}",
        run.stderr()
    );
    assert!(
        !run.stdout().contains("not done"),
        "{name}: {}",
        run.stdout()
    );
}

#[test]
fn a_refused_call_then_an_end_exits_4_for_every_backend_type() {
    // agent-loop's own tools (a CLI backend; HTTP backends share the loop): a read ran, a
    // write was refused, and the model answered.
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.txt"), "hello\n").unwrap();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"notes.txt\"}}</tool_call>\n",
    );
    ws.reply(
        2,
        "<tool_call>{\"name\":\"write\",\"arguments\":{\"path\":\"out.txt\",\"content\":\"x\"}}</tool_call>\n",
    );
    ws.reply(3, "I could not write it.\n");
    let run = ws.run(&["--backend", "fake", "--no-save", "copy notes"]);
    assert_not_done("cli", &run);
    assert!(!ws.work().join("out.txt").exists());
    // The same run with --yes is done.
    let ws = Workspace::new();
    ws.reply(1, "<tool_call>{\"name\":\"write\",\"arguments\":{\"path\":\"out.txt\",\"content\":\"x\"}}</tool_call>\n");
    ws.reply(2, "Written.\n");
    ws.run(&["--backend", "fake", "--no-save", "--yes", "write"])
        .expect_code(0);
    // An ACP agent's question, refused: it answers all the same.
    let ws = Workspace::new();
    with_acp(&ws, "");
    let run = ws.run(&["--backend", "acp", "--no-save", "permission"]);
    assert_not_done("acp", &run);
    assert_eq!(run.stdout(), "permission: cancel\n");
    // A TUI's question, denied: the agent says it did not run it.
    let ws = crate::pty::tui("timeout_s = 60");
    let run = ws.run(&["--backend", "tui", "--no-save", "run touch piped.txt"]);
    assert_not_done("pty", &run);
    assert!(!ws.work().join("piped.txt").exists());
}
