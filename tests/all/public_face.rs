//! The library's public face is a list kept on purpose: every `pub use` and `pub mod` of
//! src/lib.rs, and of the façade's module it exports whole, is written out here, so adding or
//! removing one fails until this list is updated with it (a widening is a decision, not an
//! accident). And the front ends (the binary: src/main.rs, src/cli/; the examples) compile
//! against that face alone: they name no workspace crate but `agent_loop`, though the package
//! depends on all of them (tests and benches may, to check a layer's parts).

use crate::source_files::{root, rust_files};

/// Every export of src/lib.rs, as `MODULE: pub use PATH;` (`crate` for the root), its
/// whitespace normalised.
const FACE: &[&str] = &[
    "crate: pub use agent_loop_protocol::{event, jsonl, BoxFuture, Error, ErrorKind, UnknownValue};",
    "crate: pub mod chat",
    "chat: pub use agent_loop_context::image::MAX_IMAGE_BYTES;",
    "chat: pub use agent_loop_context::{Image, Message, Prompt, ToolCall};",
    // The façade itself: the chat module of agent-loop-core, whole.
    "chat: pub use agent_loop_core::chat::*;",
    "chat: pub use agent_loop_core::session::{Listing, Session, SessionError, Summary};",
    "crate: pub mod settings",
    "settings: pub use agent_loop_config::bool_setting::Flag;",
    "settings: pub use agent_loop_config::settings::{by_flag, table, whole_number, FrontEndKeys, Key, Layers, List, NotWhole, Origin, Setting, Shown, Whole};",
    "settings: pub use agent_loop_config::user_settings_path;",
    "settings: pub use agent_loop_context::{ContextMode, CountTokens};",
    "settings: pub use agent_loop_core::agent::{AllowRule, ApprovalMode};",
    "crate: pub mod editor",
    "editor: pub use agent_loop_config::mcp::{Credentials, ServerDef, Transport};",
    "editor: pub use agent_loop_tools::command::{timed_out, OUTPUT_CAP};",
    "editor: pub use agent_loop_tools::{Editor, EditorError, Files, Terminal, ToolKind, ToolOutput};",
    "crate: pub mod text",
    "text: pub use agent_loop_backends::sanitize::sanitize;",
    "text: pub use agent_loop_config::closest;",
    "text: pub use agent_loop_core::session::format_time;",
    "text: pub use agent_loop_parse::strip_ansi;",
    "text: pub use agent_loop_protocol::redact::Redactor;",
    "text: pub use agent_loop_protocol::{plural, shown};",
    "text: pub use agent_loop_tools::Throttle;",
    "crate: pub mod process",
    "process: pub use agent_loop_backends::backend::this_program_serves_demo_agent;",
    "process: pub use agent_loop_config::dirs::xdg_home;",
    "process: pub use agent_loop_tools::process::{capped, isolate, oversize, watchdog, GroupGuard};",
    "process: pub use agent_loop_tools::{private, tls};",
    "crate: pub mod import",
    "import: pub use agent_loop_import::{import, write};",
];

/// The façade's own exports, which `chat` takes whole (crates/core/src/chat/mod.rs): listed
/// too, so that the face widens only on purpose there either.
const CHAT: &[&str] = &[
    "crate: pub mod commands",
    "crate: pub use cancel::Canceller;",
    "crate: pub use catalog::{BackendRow, LoadedConfig};",
    "crate: pub use commands::{CommandSpec, FrontEnd, Invocation, Outcome, SlashCommand, COMMANDS};",
    "crate: pub use error::ChatError;",
    "crate: pub use fanout::Kept;",
    "crate: pub use options::{ChatOptions, HttpClients, SessionChoice};",
    "crate: pub use settings::RunSettings;",
    "crate: pub use views::Status;",
    "crate: pub struct Chat",
    // What a failed turn's error ends with: the prompt stays in the conversation.
    "crate: pub fn unsaved_artifacts",
    "crate: pub const PROMPT_STAYS",
];

