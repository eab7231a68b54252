//! Files and commands as an editor holds them: a front end that sits in an editor (an ACP
//! client offering `fs/read_text_file` and `fs/write_text_file`, or `terminal/create`) gives
//! the tools an [`Editor`] or a [`Terminal`]. Read, write and edit then go through the editor,
//! so they see unsaved buffers and the editor shows the edits; bash runs in the editor's
//! terminal, so the user watches it live. The root's checks, approval and the timeout come
//! first, as for the tools' own file access and commands.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::error::EditorError;
use crate::{BoxFuture, ToolOutput};

/// Reads and writes whole text files by absolute path; an error carries the editor's message.
pub trait Editor: Send + Sync {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, EditorError>>;
    /// The largest file it can send (its answer is one message of a capped size); a larger
    /// one is read from disk instead.
    fn read_cap(&self) -> Option<u64> {
        None
    }
    fn write<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), EditorError>>;
}

/// Runs a program in the editor's terminal, in `cwd`, killed at `timeout`; its output kept
/// to [`crate::command::OUTPUT_CAP`], written for the model as the bash tool writes it.
pub trait Terminal: Send + Sync {
    fn run<'a>(
        &'a self,
        program: PathBuf,
        args: Vec<String>,
        cwd: &'a Path,
        timeout: Duration,
    ) -> BoxFuture<'a, ToolOutput>;
}

/// What the tools go through instead of their own file access and processes, if anything.
#[derive(Clone, Default)]
pub struct Files {
    /// read, write and edit.
    pub editor: Option<Arc<dyn Editor>>,
    /// bash.
    pub terminal: Option<Arc<dyn Terminal>>,
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files")
            .field("editor", &self.editor.is_some())
            .field("terminal", &self.terminal.is_some())
            .finish()
    }
}
