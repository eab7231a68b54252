//! `agent-loop mcp serve` driven by a client on the official MCP SDK (rmcp's client side, the
//! same SDK the server is built on) over the built binary's stdio: the tools listed, turns
//! through the scripted fake agent and the HTTP mock, a reply that moves to another backend,
//! approval through elicitation (allowed, declined) and without it, for agent-loop's tools and
//! an ACP agent backend's own questions, the client's root, progress, cancel, the timeout,
//! and calls on two sessions side by side and on one in turn; and, line by line, the opening
//! of a client that offers protocol revision 2026-07-28 first (Claude Code's).

// Roots are deprecated in the newest revision of MCP, not in the clients of today.
#![allow(deprecated)]

mod approval;
mod cases;
mod docs;
mod turns;
mod wire;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ListRootsResult, ProgressNotificationParam,
    Root,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{json, Value};

use crate::common::{bin, poll, Workspace};

/// How the client answers the server.
#[derive(Clone, Default)]
pub struct Behaviour {
    /// Declares elicitation and answers every question so: `allow`, `always` or `deny`
    /// (accepted with that decision), or `decline`.
    pub elicit: Option<&'static str>,
    /// Declares roots and lists this folder.
    pub root: Option<PathBuf>,
}

/// What the server sent the client besides answers.
#[derive(Clone, Default)]
pub struct Seen {
    /// The elicitations' messages.
    pub asked: Arc<Mutex<Vec<String>>>,
    /// The progress notifications' messages.
    pub progress: Arc<Mutex<Vec<String>>>,
}

pub struct TestClient {
    behaviour: Behaviour,
    seen: Seen,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.behaviour.elicit.is_some() {
            capabilities = ClientCapabilities::builder().enable_elicitation().build();
        }
        if self.behaviour.root.is_some() {
            capabilities.roots = ClientCapabilities::builder().enable_roots().build().roots;
        }
        ClientConfig::new(capabilities, Implementation::new("test-client", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.seen.asked.lock().unwrap().push(message.clone());
        }
        Ok(match self.behaviour.elicit {
            Some("decline") | None => ElicitResult::new(ElicitationAction::Decline),
            Some(decision) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({ "decision": decision })),
        })
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self
            .behaviour
            .root
            .iter()
            .map(|path| Root::new(format!("file://{}", path.display())))
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let message = params.message.unwrap_or_default();
        self.seen.progress.lock().unwrap().push(message);
    }
}

/// A running `agent-loop mcp serve` and the client connected to it.
pub struct Client {
    pub service: RunningService<RoleClient, TestClient>,
    pub seen: Seen,
    child: tokio::process::Child,
    stderr: PathBuf,
}

/// Runs `f` on a runtime of its own, as the client's side of a test.
pub fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Starts `agent-loop mcp serve ARGS` with the workspace's backends.toml and environment
/// (plus `env`) and connects a client that behaves as `behaviour` says.
pub async fn start(
    ws: &Workspace,
    args: &[&str],
    behaviour: Behaviour,
    env: &[(&str, &str)],
) -> Client {
    let config = ws.path("backends.toml");
    let mut argv = vec!["mcp", "serve", "--config", config.to_str().unwrap()];
    argv.extend(args);
    let mut cmd = std::process::Command::new(bin());
    cmd.args(argv).envs(env.iter().copied());
    connect(ws, cmd, behaviour).await
}

/// Starts `cmd` (an `agent-loop mcp serve` command line) in the workspace's environment and
/// connects a client that behaves as `behaviour` says.
pub async fn connect(
    ws: &Workspace,
    mut cmd: std::process::Command,
    behaviour: Behaviour,
) -> Client {
    let stderr = ws.path("serve.stderr");
    let env: Vec<_> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect();
    ws.hermetic(&mut cmd)
        .current_dir(ws.work())
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let mut child = cmd.spawn().expect("agent-loop starts");
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let seen = Seen::default();
    let client = TestClient {
        behaviour,
        seen: seen.clone(),
    };
    let service = match client.serve(transport).await {
        Ok(service) => service,
        Err(e) => panic!(
            "the handshake failed ({e}):\n{}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        ),
    };
    Client {
        service,
        seen,
        child,
        stderr,
    }
}

impl Client {
    /// Calls `tool` with `args`; a protocol error fails the test.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        match self.service.call_tool(params).await {
            Ok(result) => result,
            Err(e) => panic!("{tool} failed: {e}\n{}", self.stderr()),
        }
    }

    /// Sends `signal` to agent-loop and waits for it to exit; returns its exit code.
    pub async fn signal(mut self, signal: i32) -> Option<i32> {
        let pid = self.child.id().expect("agent-loop runs") as i32;
        // SAFETY: kill(2) on the child this test started and has not waited for yet.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = tokio::time::timeout(std::time::Duration::from_secs(30), self.child.wait())
            .await
            .expect("agent-loop exits on the signal")
            .unwrap();
        status.code()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Closes the connection; agent-loop must then exit 0. Returns its stderr.
    pub async fn close(mut self) -> String {
        let _ = self.service.cancel().await;
        let status = tokio::time::timeout(std::time::Duration::from_secs(30), self.child.wait())
            .await
            .expect("agent-loop exits when its input ends")
            .unwrap();
        let stderr = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        assert!(status.success(), "agent-loop mcp serve: {status}\n{stderr}");
        stderr
    }
}

/// The result's text.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The answer of a turn (`ask`, `reply`): the structured content's `answer`, once the text
/// content is checked to be that same object serialised (what a client that reads only the
/// text gives its model).
pub fn answer(result: &CallToolResult) -> String {
    let structured = structured(result);
    let text: Value = serde_json::from_str(&text(result))
        .unwrap_or_else(|e| panic!("the text is not JSON ({e}): {result:?}"));
    assert_eq!(&text, structured, "the text is not the structured content");
    let answer = structured["answer"].as_str();
    answer
        .unwrap_or_else(|| panic!("no answer: {result:?}"))
        .to_string()
}

/// The result's structured content.
pub fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .unwrap_or_else(|| panic!("no structured content: {result:?}"))
}

/// One tool call in the fake agent's reply.
pub fn call(name: &str, args: Value) -> String {
    format!(
        "<tool_call>{}</tool_call>\n",
        json!({"name": name, "arguments": args})
    )
}

/// Waits (bounded, polling) for a file the fake agent writes.
pub fn wait_file(path: &std::path::Path) {
    poll(|| path.exists().then_some(()))
        .unwrap_or_else(|| panic!("{} never appeared", path.display()));
}

/// Waits (bounded, polling the client's state) until `check` gives a value.
pub async fn eventually<T>(mut check: impl FnMut() -> Option<T>) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "the client never saw it"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
