//! The library as a front end uses it: `examples/one_turn.rs`, built by `cargo test` with the
//! other examples, runs a full tool round trip with a CLI backend defined in the user's
//! `$XDG_CONFIG_HOME/agent-loop/backends.toml`, through the library's public face alone; and
//! `examples/line_chat.rs`, a second front end that offers the library's slash commands.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::common::Workspace;

/// `target/debug/examples/NAME`, beside the folder of this test binary.
fn example_named(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let example = target.join("examples").join(name);
    assert!(
        example.exists(),
        "{} is missing: `cargo test` builds the examples (or `cargo build --examples`)",
        example.display()
    );
    example
}

fn example() -> PathBuf {
    example_named("one_turn")
}

#[test]
fn the_one_turn_example_runs_a_tool_round_trip_from_the_users_config() {
    let ws = Workspace::new();
    // The backend lives in the user's config folder, not in a --config file.
    let user = ws.path("xdg/agent-loop");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::copy(ws.path("backends.toml"), user.join("backends.toml")).unwrap();
    std::fs::write(ws.work().join("notes.txt"), "the secret is 42\n").unwrap();
    ws.reply(
        1,
        "<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>\n",
    );
    ws.reply(2, "The secret is 42.\n");
    let mut cmd = Command::new(example());
    ws.hermetic(&mut cmd)
        .current_dir(ws.work())
        .args(["fake", "what is the secret?"])
        .stdin(Stdio::null());
    let out = cmd.output().expect("run examples/one_turn");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "The secret is 42.\n");
    assert!(stderr.contains("[tool read] notes.txt"), "{stderr}");
    assert_eq!(ws.runs(), 2);
    assert!(
        ws.prompt(2).contains("     1\tthe secret is 42"),
        "the tool's result reached the second prompt: {}",
        ws.prompt(2)
    );
}

#[test]
fn the_example_says_how_to_call_it() {
    let ws = Workspace::new();
    let out = ws.hermetic(&mut Command::new(example())).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: one_turn BACKEND TASK"));
}

/// The `demo` backend in a program that embeds the library: `{self}` is not that program
/// (started as `one_turn demo-agent`, it would run again with an argument it does not know),
/// but the `agent-loop` on PATH; with none there, the error says so.
#[test]
fn the_demo_backend_in_an_embedding_program_runs_agent_loop_not_itself() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.txt"), "hello\n").unwrap();
    let run = |path: Option<std::ffi::OsString>| {
        let mut cmd = Command::new(example());
        ws.hermetic(&mut cmd)
            .current_dir(ws.work())
            .args(["demo", "list the files here"])
            .stdin(Stdio::null());
        if let Some(path) = path {
            cmd.env("PATH", path);
        }
        cmd.output().expect("run examples/one_turn")
    };
    let out = run(None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("this program is not it, and no `agent-loop` is on PATH"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("usage: one_turn"),
        "it ran itself: {stderr}"
    );
    let shims = ws.path("shims");
    std::fs::create_dir_all(&shims).unwrap();
    std::os::unix::fs::symlink(crate::common::bin(), shims.join("agent-loop")).unwrap();
    let out = run(Some(crate::common::path_with(&[&shims])));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("notes.txt"),
        "{stderr}"
    );
}

/// The line chat runs turns and the library's commands: /undo drops a turn, /retry sends the
/// last message again, /model sets the model, an unknown command is not offered.
#[test]
fn the_line_chat_example_offers_the_librarys_slash_commands() {
    let ws = Workspace::new();
    ws.takes_models("fake");
    let user = ws.path("xdg/agent-loop");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::copy(ws.path("backends.toml"), user.join("backends.toml")).unwrap();
    ws.reply(1, "first answer\n");
    ws.reply(2, "second answer\n");
    ws.reply(3, "second again\n");
    let mut cmd = Command::new(example_named("line_chat"));
    ws.hermetic(&mut cmd)
        .current_dir(ws.work())
        .arg("fake")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run examples/line_chat");
    let keys = "one\n/undo\n/history\ntwo\n/retry\n/model big\n/frobnicate\n";
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), keys.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("commands: /clear /backend /model"),
        "{stderr}"
    );
    assert_eq!(
        stdout,
        "first answer\n[dropped the last turn]\n[the conversation is empty]\nsecond answer\n\
         second again\n[model big]\nnot offered here\n"
    );
    // /retry sent "two" again without the answer it got, and "one" was gone.
    let third = ws.prompt(3);
    assert!(
        third.contains("User: two") && !third.contains("second answer"),
        "{third}"
    );
    assert!(!third.contains("User: one"), "{third}");
}
