//! Terminal-agent entries of `backends.toml` (`type = "pty"`): an interactive agent driven
//! through a pseudo-terminal, whose screen is read back (see `backend::pty`). Everything that
//! differs between TUIs is here as data: the size and `TERM` of the terminal, the patterns
//! that say when the agent is ready, busy, done or asking for approval, the chrome to leave
//! out of an answer, and the keys to submit, approve, deny and quit.

use std::time::Duration;

use crate::parse::Pattern;

use super::keys::located_pattern;
use super::launch::{Kind, Launch};
use super::raw::RawBackend;
use super::source::Located;
use super::ConfigError;

/// The `type` value of these entries.
pub const PTY_TYPE: &str = "pty";

const DEFAULT_ROWS: u16 = 40;
const DEFAULT_COLS: u16 = 120;
const DEFAULT_TERM: &str = "xterm-256color";
const DEFAULT_IDLE_MS: u64 = 1500;
const DEFAULT_SUBMIT: &str = "\r";
const DEFAULT_APPROVE_KEYS: &str = "y";
const DEFAULT_DENY_KEYS: &str = "n";
/// Ctrl-D: end of input, which most REPLs take as "quit".
const CTRL_D: &str = "\u{4}";

/// A fully resolved terminal agent.
#[derive(Debug, Clone)]
pub struct PtyDef {
    /// How it starts.
    pub launch: Launch,
    pub rows: u16,
    pub cols: u16,
    pub term: String,
    /// The screen shows the agent is ready for a message; without it, `idle` of quiet.
    pub ready: Option<Pattern>,
    /// The screen shows a new agent has finished starting: with it, a new agent is ready
    /// when this and `ready` match, without also waiting for `idle` of quiet.
    pub start: Option<Pattern>,
    /// Quiet this long means ready, or done when no `busy` pattern is visible, or (with the
    /// message still in the input box) not accepted.
    pub idle: Duration,
    pub submit: String,
    /// Waited between the message showing and the submit key: a TUI that takes an Enter
    /// right after a paste as a newline (gemini, for 40 ms) needs it.
    pub submit_delay: Duration,
    /// Type the message between bracketed-paste markers when the agent turned the mode on.
    pub bracketed_paste: bool,
    /// The answer is complete: searched in what is new since the message.
    pub done: Option<Pattern>,
    /// The turn is over when the input box is back: `ready` matches again, `busy` and
    /// `approval` do not, and there is an answer (or a tool call was denied).
    pub done_when_ready: bool,
    /// A row where the model's text starts (`✦ `): with it, the answer is only these rows
    /// and the rows indented under them; tool rows, dialogs and notices are progress.
    pub answer: Option<Pattern>,
    /// The agent shows that it updated itself, or offers to: `doctor` warns.
    pub update: Option<Pattern>,
    /// The agent is still working (a spinner, "esc to cancel"): searched on the screen.
    pub busy: Option<Pattern>,
    /// Lines of chrome left out of answers and progress (input boxes, tips, status bars).
    pub skip_lines: Vec<Pattern>,
    /// The agent's own tool activity, reported as it appears.
    pub tool_activity: Option<Pattern>,
    /// The agent shows an error: the turn fails with the matching line.
    pub error: Option<Pattern>,
    /// The agent asks for approval; groups `tool` and `detail` (or `whole`, when it matched)
    /// name what it asks about; a `cut` group matched says part of it is hidden.
    pub approval: Option<Pattern>,
    /// The agent clips a wrapped detail's rows at its box's edge instead of wrapping them
    /// whole (`approval_clips`): a detail row that reaches the edge may have lost characters.
    pub approval_clips: bool,
    /// An approval question's own row, seen where `approval` does not match: the question is
    /// taller than the screen, its start cut off (`approval_end_regex`).
    pub approval_end: Option<Pattern>,
    pub approve_keys: String,
    pub deny_keys: String,
    /// What keeps the agent asking whatever its own settings allow (`[backends.NAME.guard]`,
    /// without `meta`), passed when agent-loop's approval asks: see `AcpDef::guard`.
    pub guard: Option<super::Guard>,
    /// How it is asked to quit at the end of the session.
    pub exit: PtyExit,
}