/// The exports of a crate root written as src/lib.rs is: `pub use` statements at the top and
/// in inline `pub mod NAME { ... }` modules (closed by a `}` at the line's start).
fn exports(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut module = "crate".to_string();
    let mut statement: Option<String> = None;
    for line in source.lines() {
        let trimmed = line.trim();
        if let Some(open) = statement.as_mut() {
            open.push(' ');
            open.push_str(trimmed);
        } else if let Some(name) = trimmed
            .strip_prefix("pub mod ")
            .and_then(|rest| rest.strip_suffix(" {").or(rest.strip_suffix(';')))
        {
            found.push(format!("{module}: pub mod {name}"));
            if trimmed.ends_with('{') {
                module = name.to_string();
            }
            continue;
        } else if trimmed.starts_with("pub use ") {
            statement = Some(trimmed.to_string());
        } else if let Some(item) = declared_item(line, &module) {
            found.push(format!("{module}: {item}"));
            continue;
        } else if line.starts_with('}') {
            module = "crate".to_string();
        }
        if statement.as_ref().is_some_and(|s| s.ends_with(';')) {
            let text = statement.take().unwrap();
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            found.push(format!(
                "{module}: {}",
                text.replace("{ ", "{").replace(", }", "}")
            ));
        }
    }
    found
}

/// An item declared public in the module being read (a `pub fn`, `struct`, `enum`, `const`,
/// `static`, `trait` or `type` at the module's own indentation, not inside an `impl`): its
/// kind and name, as `pub struct Chat`, so an item written in place widens the face as
/// visibly as a re-export does.
fn declared_item(line: &str, module: &str) -> Option<String> {
    let indent = if module == "crate" { "" } else { "    " };
    let rest = line.strip_prefix(indent)?.strip_prefix("pub ")?;
    let rest = rest.strip_prefix("async ").unwrap_or(rest);
    let (kind, rest) = rest.split_once(' ')?;
    if !["fn", "struct", "enum", "const", "static", "trait", "type"].contains(&kind) {
        return None;
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    Some(format!("pub {kind} {name}"))
}

/// The exports of `file` are `listed`, or the failure says what they are and what to update.
fn assert_listed(file: &str, listed: &[&str], also: &str) {
    let source = std::fs::read_to_string(root().join(file)).unwrap();
    let found = exports(&source);
    assert_eq!(
        found,
        listed,
        "{file}'s exports changed: if on purpose, update the list in \
         tests/all/public_face.rs{also}.\nfound:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_library_exports_the_listed_face_only() {
    assert_listed(
        "src/lib.rs",
        FACE,
        " (and docs/library.md, and src/lib.rs's doc)",
    );
}

#[test]
fn the_facade_exports_the_listed_items_only() {
    // All of them are public through `agent_loop::chat`.
    assert_listed("crates/core/src/chat/mod.rs", CHAT, "");
}

#[test]
fn the_export_list_reads_nested_and_wrapped_statements() {
    let source =
        "pub use a::{\n    b,\n    c,\n};\npub mod m {\n    pub use d::e;\n    pub fn g() {}\n}\npub mod f;\npub struct S {\n    pub field: u8,\n}\nimpl S {\n    pub fn method() {}\n}\n";
    assert_eq!(
        exports(source),
        [
            "crate: pub use a::{b, c};",
            "crate: pub mod m",
            "m: pub use d::e;",
            "m: pub fn g",
            "crate: pub mod f",
            "crate: pub struct S"
        ]
    );
}

#[test]
fn front_ends_use_the_face_alone() {
    let mut files = vec![root().join("src/main.rs")];
    rust_files(&root().join("src/cli"), &mut files);
    rust_files(&root().join("examples"), &mut files);
    let mut offending = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("agent_loop_") {
                let shown = file.strip_prefix(root()).unwrap().display();
                offending.push(format!("{shown}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        offending.is_empty(),
        "front ends name a workspace crate under the library's face (use `agent_loop::...`, \
         or make what they need a method of the façade):\n{}",
        offending.join("\n")
    );
}
