//! docs/acp.md's promises: every command of its `sh` blocks runs, with `qwen` and `gemini` on
//! `PATH` being the fake ACP agent (fixtures/agents/fake-acp.py), so the preset runs end to end through the
//! built binary; its example entry is a valid backend.

use std::process::Command;

use crate::common::{bin, fixture, hermetic, path_with, Run};

const DOC: &str = include_str!("../../docs/acp.md");

#[test]
fn every_command_of_the_acp_doc_runs_and_its_entry_loads() {
    let dir = tempfile::tempdir().unwrap();
    let shims = dir.path().join("bin");
    std::fs::create_dir(&shims).unwrap();
    use std::os::unix::fs::PermissionsExt;
    for name in ["qwen", "gemini", "my-agent"] {
        let shim = shims.join(name);
        std::fs::write(
            &shim,
            format!(
                "#!/bin/sh\nexec python3 '{}'\n",
                fixture("agents/fake-acp.py").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = path_with(&[&shims, bin().parent().unwrap()]);
    let run = |line: &str| {
        let mut cmd = Command::new("sh");
        let output = hermetic(&mut cmd, dir.path())
            .args(["-c", line])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("FAKE_ACP_LOG", dir.path().join("acp.log"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let run = Run { output };
        run.assert_append_only();
        run.expect_code(0);
        run
    };
    let mut commands = 0;
    for (lang, body) in crate::readme::fenced(DOC) {
        match lang {
            "sh" => {
                for line in body.iter().filter(|l| !l.trim().is_empty()) {
                    assert!(
                        line.starts_with("agent-loop "),
                        "docs/acp.md command `{line}` is not run by any test"
                    );
                    let out = run(line).stdout();
                    if line.contains(" acp --help") {
                        assert!(out.contains("Usage: agent-loop acp"), "{out}");
                    } else if line.contains("doctor") {
                        assert!(out.contains("protocol version: 1"), "{out}");
                    } else {
                        assert!(
                            out.starts_with("You said: What is six times seven?"),
                            "{out}"
                        );
                    }
                    commands += 1;
                }
            }
            "toml" => {
                std::fs::write(dir.path().join("backends.toml"), body[1..].join("\n")).unwrap();
                let out = run("agent-loop --config backends.toml --backend my-agent hi").stdout();
                assert_eq!(out, "You said: hi\n");
            }
            _ => {}
        }
    }
    assert_eq!(commands, 4);
    // The model pinned with --model reached the agent.
    let log = std::fs::read_to_string(dir.path().join("acp.log")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("session/set_model") && l.contains("gemini-2.5-flash")),
        "{log}"
    );
}
