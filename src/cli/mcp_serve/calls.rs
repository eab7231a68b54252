//! The calls, run on this thread beside the connection: each `ask` and `reply` opens the
//! session's chat (holding its lock, as a CLI run does), runs one turn, saves and closes it,
//! so the CLI can continue the session between calls. Calls on different sessions run side
//! by side; calls on one session wait their turn in order (its lane), so two turns never
//! interleave in one conversation. A cancel (`notifications/cancelled`) or `--timeout`
//! stops the turn and its process group, keeping what was answered so far. A turn's result
//! is one object (the answer, how the turn ended, the calls refused, the session), given
//! both as the structured content and as its text.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rmcp::model::{CallToolResult, ClientCapabilities, ContentBlock, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use agent_loop::chat::{Chat, SessionChoice};
use agent_loop::event::CutReason;
use agent_loop::settings::by_flag;
use agent_loop::{Error, ErrorKind};

use super::observer::CallObserver;
use super::tools::{Request, Turn};
use super::Shared;

/// A `tools/call`, with what answers it.
pub struct Call {
    pub request: Request,
    pub peer: Peer<RoleServer>,
    /// Cancelled by the client's `notifications/cancelled`, or when the connection ends.
    pub cancelled: CancellationToken,
    pub progress: Option<ProgressToken>,
    /// What the client can do (roots, elicitation): the call's own `_meta` says, else what
    /// it declared in `initialize`.
    pub capabilities: Option<ClientCapabilities>,
    pub answer: oneshot::Sender<CallToolResult>,
}

struct Server {
    shared: Shared,
    /// One lock per session a call is using or waiting for.
    lanes: RefCell<HashMap<String, Rc<tokio::sync::Mutex<()>>>>,
}

/// Runs every call handed over until the connection ends, then waits for those running
/// (the end cancelled them).
pub async fn run(shared: Shared, mut calls: mpsc::UnboundedReceiver<Call>) {
    let server = Rc::new(Server {
        shared,
        lanes: RefCell::default(),
    });
    let mut running = Vec::new();
    while let Some(call) = calls.recv().await {
        running.retain(|task: &tokio::task::JoinHandle<()>| !task.is_finished());
        running.push(tokio::task::spawn_local(handle(server.clone(), call)));
    }
    for task in running {
        let _ = task.await;
    }
}

async fn handle(server: Rc<Server>, call: Call) {
    let Call {
        request,
        peer,
        cancelled,
        progress,
        capabilities,
        answer,
    } = call;
    let result = match request {
        Request::Backends => backends(&server.shared).await,
        Request::Turn(turn) => server
            .turn(turn, &peer, capabilities.as_ref(), &cancelled, progress)
            .await
            .unwrap_or_else(|e| failed(&e)),
    };
    // Lanes no call holds or waits for are forgotten.
    server
        .lanes
        .borrow_mut()
        .retain(|_, lane| Rc::strong_count(lane) > 1);
    let _ = answer.send(result);
}

/// Why a turn was stopped before its end.
#[derive(Clone, Copy)]
enum Stop {
    Cancelled,
    Timeout,
}

impl Server {
    fn lane(&self, session: &str) -> Rc<tokio::sync::Mutex<()>> {
        self.lanes
            .borrow_mut()
            .entry(session.to_string())
            .or_default()
            .clone()
    }

