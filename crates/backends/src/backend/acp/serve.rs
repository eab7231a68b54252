//! What an ACP agent asks of agent-loop during a turn, answered: permission questions go
//! through agent-loop's approval (the terminal prompt, Telegram's buttons, `--yes`,
//! `--allow`, refusal in a pipe), and file reads and writes through agent-loop's own file
//! access (`--root` confinement without escape through links, atomic writes that keep owner
//! and mode). A write is agent-loop's approval's to allow, whatever the agent decided on its
//! own: it asks as the write tool's do, unless the user answered yes in the turn to a
//! question of the agent's to change that file.
//! Commands (`terminal/...`) are in `terminal`. A refusal goes back as the JSON-RPC error,
//! with the reason as its message.

use std::io::Read;

use agent_client_protocol as acp;
use serde_json::{json, Value};

use super::terminal::Terminals;
use super::update::paths;
use crate::backend::Host;
use crate::context::ToolCall;
use crate::event::{ApprovalRequest, Decision, Event};
use crate::tools::{open_read, replace, Change, FileError, Opened, ToolContext};

/// The most of a file the agent is sent in one read: within the cap on one message.
const READ_CAP: u64 = 8 * 1024 * 1024;

/// Why a file request of the agent is refused: the JSON-RPC error's message.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    /// The request lacks this parameter.
    #[error("no `{0}` given")]
    Missing(&'static str),
    #[error("{0}")]
    File(#[from] FileError),
    #[error("{shown} is larger than {READ_CAP} bytes")]
    TooLarge { shown: String },
    #[error("{shown} is not UTF-8 text")]
    NotText { shown: String },
    /// The user answered no to the write: their reason.
    #[error("not written: {0}")]
    Denied(String),
}

/// The files the user allowed the agent to change in this turn, by answering yes to its
/// questions of a changing kind that named them (as approval rules see a path,
/// `ToolContext::rule_path`; see [`grant`]): its writes of them ask nothing more.
#[derive(Default)]
pub struct Granted(Vec<String>);

/// Answers one request of the agent; `Err` is the JSON-RPC error to send back.
pub async fn answer(
    backend: &str,
    method: &str,
    params: &Value,
    host: &mut dyn Host,
    terminals: &mut Terminals,
    granted: &mut Granted,
) -> Result<Value, acp::Error> {
    if method == "session/request_permission" {
        return Ok(permission(params, host, granted).await);
    }
    let refused = |why: &str| acp::Error::new(-32000, why.to_string());
    let Some(ctx) = host.tool_context() else {
        return Err(refused(&format!(
            "{method}: agent-loop serves files and commands only in a session"
        )));
    };
    match method {
        "fs/read_text_file" => logged(backend, "read", params, host, read(params, &ctx), None),
        "fs/write_text_file" => {
            let (written, asked) = match write_allowed(params, &ctx, host, granted).await {
                Ok(()) => (write(params, &ctx), None),
                Err((asked, why)) => (Err(why), Some(asked)),
            };
            logged(backend, "write", params, host, written, asked)
        }
        m if m.starts_with("terminal/") => terminals.answer(m, params, &ctx, host).await,
        _ => Err(acp::Error::method_not_found().data(json!({ "method": method }))),
    }
}

/// Reports a file access in the events (and so the log), and its outcome: a write refused by
/// its question under the question's id (`asked`), so a front end knows it for the refusal
/// it has shown, not for a write that failed.
fn logged(
    backend: &str,
    tool: &str,
    params: &Value,
    host: &mut dyn Host,
    result: Result<Value, Refusal>,
    asked: Option<String>,
) -> Result<Value, acp::Error> {
    let path = params["path"].as_str().unwrap_or("").to_string();
    let id = asked.unwrap_or_else(|| format!("{backend}-{tool}-{}", uniq()));
    host.event(Event::ToolCall {
        call: ToolCall {
            id: id.clone(),
            name: tool.into(),
            args: json!({ "path": path }),
        },
        summary: format!("{path} (for {backend})"),
    });
    let output = match &result {
        Ok(v) if tool == "read" => format!("{} bytes", v["content"].as_str().map_or(0, str::len)),
        Ok(_) => format!(
            "{} bytes written",
            params["content"].as_str().map_or(0, str::len)
        ),
        Err(e) => e.to_string(),
    };
    host.event(Event::ToolResult {
        call_id: id,
        tool: tool.into(),
        ok: result.is_ok(),
        output,
        exit_code: None,
    });
    result.map_err(|why| acp::Error::new(-32000, why.to_string()))
}

fn uniq() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed) + 1
}

