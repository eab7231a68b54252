//! The user's system prompt (`system.md`, `system_prompt`, `--system FILE`) in both modes,
//! checked in the exact text a CLI backend's prompt and an HTTP backend's request carry, with
//! `{cwd}`, `{tools}` and `{date}` filled in and AGENTS.md after it; and `/system`.

use crate::common::Workspace;
use crate::http::server::json;
use crate::http::{run_api, setup, Format};

const LS: &str = "# Tools\n\n## ls\nList a folder: one entry a line, sorted, folders ending in /, files with their size in bytes, symbolic links as `name -> target`.\n\
Arguments (JSON schema): {\"properties\":{\"path\":{\"description\":\"Folder to list (default: the working directory).\",\"type\":\"string\"}},\"type\":\"object\"}\n";

const PROTOCOL: &str = "You do not run anything yourself. To use a tool, write a tool call in exactly this format, on its own line, then end your reply:\n\
<tool_call>{\"name\":\"TOOL_NAME\",\"arguments\":{\"PARAMETER\":\"VALUE\"}}</tool_call>\n\
The results come back in the next message. Several tool calls in one reply run in order. When the task is done, reply with the answer and no tool call.\n";

const MEMORY: &str =
    "# Memory\nNotes kept in AGENTS.md in the working directory; follow them.\n\n* use tabs\n";

fn today() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10].to_string()
}

fn workspace() -> (Workspace, String) {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(ws.work().join("AGENTS.md"), "* use tabs\n").unwrap();
    ws.reply(0, "answer\n");
    let cwd = std::fs::canonicalize(ws.work())
        .unwrap()
        .display()
        .to_string();
    (ws, cwd)
}

#[test]
fn system_md_is_appended_after_the_builtin_preamble_and_before_agents_md() {
    let (ws, cwd) = workspace();
    std::fs::write(
        ws.path("xdg/agent-loop/system.md"),
        "Be brief. Here: {cwd}. Tools: {tools}. Today: {date}.\n",
    )
    .unwrap();
    ws.run(&["--backend", "fake", "--tools", "ls,read", "hi"])
        .expect_code(0);
    let prompt = ws.prompt(1);
    let expected = format!(
        "You are a coding agent driven by agent-loop. The working directory is {cwd}.\n{PROTOCOL}\n"
    );
    assert!(prompt.starts_with(&expected), "{prompt}");
    let tail = format!(
        "\n# Instructions\nBe brief. Here: {cwd}. Tools: read, ls. Today: {}.\n\n{MEMORY}\n# Conversation\n\nUser: hi\n\nAssistant:",
        today()
    );
    assert!(prompt.ends_with(&tail), "{prompt}");
}

#[test]
fn system_prompt_setting_replaces_the_opening_and_keeps_the_tool_format() {
    let (ws, cwd) = workspace();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "system_prompt = \"You are terse. Work in {cwd}.\"\nsystem_mode = \"replace\"\n",
    )
    .unwrap();
    // system.md is there too: the setting wins over it.
    std::fs::write(ws.path("xdg/agent-loop/system.md"), "IGNORED").unwrap();
    ws.run(&["--backend", "fake", "--tools", "ls", "hi"])
        .expect_code(0);
    assert_eq!(
        ws.prompt(1),
        format!(
            "You are terse. Work in {cwd}.\n\n{PROTOCOL}\n{LS}\n{MEMORY}\n# Conversation\n\nUser: hi\n\nAssistant:"
        )
    );
}

fn http_system(mode: &str) -> (String, String) {
    let answer = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
        "usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}"#;
    let (ws, server) = setup(Format::OpenAi, vec![json(200, answer)], "");
    std::fs::write(ws.work().join("AGENTS.md"), "* use tabs\n").unwrap();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        format!("system_mode = \"{mode}\"\n"),
    )
    .unwrap();
    let file = ws.path("mine.md");
    std::fs::write(&file, "Answer in French. Tools: {tools}.\n").unwrap();
    run_api(
        &ws,
        &[
            "--no-stream",
            "--tools",
            "ls",
            "--system",
            file.to_str().unwrap(),
            "hi",
        ],
    )
    .expect_code(0);
    let body = server.requests()[0].json();
    assert_eq!(body["messages"][0]["role"], "system", "{body}");
    let cwd = std::fs::canonicalize(ws.work())
        .unwrap()
        .display()
        .to_string();
    (
        body["messages"][0]["content"].as_str().unwrap().to_string(),
        cwd,
    )
}

#[test]
fn an_http_backend_gets_the_system_file_appended_or_in_place_of_its_own() {
    let (system, cwd) = http_system("append");
    // Sections of an HTTP system prompt are joined by one line break, as the memory always was.
    assert_eq!(
        system,
        format!(
            "You are a coding agent driven by agent-loop. The working directory is {cwd}. Use the tools to look at and change files and to run commands; several tool calls in one reply run in order. When the task is done, reply with the answer and no tool call.\n\
             # Instructions\nAnswer in French. Tools: ls.\n{MEMORY}"
        )
    );
    let (system, _) = http_system("replace");
    assert_eq!(system, format!("Answer in French. Tools: ls.\n{MEMORY}"));
}

/// `/system` shows what the backend is sent: the built-in part, yours and AGENTS.md.
#[test]
fn the_system_command_shows_the_effective_prompt() {
    let (ws, cwd) = workspace();
    std::fs::write(ws.path("xdg/agent-loop/system.md"), "Be brief in {cwd}.\n").unwrap();
    let (code, screen) = crate::repl::repl(&ws, "--backend fake --tools ls", "/system\n/exit\n");
    assert_eq!(code, 0, "{screen}");
    let source = ws.path("xdg/agent-loop/system.md").display().to_string();
    for expected in [
        format!("[system prompt of backend fake; yours: {source}, append]"),
        format!("You are a coding agent driven by agent-loop. The working directory is {cwd}."),
        format!("# Instructions\nBe brief in {cwd}.\n\n# Memory"),
        "* use tabs".to_string(),
    ] {
        assert!(
            screen.contains(&expected),
            "missing {expected:?} in\n{screen}"
        );
    }
    assert!(!screen.contains("# Conversation"), "{screen}");
}
