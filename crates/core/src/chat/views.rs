//! What the read-only commands show of a chat (`/status`, `/tokens`, `/context`, `/history`,
//! `/tools`, `/system`, `/export`), as text every front end shows as it is.

use std::fmt::Write as _;

use crate::agent::ApprovalMode;
use crate::context::{Message, SystemMode};
use crate::Error;

use super::{Chat, ChatError};
use crate::parse::{ByBackend, Totals};

/// What a front end shows as the chat's state (`/status`, `/tokens`).
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub session: String,
    /// The session's random id (`session_id` in logs).
    pub id: String,
    pub backend: String,
    pub model: Option<String>,
    pub turns: u32,
    pub messages: usize,
    pub totals: Totals,
    /// The same totals by backend, for the calls made since sessions kept them apart.
    pub by_backend: ByBackend,
    /// When the session was last saved (Unix milliseconds).
    pub updated: u64,
    /// Whether the session is in the store: saving, and saved once (a session whose only
    /// message was refused never was).
    pub saved: bool,
}

impl Chat {
    pub fn status(&self) -> Status {
        Status {
            session: self.session.name.clone(),
            id: self.session.id.clone(),
            backend: self.def.name().to_string(),
            model: self.model(),
            turns: self.agent.turns(),
            messages: self.agent.conversation.messages.len(),
            totals: self.agent.totals,
            by_backend: self.agent.by_backend.clone(),
            updated: self.session.updated,
            saved: self
                .store
                .as_ref()
                .is_some_and(|store| store.has(&self.session.name)),
        }
    }

    /// `answer` redacted, and when longer than `max_chars` characters its head and tail with
    /// a note where it is saved whole: the session's artifacts, as a long tool result is
    /// (a front end that hands answers to another program's model, `agent-loop mcp serve`;
    /// the note tells that model to read the file with its own tool).
    pub fn fit_answer(&self, answer: &str, max_chars: usize) -> String {
        let answer = self.redactor.redact(answer);
        let artifacts = self.artifacts();
        let id = format!("answer-{}", self.agent.turns());
        crate::context::truncate::fit_answer(answer, max_chars, |full| {
            Ok(artifacts.save(&id, "answer", full)?)
        })
    }

    /// The slash commands of the backend's agent (an ACP agent's; `//NAME` sends it
    /// `/NAME`): each name and what it does; none when it listed none.
    pub fn agent_commands(&self) -> Vec<(String, String)> {
        self.agent.agent_commands()
    }

    /// `[session NAME: 3 turns, tokens in 1234 / out 56, $0.0123]`, or `[session NAME: no
    /// turn, not saved]` when nothing was sent (the only message refused) nor saved.
    pub fn summary_line(&self) -> String {
        let status = self.status();
        let t = &status.totals;
        let done = match status.turns == 0 && t.input == 0 && t.output == 0 {
            true => "no turn".to_string(),
            false => format!(
                "{}, {}",
                crate::plural::count(status.turns, "turn", "turns"),
                spent(t)
            ),
        };
        let mut line = format!("[session {}: {done}", status.session);
        if !status.saved {
            line.push_str(", not saved");
        }
        line.push(']');
        line
    }

    /// `/tokens`' lines of a session that more than one backend answered: what each spent,
    /// `[backend claude: tokens in 1234 / out 56, $0.0123]`, and what calls made before
    /// sessions kept the split add up to. None when one backend made every call, or when the
    /// session's calls were all made before.
    pub fn backend_lines(&self) -> Vec<String> {
        let status = self.status();
        let mut split = crate::parse::Totals::default();
        for spent in status.by_backend.values() {
            split.merge(spent);
        }
        let t = &status.totals;
        // Told apart by the counts: the costs, summed in another order, may differ in their
        // last bits.
        let earlier = crate::parse::Totals {
            input: t.input.saturating_sub(split.input),
            output: t.output.saturating_sub(split.output),
            cost: 0.0,
            calls: t.calls.saturating_sub(split.calls),
            uncounted: t.uncounted.saturating_sub(split.uncounted),
        };
        let any_earlier = earlier != crate::parse::Totals::default();
        if status.by_backend.is_empty() || (status.by_backend.len() == 1 && !any_earlier) {
            return Vec::new();
        }
        let mut lines: Vec<String> = (status.by_backend.iter())
            .map(|(name, t)| format!("[backend {name}: {}]", spent(t)))
            .collect();
        if any_earlier {
            let earlier = crate::parse::Totals {
                cost: (t.cost - split.cost).max(0.0),
                ..earlier
            };
            lines.push(format!(
                "[earlier calls, not kept by backend: {}]",
                spent(&earlier)
            ));
        }
        lines
    }

    /// `/tokens`: the session's totals, each backend's when more than one answered, and what
    /// the context holds.
    pub fn tokens_text(&self) -> String {
        let mut lines = vec![self.summary_line()];
        lines.extend(self.backend_lines());
        lines.push(self.context_line());
        lines.join("\n")
    }

