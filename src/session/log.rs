//! The session's event log: one JSON object per line, appended as events happen, each line
//! redacted before it is written.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::Redactor;
use crate::Error;

pub struct Log {
    file: File,
    path: PathBuf,
    redactor: Redactor,
}

impl Log {
    /// Opens (creating folders and file, private to the user) for appending.
    pub fn open(path: &Path, redactor: Redactor) -> Result<Self, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            super::private::create_dir(dir).map_err(|e| {
                Error::config(format!("cannot create log folder {}: {e}", dir.display()))
            })?;
        }
        let file = super::private::open_append(path)
            .map_err(|e| Error::config(format!("cannot open log file {}: {e}", path.display())))?;
        Ok(Log {
            file,
            path: path.to_path_buf(),
            redactor,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one JSON value as a line. A failed write is reported once by the caller, not
    /// fatal to the conversation.
    pub fn write(&mut self, value: &serde_json::Value) -> std::io::Result<()> {
        let line = self.redactor.redact(&value.to_string());
        self.file.write_all(line.as_bytes())?;
        self.file.write_all(b"\n")
    }
}