    async fn turn(
        &self,
        turn: Turn,
        peer: &Peer<RoleServer>,
        capabilities: Option<&ClientCapabilities>,
        cancelled: &CancellationToken,
        progress: Option<ProgressToken>,
    ) -> Result<CallToolResult, Error> {
        let shared = &self.shared;
        if let Some(backend) = &turn.backend {
            if !shared.offered.has(backend) {
                return Err(not_offered(backend, shared));
            }
        }
        let exists = Chat::is_saved;
        if let (true, Some(name)) = (turn.reply, &turn.session) {
            if !shared.options.save {
                return Err(Error::config(
                    "sessions are not saved here (agent-loop mcp serve --no-save), so there is \
                     no session to reply in: use ask",
                ));
            }
            // A session whose first call still runs here is not saved yet: the reply waits
            // for it in the session's lane, and is refused after it if it saved nothing.
            if !exists(name) && !self.lanes.borrow().contains_key(name) {
                return Err(no_session(name));
            }
        }
        // Taken now, so that a reply coming while this call waits for roots waits for it.
        let lane = turn.session.as_deref().map(|name| self.lane(name));
        // The client's root is asked for before the session's lane is taken, so a client
        // that never answers holds up only its own call, which a cancel or ROOTS_WAIT ends.
        let root = tokio::select! {
            root = tokio::time::timeout(ROOTS_WAIT, client_root(peer, capabilities)) => root.map_err(|_| {
                Error::config(format!(
                    "the MCP client did not answer roots/list within {} s",
                    ROOTS_WAIT.as_secs()
                ))
            })??,
            () = cancelled.cancelled() => {
                return Err(Error::new(ErrorKind::Cancelled, "cancelled before it started"));
            }
        };
        let root = within_root(root, shared.options.root.as_deref())?;
        let _held = match &lane {
            Some(lane) => tokio::select! {
                held = lane.lock() => Some(held),
                () = cancelled.cancelled() => {
                    return Err(Error::new(ErrorKind::Cancelled, "cancelled before it started"));
                }
            },
            None => None,
        };
        let resumed = turn.session.as_deref().is_some_and(exists);
        if let (true, false, Some(name)) = (turn.reply, resumed, &turn.session) {
            return Err(no_session(name));
        }
        let mut settings = shared.settings.clone();
        let mut options = shared.options.clone();
        options.session = match &turn.session {
            Some(name) => SessionChoice::Named(name.clone()),
            None => SessionChoice::New,
        };
        if let Some(root) = root {
            options.cwd = Some(root.clone());
            options.root = Some(root);
        }
        // A session continued keeps its backend unless the call names one, as
        // `--session NAME` does; a new one starts on the default.
        let backend = match (&turn.backend, resumed) {
            (Some(backend), _) => Some(backend.clone()),
            (None, false) => Some(shared.offered.default.clone()),
            (None, true) => None,
        };
        by_flag(&mut settings.backend, backend, "--backend");
        by_flag(&mut settings.model, turn.model.clone(), "--model");
        let mut chat = Chat::open(&settings, &options, &mut |n| eprintln!("{n}"))?;
        let backend = chat.status().backend;
        if !shared.offered.has(&backend) {
            chat.stop().await;
            return Err(Error::config(format!(
                "session {} runs on {backend}, which this server does not offer: name a \
                 backend ({})",
                chat.session().name,
                shared.offered.names.join(", ")
            )));
        }
        for notice in chat.start_mcp().await {
            eprintln!("{notice}");
        }
        let result = self
            .run_turn(
                &mut chat,
                &turn.prompt,
                peer,
                capabilities,
                cancelled,
                progress,
            )
            .await;
        chat.stop().await;
        result
    }