    /// `[context continue: 12 messages, 3.4k tokens, 4% of 80k; tokens exact, o200k_base]`.
    pub fn context_line(&self) -> String {
        let mode = self.agent.context_settings().mode;
        let method = self.agent.token_method();
        match self.agent.context_stats() {
            Ok(stats) => format!("[context {mode}: {stats}; tokens {method}]"),
            Err(e) => format!("[context {mode}: {e}; tokens {method}]"),
        }
    }

    /// `/system`: what the current backend is sent as instructions, and where yours came
    /// from.
    pub fn system_text(&self) -> String {
        let (agent, def) = (&self.agent, &self.def);
        let cwd = &agent.options().cwd;
        let memory = crate::context::memory::load(cwd).ok().flatten();
        let system = agent.system_prompt();
        let skills = agent.skills().and_then(|library| {
            let messages = &agent.conversation.messages;
            crate::context::skills::section(library, messages, messages)
        });
        let text = crate::backend::effective_system_prompt(
            def,
            (system, skills.as_deref()),
            memory.as_ref(),
            agent.tools().specs(),
            cwd,
        );
        let yours = system.map_or("none".to_string(), |s| {
            let mode = match s.mode {
                SystemMode::Append => "append",
                SystemMode::Replace => "replace",
            };
            format!("{}, {mode}", s.source)
        });
        format!(
            "[system prompt of backend {}; yours: {yours}]\n{text}",
            def.name()
        )
    }

    /// The conversation's messages, for a front end that shows or replays them (the REPL's
    /// history view, an editor's `session/load`).
    pub fn messages(&self) -> &[Message] {
        &self.agent.conversation.messages
    }

    /// The name of the backend the chat runs on.
    pub fn backend_name(&self) -> &str {
        self.def.name()
    }

    /// Every configured backend's name (a front end completes them).
    pub fn backend_names(&self) -> Vec<String> {
        self.config.names().map(str::to_string).collect()
    }

    /// The backends files read, in order (`--debug` shows them).
    pub fn config_sources(&self) -> &[String] {
        &self.config.sources
    }

    /// The tools of this chat, each with what it declares of itself (kind, path parameter,
    /// whether it changes things), for a front end that shows calls by kind.
    pub fn tool_specs(&self) -> &[crate::tools::ToolSpec] {
        self.agent.tools().specs()
    }

    /// `/tools`: each tool, whether it asks first, and the first sentence of what it does.
    pub fn tools_text(&self) -> String {
        let mut out = String::new();
        for spec in self.agent.tools().specs() {
            let asks = match self.base_mode() {
                ApprovalMode::Never => "runs without asking",
                ApprovalMode::AlwaysAsk => "asks first",
                ApprovalMode::OnWrite if spec.mutating => "asks first",
                ApprovalMode::OnWrite => "runs without asking",
            };
            let what = spec.description.split(". ").next().unwrap_or("");
            let _ = writeln!(out, "  {:<6} {asks:<19} {what}", spec.name);
        }
        out.trim_end().to_string()
    }

    /// `/history [N]`: the last N messages (10 by default), one line each.
    pub fn history(&self, arg: &str) -> Result<String, Error> {
        let n: usize = if arg.is_empty() {
            10
        } else {
            arg.parse().map_err(|_| ChatError::HistoryNumber {
                arg: arg.to_string(),
            })?
        };
        let messages = &self.agent.conversation.messages;
        if messages.is_empty() {
            return Ok("[the conversation is empty]".into());
        }
        let mut out = String::new();
        for m in &messages[messages.len().saturating_sub(n)..] {
            let line = match m {
                Message::User { text, images } => {
                    let mut line = format!("You: {text}");
                    for image in images {
                        line = format!("{line} {}", image.label());
                    }
                    line
                }
                Message::Assistant { text, tool_calls } => {
                    let calls: Vec<&str> = tool_calls.iter().map(|c| c.name.as_str()).collect();
                    if calls.is_empty() {
                        format!("Assistant: {text}")
                    } else {
                        format!("Assistant: {text} [calls {}]", calls.join(", "))
                    }
                }
                Message::ToolResult {
                    name, ok, output, ..
                } => {
                    let first = output.lines().next().unwrap_or("");
                    format!("[{name} {}] {first}", if *ok { "ok" } else { "error" })
                }
            };
            let _ = writeln!(out, "{}", shorten(&line, 200));
        }
        Ok(out.trim_end().to_string())
    }

    /// The conversation as `/export NAME` writes it, by NAME's extension: markdown (`.md`,
    /// `.markdown`) or JSON (`.json`), redacted. A front end that delivers it elsewhere (the
    /// Telegram bot sends it to the chat as a document) takes it from here.
    pub fn export_text(&self, name: &str) -> Result<String, Error> {
        let messages = &self.agent.conversation.messages;
        let text = if name.ends_with(".json") {
            serde_json::to_string_pretty(messages)
                .map_err(|source| ChatError::ExportJson { source })?
        } else if name.ends_with(".md") || name.ends_with(".markdown") {
            self.markdown()
        } else {
            return Err(ChatError::ExportType {
                path: name.to_string(),
            }
            .into());
        };
        Ok(self.redactor.redact(&text))
    }

