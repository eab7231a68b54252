//! A session that cannot be saved: the disk is full, or the folder cannot be written. The
//! answer still arrives, the error names the file, and in the REPL the conversation goes on
//! in memory.

use crate::common::Workspace;
use crate::repl::repl;

#[test]
fn in_the_repl_an_unsaveable_session_stays_in_memory() {
    let ws = Workspace::new();
    // A file where the sessions folder should be (root ignores read-only permissions).
    std::fs::create_dir_all(ws.path("data/agent-loop")).unwrap();
    std::fs::write(ws.path("data/agent-loop/sessions"), "in the way").unwrap();
    ws.reply(1, "first answer\n");
    ws.reply(2, "second answer\n");
    let (code, screen) = repl(&ws, "--backend fake", "first task\nsecond task\nexit\n");
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("cannot save session file"), "{screen}");
    assert!(screen.contains("Not a directory"), "{screen}");
    assert!(screen.contains("second answer"), "{screen}");
    // The second prompt carries the first turn: the conversation was kept in memory.
    let second = ws.prompt(2);
    assert!(
        second.contains("User: first task\n\nAssistant: first answer"),
        "{second}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("data/agent-loop/sessions")).unwrap(),
        "in the way"
    );
    ws.assert_no_leftovers();
}

#[test]
fn a_full_disk_under_the_log_is_a_warning_and_the_turn_goes_on() {
    let ws = Workspace::new();
    ws.reply(0, "the answer\n");
    // Every write to /dev/full fails with ENOSPC, as on a full disk.
    let run = ws.run(&["--backend", "fake", "--log", "/dev/full", "full disk"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "the answer\n");
    assert!(
        run.stderr()
            .contains("warning: cannot write the log /dev/full: No space left on device"),
        "{}",
        run.stderr()
    );
    assert!(ws.saved_messages().contains("full disk"));
    ws.assert_no_leftovers();
}

/// The session lock's note of its holder cannot be written (every write to its file fails, as
/// on a full disk): the lock is still held and the turn runs.
#[test]
fn a_lock_whose_holder_cannot_be_written_still_lets_the_turn_run() {
    let ws = Workspace::new();
    ws.reply(0, "the answer\n");
    let locks = ws.path("data/agent-loop/sessions.locks");
    std::fs::create_dir_all(&locks).unwrap();
    std::os::unix::fs::symlink("/dev/full", locks.join("full")).unwrap();
    let run = ws.run(&["--backend", "fake", "-s", "full", "full disk"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "the answer\n");
}
