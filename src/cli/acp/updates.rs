//! A turn's events as ACP `session/update` notifications, and its approvals as
//! `session/request_permission` requests: the observer an ACP session passes to
//! [`agent_loop::chat::Chat::turn`]. Each tool call is announced (`tool_call`, with its kind,
//! title, locations and raw input) before it runs, then finished (`tool_call_update`, with its
//! output, and a diff for a file it wrote or edited). Thinking goes as `agent_thought_chunk`,
//! a plan as `plan`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, PermissionOption, PermissionOptionKind, Plan,
    PlanEntry as AcpPlanEntry, PlanEntryPriority, PlanEntryStatus, RequestPermissionOutcome,
    RequestPermissionRequest, SessionNotification, SessionUpdate, Terminal as TerminalContent,
    TextContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;

use agent_loop::chat::Chat;
use agent_loop::chat::ToolCall as Call;
use agent_loop::editor::ToolKind as Kind;
use agent_loop::event::{ApprovalRequest, CutReason, Decision, Event, Observer, PlanEntry};
use agent_loop::BoxFuture;

use crate::cli::text::call_title;

/// What a session's observers share across turns.
#[derive(Clone)]
pub struct Notifier {
    pub cx: ConnectionTo<Client>,
    pub session: String,
    /// Tools the user rejected for good ("reject always") in this session.
    pub rejected: Arc<Mutex<HashSet<String>>>,
    /// `--debug`: every event as JSON on stderr too.
    pub debug: bool,
    /// The tool call running now (tools run one at a time), and the editor's terminal it
    /// runs in, if any.
    pub running: Arc<Mutex<Running>>,
    /// What the backend calls of the prompt running now reported, for its `_meta.usage`.
    pub usage: Arc<Mutex<TurnUsage>>,
}

/// A prompt's tokens and cost as its backend calls reported them: `None` where none did
/// (the editor is told "unknown", not 0).
#[derive(Debug, Default, Clone, Copy)]
pub struct TurnUsage {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub cost: Option<f64>,
}

impl TurnUsage {
    fn add(&mut self, input: Option<u64>, output: Option<u64>, cost: Option<f64>) {
        let sum = |a: Option<u64>, b: Option<u64>| b.map(|b| a.unwrap_or(0) + b).or(a);
        self.input = sum(self.input, input);
        self.output = sum(self.output, output);
        self.cost = cost.map(|c| self.cost.unwrap_or(0.0) + c).or(self.cost);
    }
}

#[derive(Default)]
pub struct Running {
    call: Option<String>,
    terminal: Option<String>,
}

impl Notifier {
    pub fn send(&self, update: SessionUpdate) {
        // Fails only when the connection is closing; the turn is then cancelled anyway.
        let _ = self
            .cx
            .send_notification(SessionNotification::new(self.session.clone(), update));
    }

    pub fn running_call(&self) -> Option<String> {
        self.running.lock().ok()?.call.clone()
    }

    /// The running call's command runs in the editor's terminal `id`.
    pub fn set_terminal(&self, id: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.terminal = Some(id.to_string());
        }
    }

    fn start(&self, call: &str) {
        if let Ok(mut running) = self.running.lock() {
            *running = Running {
                call: Some(call.to_string()),
                terminal: None,
            };
        }
    }

    /// The terminal the finished call ran in, if any.
    fn finish(&self) -> Option<String> {
        let mut running = self.running.lock().ok()?;
        std::mem::take(&mut *running).terminal
    }

    pub fn message(&self, text: &str) {
        self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            text_block(text),
        )));
    }
}

pub fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

/// What the chat's tools declare of themselves, by name: their kind and the parameter that
/// is a path. A name the chat does not know (an agent's own tool) is shown as one that runs
/// something.
#[derive(Clone, Default)]
pub struct ToolFacts(HashMap<String, Fact>);

/// What is known of one tool: its kind, the parameter naming its file, its main parameter.
#[derive(Clone)]
struct Fact {
    kind: ToolKind,
    path_param: Option<String>,
    main_param: String,
}

impl ToolFacts {
    pub fn of(chat: &Chat) -> ToolFacts {
        let facts = chat.tool_specs().iter().map(|spec| {
            let kind = match spec.kind {
                Kind::Read => ToolKind::Read,
                Kind::Edit => ToolKind::Edit,
                Kind::Execute => ToolKind::Execute,
                Kind::Fetch => ToolKind::Fetch,
                Kind::Search => ToolKind::Search,
                Kind::Other => ToolKind::Other,
            };
            let fact = Fact {
                kind,
                path_param: spec.path_param.clone(),
                main_param: spec.main_param.clone(),
            };
            (spec.name.clone(), fact)
        });
        ToolFacts(facts.collect())
    }

