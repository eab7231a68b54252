//! The offline demo agent (`agent-loop demo-agent`, behind the `demo` backend): it behaves like
//! a single-task agent CLI, so a new user sees the whole loop without installing anything, and
//! the demo goes through the same subprocess, ANSI-stripping and parsing path as a real CLI.
//!
//! It reads the prompt on stdin. If the current exchange has no tool result yet, it asks for
//! one tool (read, bash or ls, picked from the task's words: `read FILE`, `run COMMAND`, `list
//! the files`) in coloured output with a token line; once the result is there, it answers from
//! it. A task it does not understand gets, instead of a tool call, the list of what it can do.

#![allow(clippy::print_stdout)]

use std::io::Read;

const BOLD_CYAN: &str = "\x1b[1;36m";
const YELLOW: &str = "\x1b[33m";
const GREEN: &str = "\x1b[32m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

pub fn run() -> i32 {
    let mut prompt = String::new();
    if std::io::stdin().read_to_string(&mut prompt).is_err() {
        eprintln!("demo-agent: the prompt on stdin is not UTF-8 text");
        return 2;
    }
    let exchange = prompt.rsplit("\nUser: ").next().unwrap_or("");
    // The whole task, every line of it, up to the cue for the assistant's reply.
    let task = exchange.split("\n\nAssistant:").next().unwrap_or("").trim();
    println!("{BOLD_CYAN}demo-agent v1{RESET} {DIM}(an emulated agent CLI, offline){RESET}");
    let reply = match last_tool_result(exchange) {
        None => ask_for_tool(task),
        Some((status, output)) => answer(task, status, output),
    };
    print!("{reply}");
    let input = prompt.len().div_ceil(4);
    let output = reply.len().div_ceil(4);
    println!("{DIM}Tokens: {input} input, {output} output{RESET}");
    0
}

fn ask_for_tool(task: &str) -> String {
    // ASCII lower case keeps byte offsets, so they index `task` too.
    let lower = task.to_ascii_lowercase();
    let (intro, name, args) = if let Some(path) = word_after(task, &lower, "read ") {
        (
            "I will read the file.",
            "read",
            serde_json::json!({ "path": path }),
        )
    } else if let Some(start) = phrase(&lower, "run ") {
        let command = task[start + 4..].trim().trim_matches('`');
        (
            "I will run the command.",
            "bash",
            serde_json::json!({ "command": command }),
        )
    } else if lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| matches!(w, "list" | "ls" | "files" | "folder" | "directory"))
    {
        (
            "I will look at the files here first.",
            "ls",
            serde_json::json!({ "path": "." }),
        )
    } else {
        return what_i_can_do(task);
    };
    let call = serde_json::json!({ "name": name, "arguments": args });
    format!("{YELLOW}{intro}{RESET}\n<tool_call>{call}</tool_call>\n")
}

fn answer(task: &str, status: &str, output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let mut text = if status == "ok" {
        let n = agent_loop::text::plural::count(lines.len(), "line", "lines");
        format!("{GREEN}Done.{RESET} For \"{task}\" the tool answered ({n}):\n")
    } else {
        format!("{YELLOW}The tool failed{RESET} for \"{task}\":\n")
    };
    for line in lines.iter().take(20) {
        text.push_str(&format!("  {line}\n"));
    }
    if lines.len() > 20 {
        let more = agent_loop::text::plural::count(lines.len() - 20, "more line", "more lines");
        text.push_str(&format!("  ... and {more}\n"));
    }
    text
}

/// The answer to a task the demo does not understand: what it can do, in the exact phrases.
fn what_i_can_do(task: &str) -> String {
    format!(
        "{YELLOW}I am the offline demo agent and cannot answer that.{RESET}\n\
         Your task was: \"{task}\"\n\
         I understand three requests, each through one of agent-loop's tools:\n\
         \x20 list the files here   lists the working directory (the ls tool)\n\
         \x20 read FILE             shows a file, for example: read README.md (the read tool)\n\
         \x20 run COMMAND           runs a shell command, for example: run echo hello (the bash\n\
         \x20                       tool; it asks first unless you pass --yes)\n\
         For real answers, use a real backend: `agent-loop backends` lists them.\n"
    )
}

/// Where `key` starts in `lower` at the start of a word (`run ` but not `rerun `).
fn phrase(lower: &str, key: &str) -> Option<usize> {
    lower
        .match_indices(key)
        .map(|(at, _)| at)
        .find(|&at| at == 0 || lower[..at].ends_with(|c: char| !c.is_alphanumeric()))
}

/// The word after `key` in the task (`read Cargo.toml` gives `Cargo.toml`).
fn word_after<'a>(task: &'a str, lower: &str, key: &str) -> Option<&'a str> {
    let start = phrase(lower, key)? + key.len();
    task[start..]
        .split_whitespace()
        .next()
        .map(|w| w.trim_matches(['`', '"', '\'']))
}

/// The status and body of the last `<tool_result>` block in the exchange.
fn last_tool_result(exchange: &str) -> Option<(&str, &str)> {
    let start = exchange.rfind("<tool_result ")?;
    let block = &exchange[start..];
    let header_end = block.find(">\n")?;
    let header = &block[..header_end];
    let status = header
        .split("status=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or("ok");
    let body = &block[header_end + 2..];
    let body = body
        .rfind("\n</tool_result>")
        .map_or(body, |end| &body[..end]);
    Some((status, body))
}
