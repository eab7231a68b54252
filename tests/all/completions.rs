//! The install lines of the shell completions (docs/configuration.md, "Shell completions",
//! and `agent-loop completions --help`) put each script where its shell looks, under a
//! throw-away HOME; bash then completes agent-loop (zsh and fish too, when installed here).

use std::path::Path;
use std::process::Command;

use crate::common::{bin, hermetic, path_with, Workspace};

const DOC: &str = include_str!("../../docs/configuration.md");

/// Each shell's install line from the docs' "Shell completions" block.
fn install_lines() -> Vec<&'static str> {
    let section = &DOC[DOC.find("### Shell completions").expect("the section")..];
    let (_, lines) = crate::readme::fenced(section)
        .into_iter()
        .find(|(lang, _)| *lang == "sh")
        .expect("an sh block");
    lines
}

/// Runs `line` with `sh -c` and HOME (and nothing else of the machine) in `root`.
fn sh(root: &Path, line: &str) -> std::process::Output {
    let mut cmd = Command::new("sh");
    hermetic(&mut cmd, root)
        .env("PATH", path_with(&[bin().parent().unwrap()]))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .args(["-c", line])
        .current_dir(root)
        .output()
        .unwrap()
}

#[test]
fn the_install_lines_put_each_script_where_its_shell_looks() {
    let lines = install_lines();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let ws = Workspace::new();
    let root = ws.dir.path();
    for line in &lines {
        let out = sh(root, line);
        assert!(out.status.success(), "{line}: {out:?}");
    }
    let home = root.join("home");
    for (file, shell) in [
        (
            ".local/share/bash-completion/completions/agent-loop",
            "bash",
        ),
        (".zfunc/_agent-loop", "zsh"),
        (".config/fish/completions/agent-loop.fish", "fish"),
    ] {
        let text = std::fs::read_to_string(home.join(file))
            .unwrap_or_else(|e| panic!("{shell}: no ~/{file}: {e}"));
        assert!(text.contains("max-iterations"), "{shell}: {text}");
    }
    // The same commands in `agent-loop completions --help`, each on a line of its own.
    let help = ws.run(&["completions", "--help"]);
    help.expect_code(0);
    for line in &lines {
        let write = &line[line.find("agent-loop completions").unwrap()..];
        assert!(
            help.stdout().lines().any(|l| l == write),
            "{write} not a line of:\n{}",
            help.stdout()
        );
    }
    assert!(
        help.stdout().contains("fpath=(~/.zfunc $fpath)"),
        "{}",
        help.stdout()
    );

    // bash-completion loads the file by the command's name; loading it defines the completion.
    let out = sh(
        root,
        "bash -c '. ~/.local/share/bash-completion/completions/agent-loop && complete -p agent-loop'",
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("agent-loop"),
        "{out:?}"
    );
    let has = |shell: &str| sh(root, &format!("command -v {shell}")).status.success();
    if has("zsh") {
        let out = sh(
            root,
            "zsh -fc 'fpath=(~/.zfunc $fpath); autoload -Uz compinit && compinit -u -d ~/.zcompdump && (( $+_comps[agent-loop] ))'",
        );
        assert!(out.status.success(), "zsh: {out:?}");
    }
    if has("fish") {
        let out = sh(root, "fish -c 'complete -C \"agent-loop --max-it\"'");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("--max-iterations"),
            "fish: {out:?}"
        );
    }
}

/// The subcommands clap builds only when given (docs/configuration.md, "One gap"): their own
/// subcommands are still completed after them, and both ways to their help print it.
#[test]
fn deferred_subcommands_still_complete_and_show_their_help() {
    let ws = Workspace::new();
    let script = ws.run(&["completions", "bash"]);
    script.expect_code(0);
    assert!(
        script
            .stdout()
            .contains("opts=\"-h --config --help serve login logout help\""),
        "no completion of `agent-loop mcp`'s subcommands"
    );
    for args in [&["help", "mcp", "serve"][..], &["mcp", "serve", "--help"]] {
        let help = ws.run(args);
        help.expect_code(0);
        assert!(
            help.stdout()
                .contains("Usage: agent-loop mcp serve [OPTIONS]")
                && help.stdout().contains("--backend"),
            "{args:?}: {}",
            help.stdout()
        );
    }
}