/// `fs/read_text_file`: the file (from `line`, 1-based, for `limit` lines).
fn read(params: &Value, ctx: &ToolContext) -> Result<Value, Refusal> {
    let shown = params["path"].as_str().ok_or(Refusal::Missing("path"))?;
    let resolved = ctx.checked_path(shown)?;
    // A file that does not exist reads as empty, as in Zed (the reference client, whose
    // buffers open empty): agents read a file before they create it (gemini fails its write
    // on any error here, the SDK's errors reaching it as plain objects).
    if std::fs::symlink_metadata(&resolved).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        return Ok(json!({ "content": "" }));
    }
    let Opened::File(file) = open_read(ctx.root.dir(), &resolved, shown, false)? else {
        let shown = shown.to_string();
        return Err(FileError::Folder { shown }.into());
    };
    let mut bytes = Vec::new();
    file.take(READ_CAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::Io {
            verb: "read",
            shown: shown.to_string(),
            source,
        })?;
    let shown = shown.to_string();
    if bytes.len() as u64 > READ_CAP {
        return Err(Refusal::TooLarge { shown });
    }
    let text = String::from_utf8(bytes).map_err(|_| Refusal::NotText { shown })?;
    let start = params["line"].as_u64().map_or(0, |l| l.saturating_sub(1)) as usize;
    let content = match (start, params["limit"].as_u64()) {
        (0, None) => text,
        (start, limit) => {
            let lines = text.split_inclusive('\n').skip(start);
            match limit {
                Some(n) => lines.take(n as usize).collect(),
                None => lines.collect(),
            }
        }
    };
    Ok(json!({ "content": content }))
}

/// A write asks first, as the write tool's do (`--yes` and `--allow 'write:GLOB'` apply),
/// unless the user allowed the agent to change that file in this turn: an agent's own
/// settings can let it write without asking anyone. A write into `.git/` (hooks, config:
/// code git runs) asks in any case, unless a rule names `.git`; `Err` is the question's id
/// and the refusal.
async fn write_allowed(
    params: &Value,
    ctx: &ToolContext,
    host: &mut dyn Host,
    granted: &Granted,
) -> Result<(), (String, Refusal)> {
    let target = ctx.rule_path(params["path"].as_str().unwrap_or(""));
    let into_git = std::path::Path::new(&target)
        .components()
        .any(|c| c.as_os_str() == ".git");
    // A path the root refuses is refused by the write, with the reason: nothing to ask.
    if target.is_empty() || (!into_git && granted.0.contains(&target)) {
        return Ok(());
    }
    let why = match into_git {
        true => "the agent writes into .git/",
        false => "the agent writes it; none of its questions to change the file was answered yes",
    };
    let request = ApprovalRequest {
        call: ToolCall {
            id: format!("write-{}", uniq()),
            name: "write".into(),
            args: json!({ "path": target, "command": target, "paths": [target] }),
        },
        summary: format!("{target} ({why})"),
        change: params["content"]
            .as_str()
            .map(|content| Change::Write(content.to_string())),
    };
    match host.approve(&request).await {
        Decision::Deny(why) => Err((request.call.id, Refusal::Denied(why))),
        _ => Ok(()),
    }
}

/// `fs/write_text_file`: the whole file replaced, atomically.
fn write(params: &Value, ctx: &ToolContext) -> Result<Value, Refusal> {
    let shown = params["path"].as_str().ok_or(Refusal::Missing("path"))?;
    let content = params["content"]
        .as_str()
        .ok_or(Refusal::Missing("content"))?;
    let resolved = ctx.checked_path(shown)?;
    replace(ctx.root.dir(), &resolved, shown, content.as_bytes())?;
    Ok(json!({}))
}

