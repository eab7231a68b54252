//! The REPL and interactive approval, under a real pseudo-terminal (util-linux `script`), fed
//! the keys a person would type; every scenario runs in plain mode, whose bytes are checked
//! for escapes and carriage returns, and in terminfo mode.

use crate::common::{assert_append_only, bin, Pty, Workspace};
use std::process::{Child, Command, Stdio};

const DISPLAYS: [&str; 2] = ["plain", "terminfo"];

/// Runs the REPL on a pty in `display` mode with `keys` as typed input; returns (exit code,
/// screen text).
fn repl_in(ws: &Workspace, display: &str, args: &str, keys: &str) -> (i32, String) {
    let mut argv = vec!["--display", display];
    argv.extend(args.split_whitespace());
    let mut pty = Pty::spawn(ws, &[], &argv);
    // Typed once the terminal is set up, so their echo is not translated either.
    pty.wait_for("agent-loop with backend");
    pty.send(keys);
    let (code, bytes) = pty.finish();
    if display == "plain" {
        assert_append_only("the plain REPL", &bytes);
    }
    (code, String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs the REPL on a pty in `display` mode as a dialogue: each step waits until the screen
/// shows its text that many times, then types its keys (an approval discards what was typed
/// before it was asked). Returns (exit code, screen text).
pub(crate) fn dialogue_in(
    ws: &Workspace,
    display: &str,
    args: &str,
    steps: &[(&str, usize, &str)],
) -> (i32, String) {
    let mut argv = vec!["--display", display];
    argv.extend(args.split_whitespace());
    let mut pty = Pty::spawn(ws, &[], &argv);
    for (text, times, keys) in steps {
        pty.wait_for_nth(text, *times);
        pty.send(keys);
    }
    let (code, bytes) = pty.finish();
    if display == "plain" {
        assert_append_only("the plain REPL", &bytes);
    }
    (code, String::from_utf8_lossy(&bytes).into_owned())
}

/// The REPL in plain mode (checked append-only), for the slash-command and MCP tests.
pub(crate) fn repl(ws: &Workspace, args: &str, keys: &str) -> (i32, String) {
    repl_in(ws, "plain", args, keys)
}

/// Starts the REPL on a pty; what is written to the child's stdin is typed on it.
pub(crate) fn spawn_repl(ws: &Workspace, args: &str) -> Child {
    // `exec`: a shell left waiting in between would take the pty's SIGINT as its own and
    // end with 130 after agent-loop exits 0 (dash does).
    let line = format!(
        "exec {} --config {} {args}",
        bin().display(),
        ws.path("backends.toml").display()
    );
    let mut cmd = Command::new("script");
    ws.hermetic(&mut cmd)
        .args(["-qec", &line, "/dev/null"])
        .current_dir(ws.work())
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
    for display in DISPLAYS {
        approvals_clear_and_exit_in(display);
    }
}

fn approvals_clear_and_exit_in(display: &str) {
    let ws = Workspace::new();
    let steps = [
        ("agent-loop with backend", 1, "run touch first.txt\n"),
        ("[n]o", 1, "y\nrun touch second.txt\n"),
        ("[n]o", 2, "maybe\n"),
        ("[n]o", 3, "n\nclear\nrun touch third.txt\n"),
        ("[n]o", 4, "a\nrun touch fourth.txt\nexit\n"),
    ];
    let (code, screen) = dialogue_in(&ws, display, "--backend demo", &steps);
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
    // The retry offers what the question offered: `[v]iew all` only for a long command.
    assert!(screen.contains("Please answer y, a or n."), "{screen}");
    assert!(!screen.contains("n or v"), "{screen}");
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

/// `[a]lways` holds for the session it was given in: a new one (`/clear`) asks again, and a
/// loaded one runs with its own answers, not those of the session before.
#[test]
fn always_ends_with_its_session() {
    let ws = Workspace::new();
    let steps = [
        ("agent-loop with backend", 1, "run touch a.txt\n"),
        ("[n]o", 1, "y\n/clear\nrun touch b.txt\n"),
        (
            "[n]o",
            2,
            "a\nrun touch c.txt\n/load one\nrun touch d.txt\n",
        ),
        ("[n]o", 3, "n\n/clear\nrun touch e.txt\n"),
        ("[n]o", 4, "n\n/exit\n"),
    ];
    let (code, screen) = dialogue_in(&ws, "plain", "--backend demo -s one", &steps);
    assert_eq!(code, 0, "{screen}");
    for (file, ran) in [
        ("a", true),
        ("b", true),
        ("c", true),
        ("d", false),
        ("e", false),
    ] {
        let path = ws.work().join(format!("{file}.txt"));
        assert_eq!(path.exists(), ran, "{file}.txt\n{screen}");
    }
    assert_eq!(screen.matches("Allow bash").count(), 4, "{screen}");
}

#[test]
fn end_of_input_leaves_cleanly() {
    for display in DISPLAYS {
        let ws = Workspace::new();
        let (code, screen) = repl_in(&ws, display, "--backend demo", "list the files here\n\x04");
        assert_eq!(code, 0, "{screen}");
        assert!(screen.contains("[tool ls] ."), "{screen}");
    }
}

#[test]
fn clear_forgets_the_conversation() {
    for display in DISPLAYS {
        clear_forgets_the_conversation_in(display);
    }
}

fn clear_forgets_the_conversation_in(display: &str) {
    let ws = Workspace::new();
    ws.reply(0, "noted\n");
    let (code, screen) = repl_in(
        &ws,
        display,
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
