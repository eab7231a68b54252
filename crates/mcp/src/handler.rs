//! agent-loop's side of a connection: what it tells a server about itself at the handshake,
//! and its answers to the server's requests and notifications. rmcp answers `ping` itself;
//! `roots/list` is answered with agent-loop's root (`--root`, or the working folder when that
//! is anywhere: so a filesystem server knows where it may work), and
//! `notifications/tools/list_changed` marks the tool list for reading again before the next
//! turn. `notifications/progress` goes to the running call whose progress token it names;
//! `notifications/message` (a log message) to the server's running call, and is dropped
//! when none runs.

use std::collections::HashMap;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};

use super::lock;
use crate::tools::{Progress, ProgressSink, ToolLog};

/// The running calls' progress tokens (rmcp gives every request one), where each call's
/// reports go, and whom to wake on each (the call's own guard on its timeout).
pub type ProgressRoutes =
    Arc<std::sync::Mutex<HashMap<ProgressToken, (ProgressSink, Arc<tokio::sync::Notify>)>>>;

/// One connection's handler.
pub struct Handler {
    /// The server's name, for its log messages.
    server: String,
    info: ClientConfig,
    /// The root folder as a `file://` URI, and its name.
    root: Option<(String, String)>,
    /// Set when the server says its tools changed; taken when they are read again.
    pub tools_changed: Arc<AtomicBool>,
    pub progress: ProgressRoutes,
}

impl Handler {
    // Roots are deprecated in the newest revision, not in the ones servers speak today.
    #[allow(deprecated)]
    pub fn new(server: &str, root: &Path) -> Self {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        let info = ClientConfig::new(
            capabilities,
            Implementation::new("agent-loop", env!("CARGO_PKG_VERSION")),
        );
        let root = url::Url::from_directory_path(root).ok().map(|uri| {
            let name = root.file_name().map_or_else(
                || root.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            (uri.to_string(), name)
        });
        Handler {
            server: server.to_string(),
            info,
            root,
            tools_changed: Arc::default(),
            progress: Arc::default(),
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        let roots = self
            .root
            .iter()
            .map(|(uri, name)| rmcp::model::Root::new(uri.clone()).with_name(name.clone()))
            .collect();
        Ok(rmcp::model::ListRootsResult::new(roots))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // A token no running call has (a call that ended) is passed over.
        let route = lock(&self.progress).get(&params.progress_token).cloned();
        if let Some((sink, heard)) = route {
            heard.notify_one();
            sink.report(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    // Logging is deprecated in the newest revision, not in the servers that log today.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|l| l.as_str().map(str::to_string))
            .unwrap_or_else(|| format!("{:?}", params.level).to_lowercase());
        // Calls of one server run one at a time: the message is the running one's.
        let sinks: Vec<ProgressSink> = lock(&self.progress)
            .values()
            .map(|(sink, _)| sink.clone())
            .collect();
        for sink in sinks {
            sink.log(ToolLog {
                server: self.server.clone(),
                level: level.clone(),
                data: params.data.clone(),
            });
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }
}