/// `session/request_permission`: the whole tool call is shown, the answer mapped to the
/// agent's own option of the matching kind.
async fn permission(params: &Value, host: &mut dyn Host, granted: &mut Granted) -> Value {
    let call = &params["toolCall"];
    let title = call["title"].as_str().unwrap_or("a tool call");
    let kind = kind_of(call);
    let paths = paths(call);
    // Whole: what is allowed runs as the agent says, and its end may be what matters. The
    // front ends fold a long question until it is viewed.
    let input = match &call["rawInput"] {
        Value::Null => String::new(),
        v => v.to_string(),
    };
    // What `--allow KIND:GLOB` rules match: the title, then every file it touches.
    let subject = std::iter::once(title.to_string())
        .chain(paths.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut lines = vec![format!("{title} [{kind}]")];
    lines.extend(paths.iter().map(|path| format!("  file: {path}")));
    if !input.is_empty() {
        lines.push(format!("  input: {input}"));
    }
    let what = asks(kind, &paths, host.tool_context().as_ref());
    let request = ApprovalRequest {
        call: ToolCall {
            id: call["toolCallId"].as_str().unwrap_or("").to_string(),
            name: kind.to_string(),
            args: json!({
                "command": subject,
                "title": title,
                "locations": paths,
                "input": call["rawInput"],
            }),
        },
        summary: lines.join("\n"),
        change: Some(Change::Asked { what, lines }),
    };
    // The agent's "always" options are not chosen where a "once" is offered: agents keep
    // them beyond the session (in their settings, or as a mode: Claude Code's plan exit), so
    // they would widen later runs. agent-loop's own approval remembers an "always" for the
    // session, and answers the agent's next question by it.
    let judged_by_rule = host.allows(&request);
    let wanted: &[&str] = match host.approve(&request).await {
        Decision::Once | Decision::Always => {
            grant(kind, &paths, judged_by_rule, host, granted);
            &["allow_once", "allow_always"]
        }
        Decision::Deny(_) => &["reject_once", "reject_always"],
    };
    let options = params["options"].as_array().cloned().unwrap_or_default();
    let chosen = wanted.iter().find_map(|kind| {
        options
            .iter()
            .find(|o| o["kind"] == *kind)
            .and_then(|o| o["optionId"].as_str())
    });
    match chosen {
        Some(id) => json!({ "outcome": { "outcome": "selected", "optionId": id } }),
        None => json!({ "outcome": { "outcome": "cancelled" } }),
    }
}

/// The kind a question is answered as: the agent's, but a question whose input holds a
/// command, of a kind that changes no file it names (`read`, `search`, `other`...), is a
/// command's (`execute`): the agent picks the kind, and an "always" for reads must not allow
/// a command it calls one. An edit's input may name a `command` of its own (`str_replace`).
fn kind_of(call: &Value) -> &str {
    let kind = call["kind"].as_str().unwrap_or("other");
    // A command line or an argv (codex's shape), under either name agents give it.
    let input = &call["rawInput"];
    let command = ["command", "cmd"]
        .iter()
        .any(|key| input[key].is_string() || input[key].is_array());
    match kind {
        "execute" => kind,
        _ if CHANGES.contains(&kind) => kind,
        _ if command => "execute",
        _ => kind,
    }
}

/// What a permission question of `kind` naming `paths` asks to do, as the approval question
/// says it: `edit made.txt` (the path as rules see it), `run` for a command, `use a tool`
/// for a kind that says nothing.
fn asks(kind: &str, paths: &[String], ctx: Option<&ToolContext>) -> String {
    let verb = match kind {
        "execute" => return "run".into(),
        "read" | "edit" | "delete" | "move" | "search" | "fetch" => kind,
        _ => "use a tool on",
    };
    // Outside the root (no rule path), where it points: `..` taken out, not as the agent
    // wrote it (`/w/../../etc/passwd`).
    let shown = |path: &String| {
        let rule = ctx.map(|ctx| ctx.rule_path(path)).unwrap_or_default();
        if rule.is_empty() {
            lexical(path)
        } else {
            rule
        }
    };
    match paths {
        [] if verb == "use a tool on" => "use a tool".into(),
        [] => verb.into(),
        [one] => format!("{verb} {}", shown(one)),
        many => format!("{verb} {} files", many.len()),
    }
}

/// `path` with `.` and `..` taken out by their names alone (the file need not be there).
fn lexical(path: &str) -> String {
    use std::path::{Component, PathBuf};
    let mut out = PathBuf::new();
    for part in std::path::Path::new(path).components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            Component::ParentDir if out.has_root() => {}
            other => out.push(other),
        }
    }
    out.to_string_lossy().into_owned()
}

/// The question's kinds that change the files it names: a yes to another kind (`read`,
/// `other`, which the agent picks) allows no write.
const CHANGES: [&str; 3] = ["edit", "delete", "move"];

/// After a yes to a question of `kind` naming `paths`: the files its writes may change
/// without asking again. The user who answered saw every path; a rule or an "always" that
/// answered judged the title and the paths together (a glob matching one of them), so then
/// each path is granted only if the rule allows a question naming it alone.
fn grant(
    kind: &str,
    paths: &[String],
    judged_by_rule: bool,
    host: &mut dyn Host,
    granted: &mut Granted,
) {
    let Some(ctx) = host.tool_context() else {
        return;
    };
    if !CHANGES.contains(&kind) {
        return;
    }
    for path in paths {
        let target = ctx.rule_path(path);
        let alone = ApprovalRequest {
            call: ToolCall {
                id: String::new(),
                name: kind.to_string(),
                args: json!({ "command": target, "paths": [target] }),
            },
            summary: target.clone(),
            change: None,
        };
        if !target.is_empty() && (!judged_by_rule || host.allows(&alone)) {
            granted.0.push(target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_shown_without_its_dots() {
        assert_eq!(lexical("/w/../../etc/passwd"), "/etc/passwd");
        assert_eq!(lexical("/w/./a/../b"), "/w/b");
        assert_eq!(lexical("a/../../x"), "../x");
        assert_eq!(lexical("../../x"), "../../x");
    }

    #[test]
    fn a_command_is_a_command_whatever_kind_it_is_given() {
        let kind = |call: Value| kind_of(&call).to_string();
        assert_eq!(
            kind(json!({"kind": "read", "rawInput": {"command": "rm x"}})),
            "execute"
        );
        assert_eq!(kind(json!({"rawInput": {"command": "rm x"}})), "execute");
        let argv = json!({"kind": "fetch", "rawInput": {"command": ["sh", "-c", "x"]}});
        assert_eq!(kind(argv), "execute");
        assert_eq!(
            kind(json!({"kind": "other", "rawInput": {"cmd": "rm x"}})),
            "execute"
        );
        assert_eq!(
            kind(json!({"kind": "read", "rawInput": {"path": "a"}})),
            "read"
        );
        assert_eq!(
            kind(json!({"kind": "edit", "rawInput": {"command": "str_replace"}})),
            "edit"
        );
    }
}
