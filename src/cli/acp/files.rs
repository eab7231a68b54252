//! The file tools through the editor: when the client offers `fs/read_text_file` and
//! `fs/write_text_file`, read, write and edit ask it, so they see its unsaved buffers and it
//! shows the edits; the session's root is checked first, as always.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;

use agent_loop::tools::Editor;
use agent_loop::BoxFuture;

pub struct ClientFiles {
    pub cx: ConnectionTo<Client>,
    pub session: String,
}

/// Whether the client offers both halves (edit reads, then writes).
pub fn offered(client: &ClientCapabilities) -> bool {
    client.fs.read_text_file && client.fs.write_text_file
}

impl Editor for ClientFiles {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let request = ReadTextFileRequest::new(self.session.clone(), path);
            match self.cx.send_request(request).block_task().await {
                Ok(response) => Ok(response.content),
                Err(e) => Err(format!("the editor did not read it: {}", e.message)),
            }
        })
    }

    fn write<'a>(&'a self, path: &'a Path, content: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let request = WriteTextFileRequest::new(self.session.clone(), path, content);
            match self.cx.send_request(request).block_task().await {
                Ok(_) => Ok(()),
                Err(e) => Err(format!("the editor did not write it: {}", e.message)),
            }
        })
    }
}
