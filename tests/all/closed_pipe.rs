//! A reader that has read enough closes the pipe (`agent-loop config | head -1`): every
//! subcommand, `--help` and the main run then end quietly, with no panic, and exit 141 as
//! SIGPIPE ends other tools (`cat big | head -c 10`), whether a turn was stopped because
//! nobody read its output any more or was done when its answer met the closed pipe: a script
//! learns its output was not all read either way. Each run here writes to a pipe whose
//! reading end is closed before the program starts, so its first write meets the closed pipe,
//! every time; the last test closes it in the middle of a turn.

use std::io::{BufRead, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Command, Stdio};

use crate::common::{fixture, Run, Workspace};

/// The fake agent ran at most `n` times. A run stopped as it starts may be killed while it
/// writes its count: an empty count is that run.
fn assert_runs_at_most(ws: &Workspace, n: usize) {
    let count = std::fs::read_to_string(ws.path("fake/count")).unwrap_or_default();
    let runs = count.trim().parse().unwrap_or(n);
    assert!(runs <= n, "{runs} runs");
}

/// Runs `cmd` with stdout a pipe nobody reads; checks it ended quietly with exit 141.
fn into_closed_pipe(ws: &Workspace, mut cmd: Command, what: &str) -> Run {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    cmd.stdout(writer).stderr(Stdio::piped());
    let run = ws.run_cmd(cmd);
    let err = run.stderr();
    for bad in ["panicked", "Broken pipe", "broken pipe", "error"] {
        assert!(!err.contains(bad), "{what}: {bad:?} on stderr:\n{err}");
    }
    assert_eq!(run.code(), 141, "{what}: exit code; stderr:\n{err}");
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
    // The answer is the first thing these write to stdout: the turn is done by then, and
    // kept as done, but its answer was not read.
    for mode in [&[][..], &["--quiet"]] {
        let args = [&["--backend", "fake", "--session", "s"], mode, &["task"]].concat();
        into_closed_pipe(&ws, ws.cmd(&args), &args.join(" "));
        let session =
            std::fs::read_to_string(ws.path("data/agent-loop/sessions/s/session.json")).unwrap();
        assert!(session.contains("The answer is 42."), "{session}");
        assert!(!session.contains("cancelled"), "{session}");
        std::fs::remove_dir_all(ws.path("data/agent-loop/sessions/s")).unwrap();
    }
    // JSON lines start at once: nobody reads them, so the turn is stopped, its backend at the
    // latest as it starts (it may be killed while it counts its run: an empty count).
    let runs = ws.runs();
    let args = ["--backend", "fake", "--output", "jsonl", "task"];
    into_closed_pipe(&ws, ws.cmd(&args), &args.join(" "));
    let count = std::fs::read_to_string(ws.path("fake/count")).unwrap_or_default();
    assert!(
        count.trim().parse().unwrap_or(runs) <= runs + 1,
        "{count:?}"
    );
    // The demo agent, with its tool call, as the README's first command runs it.
    let run = into_closed_pipe(
        &ws,
        ws.cmd(&["--backend", "demo", "list the files here"]),
        "demo",
    );
    assert!(run.stderr().contains("[tool ls]"), "{}", run.stderr());
}

/// `agent-loop --output jsonl TASK | head -1`: once the reader is gone the turn stops, as a
/// signal would stop it: no further backend call, no further tool, quietly, exit 141.
#[test]
fn a_turn_whose_reader_went_away_is_stopped() {
    let ws = Workspace::new();
    ws.gated_backend();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"echo one\"}}</tool_call>\n",
    );
    ws.reply(
        2,
        "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"echo two\"}}</tool_call>\n",
    );
    ws.reply(3, "Done.\n");
    let mut cmd = ws.cmd(&["--backend", "slow", "--yes", "--output", "jsonl", "task"]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("agent-loop starts");
    // The first record, then the reader goes away, while the first backend call waits.
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.contains("\"session_start\""), "{first}");
    drop(out);
    // The waiting call is let go, unless the run stopped first: a progress record may meet
    // the closed pipe before the gate opens. Either way it stops there.
    let released = crate::common::poll(|| {
        if child.try_wait().unwrap().is_some() {
            return Some(());
        }
        let gate = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(ws.path("fake/gate"));
        gate.ok().map(|mut gate| drop(gate.write_all(b"go\n")))
    });
    assert!(
        released.is_some(),
        "neither the gate opened nor the run ended"
    );
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(141), "{err}");
    // No backend call after the one under way (which a gated run counts only once let go).
    assert_runs_at_most(&ws, 1);
    assert!(!err.contains("error") && !err.contains("panicked"), "{err}");
}