    pub fn kind(&self, tool: &str) -> ToolKind {
        self.0.get(tool).map_or(ToolKind::Execute, |fact| fact.kind)
    }

    /// The file `call` works on, in `cwd`, if its tool names one.
    pub fn path_of(&self, call: &Call, cwd: &Path) -> Option<PathBuf> {
        let param = self.0.get(&call.name)?.path_param.as_deref()?;
        let path = call.args.get(param)?.as_str()?;
        Some(cwd.join(path))
    }

    /// What a call replayed from a saved session is shown as: its main argument, as the
    /// turn that ran it showed it, or all its arguments.
    pub fn shown(&self, call: &Call) -> String {
        let main = self.0.get(&call.name).map(|fact| fact.main_param.as_str());
        match main.and_then(|param| call.args.get(param)?.as_str()) {
            Some(main) => main.to_string(),
            None => call.args.to_string(),
        }
    }
}

/// The largest file an edit's diff is sent for (both its texts go whole in the update).
const DIFF_CAP: u64 = 1024 * 1024;

/// The observer of one turn.
pub struct Updates {
    notifier: Notifier,
    tools: ToolFacts,
    cwd: PathBuf,
    /// Text deltas were sent since the last whole text: the whole text is not sent again.
    streamed: bool,
    /// The files a running write or edit call touches, with what they held before.
    before: HashMap<String, (PathBuf, Option<String>)>,
    own_tools: u32,
    /// The last backend call's answer stopped early: the prompt's stop reason says why.
    pub cut: Option<CutReason>,
}

impl Updates {
    pub fn new(notifier: Notifier, cwd: &Path, tools: ToolFacts) -> Updates {
        Updates {
            notifier,
            tools,
            cwd: cwd.to_path_buf(),
            streamed: false,
            before: HashMap::new(),
            own_tools: 0,
            cut: None,
        }
    }

    fn path_of(&self, call: &Call) -> Option<PathBuf> {
        self.tools.path_of(call, &self.cwd)
    }
}

/// The `tool_call` that announces `call`.
pub fn announce(call: &Call, summary: &str, path: Option<PathBuf>, kind: ToolKind) -> ToolCall {
    ToolCall::new(call.id.clone(), call_title(&call.name, summary))
        .kind(kind)
        .status(ToolCallStatus::Pending)
        .locations(path.map(ToolCallLocation::new).into_iter().collect())
        .raw_input(call.args.clone())
}

/// The terminal in a tool call's content.
pub fn terminal_content(id: &str) -> ToolCallContent {
    ToolCallContent::Terminal(TerminalContent::new(id.to_string()))
}

/// The `tool_call_update` that finishes a call: its output, or the terminal that showed it.
pub fn finished(
    call_id: &str,
    ok: bool,
    output: &str,
    diff: Option<Diff>,
    terminal: Option<String>,
) -> ToolCallUpdate {
    let mut content = match terminal {
        Some(id) => vec![terminal_content(&id)],
        None => vec![ToolCallContent::from(text_block(output))],
    };
    content.extend(diff.map(ToolCallContent::Diff));
    let status = if ok {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    ToolCallUpdate::new(
        call_id.to_string(),
        ToolCallUpdateFields::new().status(status).content(content),
    )
}

impl Observer for Updates {
    fn event(&mut self, event: &Event) {
        if self.notifier.debug {
            eprintln!("{event:?}");
        }
        match event {
            Event::TextDelta { text, .. } => {
                self.streamed = true;
                self.notifier.message(text);
            }
            Event::Text { text, .. } => {
                let streamed = std::mem::take(&mut self.streamed);
                if !streamed && !text.is_empty() {
                    self.notifier.message(text);
                }
            }
            Event::ToolCall { call, summary } => {
                let path = self.path_of(call);
                let kind = self.tools.kind(&call.name);
                // A diff carries both whole texts: past a size it is left out (the result's
                // text still says what was done), or one update would be many megabytes.
                let small = |p: &Path| std::fs::metadata(p).map_or(true, |m| m.len() <= DIFF_CAP);
                if kind == ToolKind::Edit {
                    if let Some(path) = path.as_ref().filter(|p| small(p)) {
                        let old = std::fs::read_to_string(path).ok();
                        self.before.insert(call.id.clone(), (path.clone(), old));
                    }
                }
                self.notifier.start(&call.id);
                self.notifier
                    .send(SessionUpdate::ToolCall(announce(call, summary, path, kind)));
            }
            Event::ToolResult {
                call_id,
                ok,
                output,
                ..
            } => {
                let diff = self.before.remove(call_id).and_then(|(path, old)| {
                    let size = std::fs::metadata(&path).ok()?.len();
                    let new = (size <= DIFF_CAP)
                        .then(|| std::fs::read_to_string(&path).ok())
                        .flatten()?;
                    (*ok).then(|| Diff::new(path, new).old_text(old))
                });
                let terminal = self.notifier.finish();
                self.notifier.send(SessionUpdate::ToolCallUpdate(finished(
                    call_id, *ok, output, diff, terminal,
                )));
            }
            Event::BackendStarted { .. } => self.cut = None,
            Event::Usage { usage, .. } => {
                let mut sum = self
                    .notifier
                    .usage
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                sum.add(usage.input, usage.output, usage.cost);
            }
            Event::CutShort { reason, .. } => self.cut = Some(*reason),
            Event::ThinkingDelta { text, .. } => {
                self.notifier
                    .send(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                        text_block(text),
                    )));
            }
            Event::Plan { entries, .. } => {
                self.notifier.send(SessionUpdate::Plan(plan(entries)));
            }
            Event::OwnTool { activity, .. } => {
                // A tool the agent CLI ran itself: reported, already done.
                self.own_tools += 1;
                let id = format!("own-{}-{}", std::process::id(), self.own_tools);
                self.notifier.send(SessionUpdate::ToolCall(
                    ToolCall::new(id, activity.clone()).status(ToolCallStatus::Completed),
                ));
            }
            Event::Notice { message } | Event::ContextNotice { message } => {
                eprintln!("{message}");
            }
            Event::Retrying {
                backend,
                retry,
                retries,
                reason,
                ..
            } => eprintln!("agent-loop: {backend}: {reason}, retry {retry} of {retries}"),
            _ => {}
        }
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(ask(
            &self.notifier,
            request,
            self.tools.kind(&request.call.name),
        ))
    }
}

