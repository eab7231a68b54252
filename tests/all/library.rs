//! The library as a front end uses it: `examples/one_turn.rs`, built by `cargo test` with the
//! other examples, runs a full tool round trip with a CLI backend defined in the user's
//! `$XDG_CONFIG_HOME/agent-loop/backends.toml`, through `agent_loop::chat` alone.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::common::Workspace;

/// `target/debug/examples/one_turn`, beside the folder of this test binary.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let example = target.join("examples").join("one_turn");
    assert!(
        example.exists(),
        "{} is missing: `cargo test` builds the examples (or `cargo build --examples`)",
        example.display()
    );
    example
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