/// How a terminal agent is asked to quit when the session ends (or its history no longer
/// matches agent-loop's conversation); SIGTERM, then SIGKILL, follow if it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PtyExit {
    /// These keys are typed (`exit_keys`; Ctrl-D without them).
    Keys(String),
    /// Its process group is sent SIGTERM at once (`exit_by_sigterm`): for an agent that
    /// takes it as a quit, running the same clean-up as its quit command, and sooner.
    Sigterm,
}

impl RawBackend {
    /// The keys set here that only `type = "pty"` backends read.
    pub fn pty_only_keys(&self) -> Vec<&'static str> {
        [
            ("size", self.size.is_some()),
            ("term", self.term.is_some()),
            ("ready_regex", self.ready_regex.is_some()),
            ("start_regex", self.start_regex.is_some()),
            ("idle_ms", self.idle_ms.is_some()),
            ("submit", self.submit.is_some()),
            ("submit_delay_ms", self.submit_delay_ms.is_some()),
            ("bracketed_paste", self.bracketed_paste.is_some()),
            ("done_regex", self.done_regex.is_some()),
            ("done_when_ready", self.done_when_ready.is_some()),
            ("answer_regex", self.answer_regex.is_some()),
            ("update_regex", self.update_regex.is_some()),
            ("busy_regex", self.busy_regex.is_some()),
            ("approval_regex", self.approval_regex.is_some()),
            ("approval_clips", self.approval_clips.is_some()),
            ("approval_end_regex", self.approval_end_regex.is_some()),
            ("approve_keys", self.approve_keys.is_some()),
            ("deny_keys", self.deny_keys.is_some()),
            ("exit_keys", self.exit_keys.is_some()),
            ("exit_by_sigterm", self.exit_by_sigterm.is_some()),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| k)
        .collect()
    }

    /// The keys set here that a `type = "pty"` backend does not read (those of single-task
    /// CLIs and of HTTP APIs).
    fn keys_pty_ignores(&self) -> Vec<&'static str> {
        let mut keys: Vec<&'static str> = [
            ("tool_call_regex", self.tool_call_regex.is_some()),
            ("tool_call_format", self.tool_call_format.is_some()),
            ("tokens_regex", self.tokens_regex.is_some()),
            ("thinking_in_output", self.thinking_in_output.is_some()),
            ("output", self.output.is_some()),
            ("max_output_bytes", self.max_output_bytes.is_some()),
            ("context", self.context.is_some()),
            ("context_format", self.context_format.is_some()),
            ("max_context_tokens", self.max_context_tokens.is_some()),
            (
                "tool_result_max_chars",
                self.tool_result_max_chars.is_some(),
            ),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| k)
        .collect();
        keys.extend(
            self.json_keys()
                .into_iter()
                .filter(|(_, v)| v.is_some())
                .map(|(k, _)| k),
        );
        keys.extend(self.http_only_keys());
        keys
    }
}