/// A plan as ACP has it; a priority or status ACP does not name is `medium` or `pending`.
fn plan(entries: &[PlanEntry]) -> Plan {
    let entry = |e: &PlanEntry| {
        let priority = match e.priority.as_str() {
            "high" => PlanEntryPriority::High,
            "low" => PlanEntryPriority::Low,
            _ => PlanEntryPriority::Medium,
        };
        let status = match e.status.as_str() {
            "in_progress" => PlanEntryStatus::InProgress,
            "completed" => PlanEntryStatus::Completed,
            _ => PlanEntryStatus::Pending,
        };
        AcpPlanEntry::new(e.content.clone(), priority, status)
    };
    Plan::new(entries.iter().map(entry).collect())
}

const ALLOW_ONCE: &str = "allow-once";
const ALLOW_ALWAYS: &str = "allow-always";
const REJECT_ONCE: &str = "reject-once";
const REJECT_ALWAYS: &str = "reject-always";

/// Asks the client whether `request`'s call may run.
async fn ask(notifier: &Notifier, request: &ApprovalRequest, kind: ToolKind) -> Decision {
    let tool = request.call.name.clone();
    if notifier.rejected.lock().is_ok_and(|r| r.contains(&tool)) {
        return Decision::Deny(format!(
            "the user rejected every {tool} call in this session"
        ));
    }
    let options = vec![
        PermissionOption::new(ALLOW_ONCE, "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {tool}"),
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
        PermissionOption::new(
            REJECT_ALWAYS,
            format!("Always reject {tool}"),
            PermissionOptionKind::RejectAlways,
        ),
    ];
    let call = ToolCallUpdate::new(
        request.call.id.clone(),
        ToolCallUpdateFields::new()
            .title(call_title(&tool, &request.summary))
            .kind(kind)
            .raw_input(request.call.args.clone()),
    );
    let asked = notifier
        .cx
        .send_request(RequestPermissionRequest::new(
            notifier.session.clone(),
            call,
            options,
        ))
        .block_task()
        .await;
    let decision = match asked.map(|r| r.outcome) {
        Ok(RequestPermissionOutcome::Selected(choice)) => match &*choice.option_id.0 {
            ALLOW_ONCE => Decision::Once,
            ALLOW_ALWAYS => Decision::Always,
            REJECT_ALWAYS => {
                if let Ok(mut rejected) = notifier.rejected.lock() {
                    rejected.insert(tool.clone());
                }
                Decision::Deny("the user rejected it".into())
            }
            _ => Decision::Deny("the user rejected it".into()),
        },
        Ok(_) => Decision::Deny("the prompt was cancelled".into()),
        Err(e) => Decision::Deny(format!(
            "the editor did not answer the permission request: {e}"
        )),
    };
    if matches!(decision, Decision::Once | Decision::Always) {
        notifier.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            request.call.id.clone(),
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
        )));
    }
    decision
}
