//! The documentation's promises: every command in the `sh` blocks of README.md and
//! docs/*.md is run, here (the `agent-loop` lines, in a temporary folder holding the pages'
//! example files) or by `.ci/run` (the others, each a line there as written, indented or not).

use std::path::Path;
use std::process::Command;

use crate::common::{bin, fixture, hermetic, path_with, Run};
use crate::http::server::{response, Answer, Server};

const README: &str = include_str!("../../README.md");
const CI: &str = include_str!("../../.ci/run");

/// The documentation pages, README.md first, then docs/*.md by name: (path relative to the
/// repository, text).
pub(crate) fn pages() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("the docs/ folder")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    std::iter::once("README.md".to_string())
        .chain(docs)
        .map(|rel| {
            let text = std::fs::read_to_string(root.join(&rel))
                .unwrap_or_else(|e| panic!("cannot read {rel}: {e}"));
            (rel, text)
        })
        .collect()
}

struct Blocks {
    /// (page, command line) of every line of every `sh` block.
    sh: Vec<(String, String)>,
    /// `toml` blocks whose first line is `# FILE`, `prolog` blocks whose first line is
    /// `% FILE`: (file, text).
    files: Vec<(String, String)>,
}

/// The fenced code blocks of a Markdown text: (language, lines), in order.
pub(crate) fn fenced(text: &str) -> Vec<(&str, Vec<&str>)> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.strip_prefix("```") {
            let body = lines
                .by_ref()
                .take_while(|l| !l.starts_with("```"))
                .collect();
            blocks.push((lang, body));
        }
    }
    blocks
}

fn blocks() -> Blocks {
    let mut out = Blocks {
        sh: Vec::new(),
        files: Vec::new(),
    };
    // docs/pty.md's, docs/acp.md's and docs/mcp-server.md's commands need an agent on PATH:
    // tests/all/pty_docs.rs, tests/all/acp_docs.rs and tests/all/mcp_serve/docs.rs run them.
    for (page, text) in pages().into_iter().filter(|(page, _)| {
        page != "docs/pty.md" && page != "docs/acp.md" && page != "docs/mcp-server.md"
    }) {
        for (lang, body) in fenced(&text) {
            match lang {
                "sh" => out
                    .sh
                    .extend(body.iter().map(|l| (page.clone(), l.to_string()))),
                // An example file: its first line names it, as a comment of its language.
                "toml" | "prolog" => {
                    let comment = if lang == "toml" { "# " } else { "% " };
                    if let Some(name) = body.first().and_then(|l| l.strip_prefix(comment)) {
                        assert!(
                            !out.files.iter().any(|(n, _)| n == name),
                            "{page}: a second example file named {name}"
                        );
                        out.files
                            .push((name.to_string(), body[1..].join("\n") + "\n"));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[test]
fn every_sh_command_runs() {
    let blocks = blocks();
    assert!(blocks.sh.len() >= 8, "{:?}", blocks.sh);
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), README).unwrap();
    for (name, text) in &blocks.files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = path_with(&[bin().parent().unwrap()]);
    // HTTP examples go to a local server through the providers' base-URL variables, which
    // answers each in its own wire format, in the order the pages list them.
    let (answers, expected_paths): (Vec<Answer>, Vec<&str>) = blocks
        .sh
        .iter()
        .filter_map(|(_, line)| {
            let (file, kind, path) = if line.contains("--backend claude-api") {
                ("anthropic/text.sse", "text/event-stream", "/v1/messages")
            } else if line.contains("--backend openai") {
                (
                    "openai/text.sse",
                    "text/event-stream",
                    "/v1/chat/completions",
                )
            } else if line.contains("--backend ollama ") {
                ("ollama/text.ndjson", "application/x-ndjson", "/api/chat")
            } else {
                return None;
            };
            let body = std::fs::read(fixture(&format!("http/{file}"))).unwrap();
            Some((response(200, &[("Content-Type", kind)], &body), path))
        })
        .unzip();
    for format in ["/v1/messages", "/v1/chat/completions", "/api/chat"] {
        assert!(
            expected_paths.contains(&format),
            "the docs show no example of the HTTP format of {format}"
        );
    }
    let server = Server::start(answers);
    let mut ran = 0;
    for (page, line) in &blocks.sh {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if !line.contains("agent-loop ") || line.starts_with("cargo ") {
            assert!(
                CI.lines().any(|l| l.trim() == line),
                "{page}: command `{line}` is run neither here nor by .ci/run"
            );
            continue;
        }
        // `agent-loop backends` asks a keyless server whether it answers: not the scripted
        // server, whose answers are counted out for the HTTP examples (port 9, discard, is
        // closed on a test machine).
        let ollama_host = if line.contains("agent-loop backends") || line.ends_with(" backends") {
            "127.0.0.1:9".to_string()
        } else {
            server.url.trim_start_matches("http://").to_string()
        };
        // TMPDIR too, outside the working folder: a fan-out example keeps its copies of the
        // folder there.
        let mut cmd = Command::new("sh");
        let output = hermetic(&mut cmd, dir.path())
            .args(["-c", line])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("TMPDIR", tmp.path())
            .env("ANTHROPIC_API_KEY", "sk-ant-readme-test-key")
            .env("ANTHROPIC_BASE_URL", &server.url)
            .env("OPENAI_API_KEY", "sk-readme-test-key")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
            .env("OLLAMA_HOST", &ollama_host)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let run = Run { output };
        run.assert_append_only();
        assert_eq!(
            run.code(),
            0,
            "{page}: `{line}`\nstdout: {}\nstderr: {}",
            run.stdout(),
            run.stderr()
        );
        ran += 1;
        if line.contains(" doctor ") {
            assert!(run.stdout().ends_with("\nok\n"), "{line}: {}", run.stdout());
        } else if line.contains("line-counter") {
            let out = run.stdout();
            let n: Option<u32> = out
                .strip_prefix("Your prompt has ")
                .and_then(|r| r.strip_suffix(" lines.\n"))
                .and_then(|n| n.trim().parse().ok());
            assert!(n.is_some_and(|n| n > 10), "{out}");
            assert!(
                run.stderr().contains("[tokens in 1200 / out 9]"),
                "{}",
                run.stderr()
            );
        }
    }
    assert!(ran >= 5, "only {ran} agent-loop commands ran");
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, expected_paths, "one request per HTTP example");
    let answer = std::fs::read_to_string(dir.path().join("answer.txt")).unwrap();
    assert!(
        answer.starts_with("Done. For \"read README.md\""),
        "{answer}"
    );
}

/// A new user's first screen: the two set-up commands (the offline demo, the whole test
/// suite) are in the README's first 25 lines, in an `sh` block.
#[test]
fn the_set_up_commands_are_on_the_first_screen() {
    let first: String = README.lines().take(25).map(|l| format!("{l}\n")).collect();
    let sh: Vec<&str> = fenced(&first)
        .into_iter()
        .filter(|(lang, _)| *lang == "sh")
        .flat_map(|(_, lines)| lines)
        .collect();
    for command in [
        "cargo run -- --backend demo \"list the files here\"",
        "scripts/test.sh",
    ] {
        assert!(
            sh.contains(&command),
            "`{command}` not in the first 25 lines:\n{first}"
        );
    }
}