/// Checks a `type = "pty"` entry; every mistake names the file, the line, the backend and
/// the key.
pub(super) fn resolve(
    name: &str,
    mut raw: RawBackend,
    defined_at: String,
) -> Result<PtyDef, ConfigError> {
    let bad = |key: &str, why: &str| ConfigError::key(&defined_at, name, key, why);
    if let Some(key) = raw.keys_pty_ignores().first() {
        return Err(bad(
            key,
            "a `type = \"pty\"` backend does not read it (the agent keeps its own \
             conversation, tools and output format)",
        ));
    }
    let kind = Kind {
        agent: "a terminal agent",
        messages: "are typed, not passed as arguments",
    };
    let guard = match raw.guard.take() {
        Some(g) => Some(super::Guard::resolve(g, name, &defined_at, false)?),
        None => None,
    };
    let launch = Launch::resolve(name, &mut raw, defined_at.clone(), kind)?;
    let (rows, cols) = match &raw.size {
        None => (DEFAULT_ROWS, DEFAULT_COLS),
        Some(size) => parse_size(&size.value).ok_or_else(|| {
            ConfigError::key(
                size.at(),
                name,
                "size",
                format!(
                    "`{}` is not COLSxROWS with both from 20 to 1000 (for example \"120x40\")",
                    size.value
                ),
            )
        })?,
    };
    let submit = raw.submit.unwrap_or_else(|| DEFAULT_SUBMIT.into());
    if submit.is_empty() {
        return Err(bad("submit", "must be at least one key"));
    }
    let regex = |value: &Option<Located>, key: &str| -> Result<Option<Pattern>, ConfigError> {
        value.as_ref().map(|v| compile(v, name, key)).transpose()
    };
    if raw.done_when_ready == Some(true) && raw.ready_regex.is_none() {
        return Err(bad(
            "done_when_ready",
            "needs `ready_regex`: the turn is over when the screen shows the agent ready again",
        ));
    }
    let exit = match (raw.exit_by_sigterm, raw.exit_keys.filter(|k| !k.is_empty())) {
        (Some(true), Some(_)) => {
            return Err(bad(
                "exit_keys",
                "is never typed with `exit_by_sigterm = true` (the agent is sent SIGTERM \
                 instead): keep one of the two",
            ))
        }
        (Some(true), None) => PtyExit::Sigterm,
        (_, keys) => PtyExit::Keys(keys.unwrap_or_else(|| CTRL_D.into())),
    };
    let skip_lines = raw
        .skip_lines
        .iter()
        .flatten()
        .map(|v| compile(v, name, "skip_lines"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(PtyDef {
        launch,
        rows,
        cols,
        term: raw.term.unwrap_or_else(|| DEFAULT_TERM.into()),
        ready: regex(&raw.ready_regex, "ready_regex")?,
        start: regex(&raw.start_regex, "start_regex")?,
        idle: Duration::from_millis(raw.idle_ms.unwrap_or(DEFAULT_IDLE_MS).max(10)),
        submit,
        submit_delay: Duration::from_millis(raw.submit_delay_ms.unwrap_or(0)),
        bracketed_paste: raw.bracketed_paste.unwrap_or(true),
        done: regex(&raw.done_regex, "done_regex")?,
        done_when_ready: raw.done_when_ready.unwrap_or(false),
        answer: regex(&raw.answer_regex, "answer_regex")?,
        update: regex(&raw.update_regex, "update_regex")?,
        busy: regex(&raw.busy_regex, "busy_regex")?,
        skip_lines,
        tool_activity: regex(&raw.tool_activity_regex, "tool_activity_regex")?,
        error: regex(&raw.error_regex, "error_regex")?,
        approval: regex(&raw.approval_regex, "approval_regex")?,
        approval_clips: raw.approval_clips.unwrap_or(false),
        approval_end: regex(&raw.approval_end_regex, "approval_end_regex")?,
        approve_keys: raw
            .approve_keys
            .unwrap_or_else(|| DEFAULT_APPROVE_KEYS.into()),
        deny_keys: raw.deny_keys.unwrap_or_else(|| DEFAULT_DENY_KEYS.into()),
        exit,
        guard,
    })
}

impl std::ops::Deref for PtyDef {
    type Target = Launch;
    fn deref(&self) -> &Launch {
        &self.launch
    }
}

impl std::ops::DerefMut for PtyDef {
    fn deref_mut(&mut self) -> &mut Launch {
        &mut self.launch
    }
}

/// `COLSxROWS`, as `stty size` would not say it but people do: `120x40`.
fn parse_size(value: &str) -> Option<(u16, u16)> {
    let (cols, rows) = value.trim().split_once(['x', 'X'])?;
    let cols: u16 = cols.trim().parse().ok()?;
    let rows: u16 = rows.trim().parse().ok()?;
    let ok = |n: u16| (20..=1000).contains(&n);
    (ok(cols) && ok(rows)).then_some((rows, cols))
}

/// A screen pattern: `^` and `$` match at every line of the screen.
fn compile(value: &Located, backend: &str, key: &str) -> Result<Pattern, ConfigError> {
    Ok(located_pattern(value, true, backend, key)?.0)
}

#[cfg(test)]
mod tests {
    use super::super::{Config, Definition, Source};
    use super::*;

    fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_sources(&[Source {
            name: "my.toml".into(),
            text: text.into(),
        }])
    }

    #[test]
    fn defaults_and_settings_are_read() {
        let config = load(
            "[backends.t]\ntype = \"pty\"\ncommand = \"t\"\n\n[backends.u]\ntype = \"pty\"\ncommand = \"u\"\nsize = \"80x24\"\nidle_ms = 300\nsubmit = \"\\n\"\nbracketed_paste = false\ndone_regex = '^DONE$'\nexit_keys = \"/quit\\r\"\ntools = \"own\"\n",
        )
        .unwrap();
        let Definition::Pty(t) = config.backend("t").unwrap() else {
            panic!("t is a pty backend")
        };
        assert_eq!((t.cols, t.rows), (120, 40));
        assert_eq!(t.term, "xterm-256color");
        assert_eq!(t.submit, "\r");
        assert!(t.bracketed_paste && t.done.is_none());
        assert_eq!(t.exit, PtyExit::Keys("\u{4}".into()));
        let Definition::Pty(u) = config.backend("u").unwrap() else {
            panic!("u is a pty backend")
        };
        assert_eq!((u.cols, u.rows), (80, 24));
        assert_eq!(u.idle, Duration::from_millis(300));
        assert_eq!(u.submit, "\n");
        assert!(!u.bracketed_paste);
        assert!(u.done.as_ref().unwrap().is_match("x\nDONE\ny"));
        assert_eq!(u.exit, PtyExit::Keys("/quit\r".into()));
    }

    #[test]
    fn mistakes_name_file_line_backend_and_key() {
        let err = |text: &str| load(text).unwrap_err().to_string();
        let e = err("[backends.t]\ntype = \"pty\"\ncommand = \"t\"\nsize = \"big\"\n");
        assert!(e.starts_with("my.toml:4: backend `t`: key `size`"), "{e}");
        let e = err("[backends.t]\ntype = \"pty\"\ncommand = \"t\"\ndone_regex = \"(x\"\n");
        assert!(
            e.starts_with("my.toml:4: backend `t`: key `done_regex`: invalid regex"),
            "{e}"
        );
        let e = err("[backends.t]\ntype = \"pty\"\ncommand = \"t\"\ntokens_regex = \"x\"\n");
        assert!(e.contains("key `tokens_regex`: a `type = \"pty\"`"), "{e}");
        let e = err("[backends.t]\ntype = \"pty\"\ncommand = \"t\"\nargs = [\"{prompt}\"]\n");
        assert!(e.contains("key `args`"), "{e}");
        let e = err("[backends.t]\ntype = \"pty\"\ncommand = \"t\"\ntools = \"loop\"\n");
        assert!(e.starts_with("my.toml:4: backend `t`: key `tools`"), "{e}");
        let e = err("[backends.t]\ncommand = \"t\"\nready_regex = \"x\"\n");
        assert!(
            e.contains("key `ready_regex`: only `type = \"pty\"` backends read it"),
            "{e}"
        );
        let e = err("[backends.t]\ntype = \"pty\"\n");
        assert!(e.contains("has no `command`"), "{e}");
        let e = err("[backends.t]\ntype = \"pty\"\ncommand = \"t\"\ndone_when_ready = true\n");
        assert!(
            e.contains("backend `t`: key `done_when_ready`: needs `ready_regex`"),
            "{e}"
        );
        let e = err("[backends.t]\ntype = \"pty\"\ncommand = \"t\"\nexit_by_sigterm = true\nexit_keys = \"q\"\n");
        assert!(
            e.contains("backend `t`: key `exit_keys`: is never typed with `exit_by_sigterm"),
            "{e}"
        );
    }

    #[test]
    fn an_agent_can_be_asked_to_quit_with_sigterm() {
        let config =
            load("[backends.t]\ntype = \"pty\"\ncommand = \"t\"\nexit_by_sigterm = true\n")
                .unwrap();
        let Definition::Pty(t) = config.backend("t").unwrap() else {
            panic!("t is a pty backend")
        };
        assert_eq!(t.exit, PtyExit::Sigterm);
    }
}
