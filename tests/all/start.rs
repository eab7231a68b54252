//! How the process starts: what Rust's start-up used to do and `src/main.rs` now does itself
//! (a closed standard descriptor opened on /dev/null, SIGPIPE ignored), seen from outside.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Stdio;

use crate::common::Workspace;

/// Runs `args` with stdout closed, as `agent-loop ... >&-` would.
fn run_with_stdout_closed(ws: &Workspace, args: &[&str]) -> std::process::Output {
    let mut cmd = ws.cmd(args);
    cmd.stdout(Stdio::inherit());
    // SAFETY: close(2) is async-signal-safe, the only kind of call allowed between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::close(1);
            Ok(())
        });
    }
    cmd.output().expect("run agent-loop")
}

#[test]
fn a_closed_stdout_is_opened_on_dev_null_before_anything_can_take_its_number() {
    let ws = Workspace::new();
    // A backend that reports what its parent, agent-loop, has as descriptor 1.
    ws.config(
        "[backends.peek]\ncommand = 'sh'\nargs = ['-c', 'readlink /proc/$PPID/fd/1 > \"$FAKE_DIR/fd1\"; echo looked']\n",
    );
    let out = run_with_stdout_closed(&ws, &["--backend", "peek", "--no-save", "look"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let fd1 = std::fs::read_to_string(ws.path("fake/fd1")).unwrap();
    assert_eq!(fd1.trim(), "/dev/null", "{err}");
}

#[test]
fn a_closed_stdout_leaves_the_session_files_whole() {
    let ws = Workspace::new();
    let out = run_with_stdout_closed(&ws, &["--backend", "demo", "list the files here"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("[tool ls] ."), "{err}");
    let session = ws.saved_session();
    assert!(
        session["conversation"]
            .to_string()
            .contains("list the files here"),
        "{session}"
    );
    let sessions = ws.path("data/agent-loop/sessions");
    let mut checked = 0;
    for folder in std::fs::read_dir(&sessions).unwrap() {
        for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let whole = path.extension().is_some_and(|e| e == "json");
            let records: Vec<&str> = if whole {
                vec![&text]
            } else {
                text.lines().collect()
            };
            for record in records {
                let parsed = serde_json::from_str::<serde_json::Value>(record);
                assert!(parsed.is_ok(), "{}: not JSON: {record}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 1, "no session files under {}", sessions.display());
}

#[test]
fn a_reader_that_went_away_ends_the_run_with_an_error_not_a_signal() {
    let ws = Workspace::new();
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the read end is ours and used nowhere else; closing it makes every write EPIPE.
    unsafe { libc::close(fds[0]) };
    let [_, write_end] = fds;
    let mut cmd = ws.cmd(&["--backend", "demo", "--no-save", "list the files here"]);
    // SAFETY: dup2 is async-signal-safe; the write end stays open in this process until the
    // end of the test, so the number is valid in the child.
    unsafe {
        cmd.pre_exec(move || {
            libc::dup2(write_end, 1);
            Ok(())
        });
    }
    let out = cmd
        .stdout(Stdio::inherit())
        .output()
        .expect("run agent-loop");
    // SAFETY: the write end is no longer needed.
    unsafe { libc::close(write_end) };
    assert_eq!(
        out.status.signal(),
        None,
        "killed by a signal: {:?}",
        out.status
    );
    assert!(out.status.code().is_some(), "{:?}", out.status);
}