    /// Runs the turn until it ends, is cancelled or runs out of time.
    async fn run_turn(
        &self,
        chat: &mut Chat,
        prompt: &str,
        peer: &Peer<RoleServer>,
        capabilities: Option<&ClientCapabilities>,
        cancelled: &CancellationToken,
        progress: Option<ProgressToken>,
    ) -> Result<CallToolResult, Error> {
        let shared = &self.shared;
        let elicit = super::approval::can_elicit(capabilities);
        let mut observer = CallObserver::new(peer.clone(), elicit, progress);
        let canceller = chat.canceller();
        let mut stop = None;
        let result = {
            let turn = chat.turn(prompt, &mut observer);
            tokio::pin!(turn);
            let limit = shared.timeout;
            let stopped = async {
                tokio::select! {
                    () = cancelled.cancelled() => Stop::Cancelled,
                    () = async {
                        match limit {
                            Some(limit) => tokio::time::sleep(limit).await,
                            None => std::future::pending().await,
                        }
                    } => Stop::Timeout,
                }
            };
            // The turn is polled first, so it is listening for the cancel before one comes.
            tokio::select! {
                biased;
                result = &mut turn => result,
                why = stopped => {
                    stop = Some(why);
                    match why {
                        Stop::Cancelled => canceller.cancel(),
                        Stop::Timeout => canceller.cancel_because(format!(
                            "stopped after {}s (--timeout)",
                            limit.unwrap_or_default().as_secs()
                        )),
                    }
                    turn.await
                }
            }
        };
        observer.finish().await;
        let secs = shared.timeout.unwrap_or_default().as_secs();
        let (stop_reason, answer, note) = match (result, stop) {
            (_, Some(Stop::Timeout)) => {
                let answered = !observer.so_far.trim().is_empty();
                (
                    "timeout",
                    observer.so_far.clone(),
                    Some(timeout_note(secs, answered)),
                )
            }
            (Err(e), _) if e.kind == ErrorKind::Cancelled => {
                ("cancelled", observer.so_far.clone(), None)
            }
            (Err(e), _) if e.kind == ErrorKind::IterationCap => (
                "max_iterations",
                observer.so_far.clone(),
                Some(e.to_string()),
            ),
            (Err(e), _) => return Err(stays_said(chat, e)),
            (Ok(answer), _) => (
                match observer.cut {
                    Some(CutReason::MaxTokens) => "max_tokens",
                    Some(CutReason::Refusal) => "refusal",
                    None => "end_turn",
                },
                answer,
                None,
            ),
        };
        let status = chat.status();
        let answer = answer.trim_start();
        let whole_chars = chat.redactor().redact(answer).chars().count();
        let answer_cut = whole_chars > shared.max_answer_chars;
        let answer = chat.fit_answer(answer, shared.max_answer_chars);
        let refused: Vec<_> = observer
            .refused
            .iter()
            .map(|r| json!({"tool": r.tool, "call": r.call, "reason": r.reason}))
            .collect();
        let structured = json!({
            "answer": answer,
            "answer_cut": answer_cut,
            "stop_reason": stop_reason,
            "note": note,
            "refused": refused,
            "session": shared.options.save.then_some(status.session),
            "backend": status.backend,
            "model": status.model,
            "tokens": {"input": observer.input, "output": observer.output},
            "cost_usd": observer.cost,
        });
        // The text is the same object serialised, as MCP asks of a tool with an output
        // schema: clients that give their model the structured content (Claude Code, Codex)
        // and those that give it the text (Gemini CLI, Qwen Code, opencode) show the same
        // answer, session and stop reason.
        let mut result = CallToolResult::success(vec![ContentBlock::text(structured.to_string())]);
        result.structured_content = Some(structured);
        Ok(result)
    }
}

/// What `note` says of a turn `--timeout` stopped after `secs` seconds, as it had answered
/// something or not.
fn timeout_note(secs: u64, answered: bool) -> String {
    if answered {
        format!("the turn was stopped after {secs}s (--timeout): `answer` is what it had answered by then")
    } else {
        format!("the turn was stopped after {secs}s (--timeout), before it had answered anything")
    }
}

/// How long the client may take to answer roots/list.
const ROOTS_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The client's root, kept only inside the `--root` the person gave, if any: the client may
/// narrow the confinement, never widen it.
fn within_root(client: Option<PathBuf>, given: Option<&Path>) -> Result<Option<PathBuf>, Error> {
    let (Some(client), Some(given)) = (&client, given) else {
        return Ok(client);
    };
    let inside = match (client.canonicalize(), given.canonicalize()) {
        (Ok(client), Ok(given)) => client.starts_with(given),
        _ => false,
    };
    if inside {
        Ok(Some(client.clone()))
    } else {
        Err(Error::config(format!(
            "the MCP client's root {} is not inside --root {}: refused",
            client.display(),
            given.display()
        )))
    }
}

