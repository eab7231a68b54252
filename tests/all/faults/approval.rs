//! Approval that cannot be fooled (issue 30): the prompt shows the whole command, however it
//! is padded or escaped; what was typed before the question does not answer it; `--allow`
//! rules judge a path where it leads, and changes to `.git/` always ask.

use crate::common::{assert_append_only, Pty, Workspace};

/// A reply asking bash to run `command`, then "done".
fn bash_reply(ws: &Workspace, command: &str) {
    let call = serde_json::json!({"name": "bash", "arguments": {"command": command}});
    ws.reply(1, format!("<tool_call>{call}</tool_call>\n"));
    ws.reply(2, "done\n");
}

/// Runs `go` on a pseudo-terminal in the plain display, answers `answers` to the approval
/// prompts, one per prompt as it appears; the screen.
fn approve(ws: &Workspace, answers: &[&str]) -> String {
    let mut pty = Pty::spawn(ws, &[], &["--display", "plain", "--backend", "fake", "go"]);
    for (n, answer) in answers.iter().enumerate() {
        pty.wait_for_nth("[n]o", n + 1);
        pty.send(answer);
    }
    let (code, bytes) = pty.finish();
    assert_append_only("the plain approval prompt", &bytes);
    let screen = String::from_utf8_lossy(&bytes).into_owned();
    assert_eq!(code, 0, "{screen}");
    screen
}

#[test]
fn padding_cannot_hide_a_command_from_the_prompt() {
    let ws = Workspace::new();
    bash_reply(&ws, &format!("echo hi{}; touch PWN", " ".repeat(400)));
    let screen = approve(&ws, &["n\n"]);
    assert!(
        screen.contains("echo hi\u{2420}\u{d7}400; touch PWN"),
        "{screen}"
    );
    assert!(!ws.work().join("PWN").exists());

    let ws = Workspace::new();
    bash_reply(&ws, &format!("echo hi{}touch PWN\x1b[2K", "\n".repeat(60)));
    let screen = approve(&ws, &["n\n"]);
    assert!(
        screen.contains("echo hi\\n\u{d7}60\n  | touch PWN\\x1b[2K"),
        "{screen}"
    );
    assert!(!ws.work().join("PWN").exists());
}

#[test]
fn a_command_longer_than_the_screen_is_counted_and_can_be_viewed() {
    let ws = Workspace::new();
    let script: String = (1..=100).map(|i| format!("echo line{i}\n")).collect();
    bash_reply(&ws, &format!("{script}touch PWN"));
    let screen = approve(&ws, &["v\n", "n\n"]);
    assert!(screen.contains("It asks to run (101 lines)"), "{screen}");
    assert!(screen.contains("71 more lines not shown"), "{screen}");
    // `v` showed the rest, then asked again.
    assert!(screen.contains("  | touch PWN\n"), "{screen}");
    assert_eq!(screen.matches("[v]iew all: ").count(), 2, "{screen}");
    assert!(screen.contains("not run: the user said no"), "{screen}");
    assert!(!ws.work().join("PWN").exists());
}

/// `y` typed while the backend was still working is thrown away: the question is answered
/// by what is typed after it appears.
#[test]
fn typeahead_does_not_answer_the_approval() {
    let ws = Workspace::new();
    ws.gated_backend();
    bash_reply(&ws, "touch typed.txt");
    let mut pty = Pty::spawn(&ws, &[], &["--display", "plain", "--backend", "slow", "go"]);
    assert!(
        crate::common::poll(|| ws.gate_reached().then_some(())).is_some(),
        "the slow agent never started"
    );
    pty.send("y\n");
    // The typed line has reached the terminal (its echo) before the backend answers.
    pty.wait_for("y\n");
    ws.open_gate();
    pty.wait_for("[n]o");
    pty.send("n\n");
    let (code, bytes) = pty.finish();
    let screen = String::from_utf8_lossy(&bytes).into_owned();
    assert_eq!(code, 0, "{screen}");
    assert!(
        !ws.work().join("typed.txt").exists(),
        "typeahead answered the prompt\n{screen}"
    );
    assert!(screen.contains("not run: the user said no"), "{screen}");
}

/// The results the model got back for `calls`, run without a terminal (so whatever asks is
/// refused), with `args`.
fn results(ws: &Workspace, calls: &[serde_json::Value], args: &[&str]) -> String {
    let text: String = calls
        .iter()
        .map(|c| format!("<tool_call>{c}</tool_call>\n"))
        .collect();
    ws.reply(1, text);
    ws.reply(2, "done\n");
    let mut all = vec!["--backend", "fake"];
    all.extend_from_slice(args);
    all.push("go");
    // 4 when every call was refused (docs/reliability.md), else 0.
    let code = ws.run(&all).code();
    assert!(code == 0 || code == 4, "exit code {code}");
    ws.prompt(2)
}

fn git(ws: &Workspace, args: &[&str]) {
    let status = ws
        .hermetic(&mut std::process::Command::new("git"))
        .args(args)
        .current_dir(ws.work())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// `--allow 'write:docs/*'` vouched for `docs/../.git/config`; with `bash:git status*` that
/// was code execution through `core.fsmonitor`. Now the path is judged resolved: the write
/// asks (and, with no terminal, is refused), git status runs without the hook.
#[test]
fn allow_rules_judge_the_resolved_path_and_git_always_asks() {
    let ws = Workspace::new();
    git(&ws, &["init", "-q"]);
    std::fs::create_dir(ws.work().join("docs")).unwrap();
    let config_before = std::fs::read_to_string(ws.work().join(".git/config")).unwrap();
    let hook = "[core]\n\tfsmonitor = touch PWNED\n";
    let calls = [
        serde_json::json!({"name": "write", "arguments": {"path": "docs/../.git/config", "content": hook}}),
        serde_json::json!({"name": "bash", "arguments": {"command": "git status --short"}}),
        serde_json::json!({"name": "write", "arguments": {"path": "docs/../outside.txt", "content": "x"}}),
        serde_json::json!({"name": "write", "arguments": {"path": "docs/fine.md", "content": "ok"}}),
    ];
    let second = results(
        &ws,
        &calls,
        &["--allow", "write:docs/*", "--allow", "bash:git status*"],
    );
    assert_eq!(
        second.matches("cannot ask for approval").count(),
        2,
        "{second}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.work().join(".git/config")).unwrap(),
        config_before
    );
    assert!(!ws.work().join("PWNED").exists(), "the hook ran\n{second}");
    assert!(!ws.work().join("outside.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.work().join("docs/fine.md")).unwrap(),
        "ok"
    );

    // A bare `write` rule does not cover .git/ either; one that names .git/ does.
    let call = [
        serde_json::json!({"name": "write", "arguments": {"path": ".git/hooks/pre-commit", "content": "x"}}),
    ];
    let ws = Workspace::new();
    git(&ws, &["init", "-q"]);
    let second = results(&ws, &call, &["--allow", "write"]);
    assert!(second.contains("cannot ask for approval"), "{second}");
    assert!(!ws.work().join(".git/hooks/pre-commit").exists());
    let ws = Workspace::new();
    git(&ws, &["init", "-q"]);
    let second = results(&ws, &call, &["--allow", "write:.git/hooks/*"]);
    assert!(second.contains("wrote .git/hooks/pre-commit"), "{second}");
}
