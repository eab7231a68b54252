//! CLI backends that crash mid-output, print far more than they should, or stop half-way
//! through a tool call.

use super::assert_task_saved;
use crate::common::{fixture, Workspace};

#[test]
fn a_backend_killed_mid_output_is_an_error_with_what_it_printed() {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.crashy]\ncommand = '{}'\ntimeout_s = 300\n",
        fixture("agents/crash.sh").display()
    ));
    let run = ws.run(&["--backend", "crashy", "crash please"]);
    run.expect_code(1);
    let err = run.stderr();
    // Killed by signal 9: reported as a shell would, 128 + 9.
    assert!(err.contains("backend `crashy`"), "{err}");
    assert!(err.contains("exited with status 137"), "{err}");
    assert!(err.contains("Working on it."), "{err}");
    assert!(!err.contains("[tool"), "a half call ran: {err}");
    assert_eq!(run.stdout(), "");
    assert_task_saved(&ws, "crash please");
    // The sleeping child it left behind went with its process group.
    ws.assert_no_leftovers();
}

/// Bytes the flood test makes the backend print: `FLOOD_MB` (scripts/flood.sh sets 1024),
/// else 64 MiB, enough to show that memory does not follow the output and fast in CI.
fn flood_bytes() -> u64 {
    std::env::var("FLOOD_MB")
        .ok()
        .and_then(|mb| mb.parse::<u64>().ok())
        .unwrap_or(64)
        * 1024
        * 1024
}

#[test]
fn a_flood_of_output_is_drained_with_bounded_memory() {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.flood]\ncommand = '{}'\ntimeout_s = 600\n",
        fixture("agents/flood.sh").display()
    ));
    let bytes = flood_bytes();
    let mut cmd = ws.cmd(&["--backend", "flood", "say a lot"]);
    cmd.env("FLOOD_BYTES", bytes.to_string());
    let (run, peak_kib) = ws.run_measured(cmd);
    run.expect_code(0);
    // The first max_output_bytes (4 MiB by default) are the answer; the rest is counted.
    let kept = 4 * 1024 * 1024;
    let note = format!(
        "[output cut: {} bytes were dropped past max_output_bytes ({kept})]",
        bytes - kept
    );
    assert!(run.stdout().ends_with(&format!("{note}\n")), "no cut note");
    assert!(run.stdout().len() < kept as usize + 1024);
    // A few copies of the kept 4 MiB (answer, conversation, session file) and the binary:
    // about 50 MiB, agent-loop's own (run_measured does not count the test harness's memory,
    // which made this flaky); memory that followed the output would be 64 MiB more.
    eprintln!(
        "flood: {} MiB printed, agent-loop peak RSS {} MiB",
        bytes >> 20,
        peak_kib >> 10
    );
    assert!(
        peak_kib < 80 * 1024,
        "peak RSS {peak_kib} KiB for {bytes} bytes of output"
    );
    assert!(ws.saved_messages().contains("[output cut: "));
    ws.assert_no_leftovers();
}

#[test]
fn a_half_printed_tool_call_runs_nothing() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "Let me read it.\n<tool_call>{\"name\":\"write\",\"arguments\":{\"path\":\"x.txt\",\"cont",
    );
    let run = ws.run(&["--backend", "fake", "--yes", "write x"]);
    run.expect_code(0);
    assert_eq!(ws.runs(), 1);
    assert!(!ws.work().join("x.txt").exists());
    assert!(!run.stderr().contains("[tool"), "{}", run.stderr());
    assert!(run.stdout().contains("Let me read it."), "{}", run.stdout());
    assert_task_saved(&ws, "write x");
    ws.assert_no_leftovers();
}

/// The measure the memory bounds rely on counts agent-loop alone: a child's ru_maxrss taken
/// by this test process would include this process's own peak (here a 160 MiB buffer, in
/// a busy run of the suite whatever the other tests hold), which made the flood test flaky.
#[test]
fn the_measured_peak_is_agent_loops_own_not_the_test_processs() {
    let ws = Workspace::new();
    let held = vec![1u8; 160 << 20];
    let (run, peak_kib) = ws.run_measured(ws.cmd(&["--version"]));
    run.expect_code(0);
    assert!(
        peak_kib < 64 * 1024,
        "peak RSS {peak_kib} KiB for agent-loop --version"
    );
    // Held (and its pages written, so resident) until agent-loop has exited.
    assert_eq!(std::hint::black_box(&held)[(160 << 20) - 1], 1);
}
