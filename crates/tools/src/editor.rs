//! Files as an editor holds them: a front end that sits in an editor (an ACP client offering
//! `fs/read_text_file` and `fs/write_text_file`) gives the file tools an [`Editor`], and read,
//! write and edit go through it, so they see unsaved buffers and the editor shows the edits.
//! The root's checks come first, as for the tools' own file access.

use std::path::Path;
use std::sync::Arc;

use crate::BoxFuture;

/// Reads and writes whole text files by absolute path; errors say what failed.
pub trait Editor: Send + Sync {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>>;
    fn write<'a>(&'a self, path: &'a Path, content: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// The editor the file tools go through, if any.
#[derive(Clone, Default)]
pub struct Files(pub Option<Arc<dyn Editor>>);

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Some(_) => "Files(editor)",
            None => "Files(own)",
        })
    }
}
