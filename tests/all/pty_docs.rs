//! docs/pty.md's promises: every command in its `sh` blocks is run, in a temporary folder
//! holding its `toml` example files, with `qwen` on `PATH` being the recorded Qwen Code
//! session (fixtures/agents/pty-replay.py replaying fixtures/pty/qwen): the presets and the
//! example entry run end to end through the built binary and read the recorded answer.

use std::process::Command;

use crate::common::{bin, fixture, hermetic, path_with, Run};

const DOC: &str = include_str!("../../docs/pty.md");

/// The `sh` lines, and the `toml` blocks whose first line is `# FILE`.
fn blocks() -> (Vec<String>, Vec<(String, String)>) {
    let (mut sh, mut files) = (Vec::new(), Vec::new());
    for (lang, body) in crate::readme::fenced(DOC) {
        match lang {
            "sh" => sh.extend(body.iter().map(|l| l.to_string())),
            "toml" => {
                if let Some(name) = body.first().and_then(|l| l.strip_prefix("# ")) {
                    files.push((name.to_string(), body[1..].join("\n") + "\n"));
                }
            }
            _ => {}
        }
    }
    (sh, files)
}

#[test]
fn every_command_of_the_pty_doc_runs() {
    let (sh, files) = blocks();
    assert!(sh.len() >= 3, "{sh:?}");
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in &files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let shims = dir.path().join("bin");
    std::fs::create_dir(&shims).unwrap();
    let qwen = shims.join("qwen");
    std::fs::write(
        &qwen,
        format!(
            "#!/bin/sh\nexec python3 '{}' '{}'\n",
            fixture("agents/pty-replay.py").display(),
            fixture("pty/qwen").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&qwen, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = path_with(&[&shims, bin().parent().unwrap()]);
    for line in sh.iter().filter(|l| !l.trim().is_empty()) {
        assert!(
            line.starts_with("agent-loop "),
            "docs/pty.md command `{line}` is not run by any test"
        );
        let mut cmd = Command::new("sh");
        let output = hermetic(&mut cmd, dir.path())
            .args(["-c", line])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("TERM", "xterm-256color")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let run = Run { output };
        run.assert_append_only();
        run.expect_code(0);
        if line.contains("doctor") {
            let out = run.stdout();
            assert!(out.contains("--- final screen"), "{out}");
            assert!(out.contains("The answer is 42."), "{out}");
        } else {
            assert_eq!(run.stdout(), "The answer is 42.\n", "{line}");
            assert!(
                run.stderr().contains("] The answer is 42.\n"),
                "{}",
                run.stderr()
            );
        }
    }
}
