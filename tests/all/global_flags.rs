//! `--config FILE` names the backends.toml the subcommands read, so it is taken after the
//! subcommand's name as well as before it (`agent-loop doctor --config mine.toml`): a newcomer
//! checking their own file types it there, and clap's `-- --config` tip was wrong for them.
//! The subcommands that read no backends take it too, unread, for a shell alias that holds
//! it (`alias al='agent-loop --config ~/x.toml'`, then `al sessions`).

use std::process::Command;

use crate::common::{bin, Workspace};

/// Runs `args` with `--config mine.toml` after them (and no other `--config`), `mine.toml`
/// holding a misspelt key: the error naming `mine.toml:2` shows that the file was read.
fn reads_config_after(args: &[&str]) {
    let ws = Workspace::new();
    let mine = ws.path("mine.toml");
    std::fs::write(&mine, "[backends.x]\ncomand = \"sh\"\n").unwrap();
    let mut cmd = Command::new(bin());
    ws.hermetic(&mut cmd)
        .current_dir(ws.work())
        .env("TELEGRAM_BOT_TOKEN", "1:not-a-token")
        .args(args)
        .arg("--config")
        .arg(&mine)
        .stdin(std::process::Stdio::null());
    let run = ws.run_cmd(cmd);
    let all = format!("{}{}", run.stdout(), run.stderr());
    assert_eq!(run.code(), 2, "{args:?}: {all}");
    assert!(
        all.contains(&format!("{}:2: backend `x`", mine.display())),
        "{args:?}: {all}"
    );
    assert!(!all.contains("unexpected argument"), "{args:?}: {all}");
}

#[test]
fn doctor() {
    reads_config_after(&["doctor", "x"]);
}

#[test]
fn backends() {
    reads_config_after(&["backends"]);
}

#[test]
fn config() {
    reads_config_after(&["config"]);
}

#[test]
fn acp() {
    reads_config_after(&["acp"]);
}

#[test]
fn telegram() {
    reads_config_after(&["telegram", "--allow-user", "1"]);
}

#[test]
fn mcp_serve() {
    reads_config_after(&["mcp", "serve"]);
}

#[test]
fn mcp_login() {
    reads_config_after(&["mcp", "login", "files"]);
}

/// Before the subcommand, as before: the same file is read.
#[test]
fn before_the_subcommand_too() {
    let ws = Workspace::new();
    ws.add_config("[backends.mine]\ncommand = \"true\"\ndescription = \"my own\"\n");
    let run = ws.run(&["backends"]);
    run.expect_code(0);
    assert!(run.stdout().contains("mine"), "{}", run.stdout());
}

/// `sessions`, `completions` and `import-spec` read no backends: with `--config` before their
/// name, as an alias puts it, a broken file stops none of them, and their help says that
/// they ignore it rather than describe a file they would read.
#[test]
fn the_subcommands_that_read_no_backends_ignore_it() {
    let ws = Workspace::new();
    ws.config("[backends.x]\ncomand = \"sh\"\n");
    let spec = crate::common::fixture("unifyweaver/agent_loop_spec.pl");
    for args in [
        vec!["sessions"],
        vec!["completions", "bash"],
        vec!["import-spec", spec.to_str().unwrap()],
    ] {
        let run = ws.run(&args);
        run.expect_code(0);
        let all = format!("{}{}", run.stdout(), run.stderr());
        assert!(!all.is_empty(), "{args:?}");
        assert!(!all.contains("comand"), "{args:?}: {all}");
    }
    let help = ws.run(&["sessions", "--help"]);
    help.expect_code(0);
    let text = help
        .stdout()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("sessions, completions and import-spec read no backends and ignore it"),
        "{text}"
    );
}
