//! The tools through the editor: when the client offers `fs/read_text_file` and
//! `fs/write_text_file`, read, write and edit ask it, so they see its unsaved buffers and it
//! shows the edits; the session's root is checked first, as always. When it offers
//! `terminal`, bash runs there ([`super::terminal`]).

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;

use agent_loop::editor::{Editor, EditorError, Files, Terminal};
use agent_loop::BoxFuture;

use super::terminal::ClientTerminal;
use super::updates::Notifier;

/// The largest file read through the editor: its answer is one JSON-RPC line, and a line past
/// the connection's cap on one message (16 MiB, text escaped as JSON) is not read: the read
/// would fail ([`super::oversize`]), where reading the file from disk succeeds.
const EDITOR_READ_CAP: u64 = 8 * 1024 * 1024;

pub struct ClientFiles {
    pub cx: ConnectionTo<Client>,
    pub session: String,
}

/// What goes through the client: the file tools when it offers both reading and writing
/// (an edit reads, then writes: one view of the file, never the editor's buffer read and the
/// disk written), bash when it offers `terminal`.
pub fn through_client(client: &ClientCapabilities, notifier: &Notifier) -> Files {
    let fs = client.fs.read_text_file && client.fs.write_text_file;
    Files {
        editor: fs.then(|| {
            Arc::new(ClientFiles {
                cx: notifier.cx.clone(),
                session: notifier.session.clone(),
            }) as Arc<dyn Editor>
        }),
        terminal: client.terminal.then(|| {
            Arc::new(ClientTerminal {
                notifier: notifier.clone(),
            }) as Arc<dyn Terminal>
        }),
    }
}

impl Editor for ClientFiles {
    /// A larger file is read from disk by the tools (`ToolContext::open_text`), never asked.
    fn read_cap(&self) -> Option<u64> {
        Some(EDITOR_READ_CAP)
    }

    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, EditorError>> {
        Box::pin(async move {
            let request = ReadTextFileRequest::new(self.session.clone(), path);
            match self.cx.send_request(request).block_task().await {
                Ok(response) => Ok(response.content),
                Err(e) => Err(EditorError {
                    verb: "read",
                    message: e.message,
                }),
            }
        })
    }

    fn write<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), EditorError>> {
        Box::pin(async move {
            let request = WriteTextFileRequest::new(self.session.clone(), path, content);
            match self.cx.send_request(request).block_task().await {
                Ok(_) => Ok(()),
                Err(e) => Err(EditorError {
                    verb: "write",
                    message: e.message,
                }),
            }
        })
    }
}
