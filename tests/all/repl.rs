//! The REPL and interactive approval, under a real pseudo-terminal (util-linux `script`), fed
//! the keys a person would type.

use std::io::Write;
use std::process::{Child, Command, Stdio};

use crate::common::{bin, Workspace};

/// Runs the REPL on a pty with `keys` as typed input; returns (exit code, screen text).
pub(crate) fn repl(ws: &Workspace, args: &str, keys: &str) -> (i32, String) {
    let mut child = spawn_repl(ws, args);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(keys.as_bytes())
        .unwrap();
    screen(child)
}

/// Starts the REPL on a pty; what is written to the child's stdin is typed on it.
pub(crate) fn spawn_repl(ws: &Workspace, args: &str) -> Child {
    let line = format!(
        "{} --config {} {args}",
        bin().display(),
        ws.path("backends.toml").display()
    );
    Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(ws.work())
        .env("FAKE_DIR", ws.path("fake"))
        .env("XDG_CONFIG_HOME", ws.path("xdg"))
        .env("XDG_DATA_HOME", ws.path("data"))
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux script")
}

/// Waits for the REPL to end; returns (exit code, screen text).
pub(crate) fn screen(child: Child) -> (i32, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"),
    )
}

#[test]
fn approvals_clear_and_exit() {
    let ws = Workspace::new();
    let keys = "run touch first.txt\ny\nrun touch second.txt\nmaybe\nn\nclear\nrun touch third.txt\na\nrun touch fourth.txt\nexit\n";
    let (code, screen) = repl(&ws, "--backend demo", keys);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("agent-loop with backend `demo`, session "),
        "{screen}"
    );
    assert!(
        ws.work().join("first.txt").exists(),
        "y did not run it\n{screen}"
    );
    assert!(!ws.work().join("second.txt").exists(), "n ran it\n{screen}");
    assert!(screen.contains("Please answer y, a or n."), "{screen}");
    assert!(screen.contains("not run: the user said no"), "{screen}");
    assert!(screen.contains("[conversation cleared]"), "{screen}");
    assert!(
        ws.work().join("third.txt").exists(),
        "a did not run it\n{screen}"
    );
    // `a` approved bash for the rest of the session: no question for the fourth.
    assert!(ws.work().join("fourth.txt").exists(), "{screen}");
    assert_eq!(screen.matches("Allow bash").count(), 4, "{screen}");
}

#[test]
fn end_of_input_leaves_cleanly() {
    let ws = Workspace::new();
    let (code, screen) = repl(&ws, "--backend demo", "list the files here\n\x04");
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("[tool ls] ."), "{screen}");
}

#[test]
fn clear_forgets_the_conversation() {
    let ws = Workspace::new();
    ws.reply(0, "noted\n");
    let (code, screen) = repl(
        &ws,
        "--backend fake",
        "first task\nsecond task\nclear\nthird task\nquit\n",
    );
    assert_eq!(code, 0, "{screen}");
    assert!(
        ws.prompt(2).contains("User: first task") && ws.prompt(2).contains("User: second task")
    );
    let third = ws.prompt(3);
    assert!(
        third.contains("User: third task") && !third.contains("first task"),
        "{third}"
    );
}