    /// `/export FILE`: [`Chat::export_text`] written to FILE, a relative one in the chat's
    /// working folder (an editor's session has its own, not agent-loop's). A file that is
    /// there is refused unless `replace` (`/export --force FILE`): Tab completes to existing
    /// files, so one Enter would otherwise lose a README.md. FILE is created exclusively, so
    /// no file is replaced that appeared after a look; a replacement goes to a temporary file
    /// beside it first, then takes its place, so a write that fails leaves the old file whole.
    pub fn export(&self, path: &str, replace: bool) -> Result<String, Error> {
        let messages = &self.agent.conversation.messages;
        let text = self.export_text(path)?;
        let file = self.agent.options().cwd.join(path);
        let failed = |source| ChatError::Export {
            path: path.to_string(),
            source,
        };
        // As `>` in a shell: a folder that is not there is a mistake, not a tree to make.
        let folder = std::path::Path::new(path).parent();
        if let Some(folder) = folder.filter(|f| !f.as_os_str().is_empty()) {
            if !file.parent().is_some_and(std::path::Path::is_dir) {
                let why = format!("no folder {}", folder.display());
                return Err(failed(std::io::Error::other(why)).into());
            }
        }
        let written = match replace {
            true => crate::tools::write_atomic(&file, text.as_bytes()),
            false => crate::tools::write_new(&file, text.as_bytes()),
        };
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && !replace => {
                return Err(ChatError::ExportExists {
                    path: path.to_string(),
                }
                .into());
            }
            written => written.map_err(failed)?,
        }
        Ok(format!(
            "[wrote {} to {path}]",
            crate::plural::count(messages.len(), "message", "messages")
        ))
    }

    fn markdown(&self) -> String {
        let mut out = format!("# Session {}\n", self.session.name);
        for m in &self.agent.conversation.messages {
            match m {
                Message::User { text, images } => {
                    let _ = write!(out, "\n## User\n\n{text}\n");
                    for image in images {
                        let _ = writeln!(out, "\n{}", image.label());
                    }
                }
                Message::Assistant { text, tool_calls } => {
                    let _ = write!(out, "\n## Assistant\n\n{text}\n");
                    for c in tool_calls {
                        let args = c.args.to_string();
                        let _ = write!(
                            out,
                            "\n**Tool call** `{}`\n\n{}",
                            c.name,
                            fenced("json", &args)
                        );
                    }
                }
                Message::ToolResult {
                    name, ok, output, ..
                } => {
                    let status = if *ok { "ok" } else { "error" };
                    let _ = write!(
                        out,
                        "\n**Tool result** `{name}` ({status})\n\n{}",
                        fenced("", output)
                    );
                }
            }
        }
        out
    }
}

/// `tokens in 1234 / out 56, $0.0123`, with the calls that reported no count said apart: the
/// others' counts are not zero, they are unknown (`(1 backend call not counted)`).
pub(super) fn spent(t: &crate::parse::Totals) -> String {
    let mut text = crate::plural::tokens(Some(t.input), Some(t.output));
    if t.uncounted > 0 && (t.input > 0 || t.output > 0) {
        let calls = crate::plural::count(t.uncounted, "backend call", "backend calls");
        let _ = write!(text, " ({calls} not counted)");
    }
    if t.cost > 0.0 {
        let _ = write!(text, ", ${:.4}", t.cost);
    }
    text
}

/// `body` in a fenced code block whose fence is longer than any run of backticks in it, so no
/// line of a tool's output closes it early (CommonMark).
fn fenced(info: &str, body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{body}\n{fence}\n")
}

/// `text` cut to at most `max` characters, at a word boundary, with `...` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(3)).collect();
    // Back to the last space, unless that loses most of the line (one very long word).
    let cut = match head.rfind(char::is_whitespace) {
        Some(at) if at > head.len() / 2 => &head[..at],
        _ => &head,
    };
    format!("{}...", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_any_backticks_inside() {
        assert_eq!(fenced("", "plain"), "```\nplain\n```\n");
        assert_eq!(
            fenced("", "```\n## Fake Heading\n````"),
            "`````\n```\n## Fake Heading\n````\n`````\n"
        );
    }

    #[test]
    fn history_lines_are_cut_at_a_word_with_an_ellipsis() {
        let line = format!("You: {}", "word ".repeat(60));
        let short = shorten(&line, 200);
        assert!(short.ends_with("word..."), "{short}");
        assert!(short.chars().count() <= 200, "{short}");
        assert_eq!(shorten("short line", 200), "short line");
        // One long word is cut inside it rather than lost.
        let long = "x".repeat(300);
        assert_eq!(shorten(&long, 10), "xxxxxxx...");
    }
}
