//! A reader that has read enough closes the pipe (`agent-loop config | head -1`): every
//! subcommand, `--help` and the main run then end quietly, with exit 0 and no panic, as other
//! Unix tools do. Each run here writes to a pipe whose reading end is closed before the
//! program starts, so its first write meets the closed pipe, every time.

use std::process::{Command, Stdio};

use crate::common::{fixture, Run, Workspace};

/// Runs `cmd` with stdout a pipe nobody reads; checks it ended quietly with exit 0.
fn into_closed_pipe(ws: &Workspace, mut cmd: Command, what: &str) -> Run {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    cmd.stdout(writer).stderr(Stdio::piped());
    let run = ws.run_cmd(cmd);
    let err = run.stderr();
    for bad in ["panicked", "Broken pipe", "broken pipe", "error"] {
        assert!(!err.contains(bad), "{what}: {bad:?} on stderr:\n{err}");
    }
    assert_eq!(run.code(), 0, "{what}: exit code; stderr:\n{err}");
    run
}

#[test]
fn every_subcommand_ends_quietly_on_a_closed_pipe() {
    let ws = Workspace::new();
    // A saved session, so that `sessions` has rows to print.
    ws.reply(0, "The answer is 42.\n");
    ws.run(&["--backend", "fake", "first"]).expect_code(0);
    let spec = fixture("unifyweaver/agent_loop_spec.pl");
    let spec = spec.to_str().unwrap();
    for args in [
        &["config"][..],
        &["sessions"],
        &["backends"],
        &["import-spec", spec],
        &["completions", "bash"],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["doctor", "demo"],
        &["doctor", "fake"],
        &["--help"],
        &["-h"],
        &["--version"],
        &["sessions", "--help"],
    ] {
        let run = into_closed_pipe(&ws, ws.cmd(args), &args.join(" "));
        if args[0] != "import-spec" {
            assert_eq!(run.stderr(), "", "{args:?}");
        }
    }
}

#[test]
fn the_answer_of_a_run_ends_quietly_on_a_closed_pipe_in_every_output_mode() {
    let ws = Workspace::new();
    ws.reply(0, "The answer is 42.\n");
    for mode in [&[][..], &["--quiet"], &["--output", "jsonl"]] {
        let args = [&["--backend", "fake"], mode, &["task"]].concat();
        into_closed_pipe(&ws, ws.cmd(&args), &args.join(" "));
    }
    // The demo agent, with its tool call, as the README's first command runs it.
    let run = into_closed_pipe(
        &ws,
        ws.cmd(&["--backend", "demo", "list the files here"]),
        "demo",
    );
    assert!(run.stderr().contains("[tool ls]"), "{}", run.stderr());
}