/// The client's first root (`roots/list`), when its capabilities offer roots: the working
/// directory and the folder the file tools are confined to.
#[allow(deprecated)] // Roots are deprecated in the newest revision, not in today's clients.
async fn client_root(
    peer: &Peer<RoleServer>,
    capabilities: Option<&ClientCapabilities>,
) -> Result<Option<PathBuf>, Error> {
    if capabilities.is_none_or(|c| c.roots.is_none()) {
        return Ok(None);
    }
    let roots = peer
        .list_roots()
        .await
        .map_err(|e| Error::config(format!("the MCP client's roots/list failed: {e}")))?;
    let Some(first) = roots.roots.first() else {
        return Ok(None);
    };
    let path = reqwest::Url::parse(&first.uri)
        .ok()
        .filter(|url| url.scheme() == "file")
        .and_then(|url| url.to_file_path().ok())
        .ok_or_else(|| {
            Error::config(format!(
                "the MCP client's root `{}` is not a file:// URL",
                first.uri
            ))
        })?;
    if !path.is_dir() {
        return Err(Error::config(format!(
            "the MCP client's root {} is not a folder here",
            path.display()
        )));
    }
    Ok(Some(path))
}

/// `backends`: every configured backend, whether it is offered and can run here, and what
/// it is; the default.
async fn backends(shared: &Shared) -> CallToolResult {
    let config = match Chat::load_config(shared.options.config.as_deref()) {
        Ok(config) => config,
        Err(e) => return failed(&e.into()),
    };
    let rows = match crate::cli::backends_cmd::here(&config).await {
        Ok(rows) => rows,
        Err(e) => return failed(&e),
    };
    let mut text = format!("default: {}\n", shared.offered.default);
    let mut list = Vec::new();
    for row in rows {
        let offered = shared.offered.has(&row.name);
        text.push_str(&format!(
            "{} ({}; {}; {}): {}\n",
            row.name,
            row.kind,
            if offered { "offered" } else { "not offered" },
            row.status,
            row.description
        ));
        list.push(json!({
            "name": row.name,
            "type": row.kind,
            "offered": offered,
            "here": row.status,
            "model": row.model,
            "description": row.description,
        }));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({
        "default": shared.offered.default,
        "backends": list,
    }));
    result
}

/// A failed turn's error, whose prompt stays in the session, says so in a client's terms: it
/// has no `/retry` nor `/undo`, and a reply in the session goes after that prompt.
fn stays_said(chat: &Chat, mut e: Error) -> Error {
    if chat.prompt_stays() && chat.is_kept() {
        e.message.push_str(&format!(
            "\n[the prompt stays in session {}, unanswered: a reply in the session goes \
             after it]",
            chat.session().name
        ));
    }
    e
}

fn no_session(name: &str) -> Error {
    Error::config(format!(
        "no saved session named `{name}`: ask starts one (its result names it)"
    ))
}

fn not_offered(backend: &str, shared: &Shared) -> Error {
    Error::config(format!(
        "backend `{backend}` is not offered by this server; the backends offered are {}",
        shared.offered.names.join(", ")
    ))
}

/// A call that failed: the reason, for the calling model to read.
fn failed(error: &Error) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("agent-loop: {error}"))])
}

#[cfg(test)]
mod tests {
    use super::timeout_note;

    #[test]
    fn the_timeout_note_says_whether_anything_was_answered() {
        assert_eq!(
            timeout_note(3, true),
            "the turn was stopped after 3s (--timeout): `answer` is what it had answered by then"
        );
        assert_eq!(
            timeout_note(3, false),
            "the turn was stopped after 3s (--timeout), before it had answered anything"
        );
    }
}
