//! The session's event log: one JSON object per line, appended as events happen, each line
//! redacted before it is written.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::Redactor;
use crate::event::Event;
use crate::jsonl::{record, rfc3339, Meta};
use crate::Error;

pub struct Log {
    /// `None` until the first line for a [`Log::deferred`] log.
    file: Option<File>,
    path: PathBuf,
    redactor: Redactor,
}

impl Log {
    /// Opens (creating folders and file, private to the user) for appending.
    pub fn open(path: &Path, redactor: Redactor) -> Result<Self, Error> {
        let mut log = Log::deferred(path, redactor);
        log.file = Some(create(path)?);
        Ok(log)
    }

    /// A log whose folder and file are made when the first line is written: a session's own
    /// log, so that a session with nothing to say leaves nothing behind.
    pub fn deferred(path: &Path, redactor: Redactor) -> Self {
        Log {
            file: None,
            path: path.to_path_buf(),
            redactor,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one JSON value as a line. A failed write is reported once by the caller, not
    /// fatal to the conversation.
    pub fn write(&mut self, value: &serde_json::Value) -> std::io::Result<()> {
        let line = self.redactor.redact(&value.to_string());
        let file = match &mut self.file {
            Some(file) => file,
            None => self
                .file
                .insert(create(&self.path).map_err(std::io::Error::other)?),
        };
        file.write_all(line.as_bytes())?;
        file.write_all(b"\n")
    }
}

/// Opens `path` for appending, creating it and its folders.
fn create(path: &Path) -> Result<File, Error> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        super::private::create_dir(dir).map_err(|e| {
            Error::config(format!("cannot create log folder {}: {e}", dir.display()))
        })?;
    }
    super::private::open_append(path)
        .map_err(|e| Error::config(format!("cannot open log file {}: {e}", path.display())))
}

/// Where every line of a session's event log says it came from.
#[derive(Debug, Clone, Default)]
pub struct LogContext {
    pub session: String,
    pub backend: String,
    pub model: Option<String>,
    pub turn: u32,
}

/// A session's events as JSON lines in the public schema ([`crate::jsonl`]), plus the raw
/// output of each CLI backend call as a `backend_output` record of the log's own.
pub struct EventLog {
    log: Log,
    /// How long the last backend call took, for the usage record after it.
    last_latency: Option<u64>,
    /// A write failed already: said once, then the log is left alone.
    failed: bool,
}

impl EventLog {
    pub fn new(log: Log) -> Self {
        EventLog {
            log,
            last_latency: None,
            failed: false,
        }
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Appends `event`. The first write that fails returns what to tell the user; after it
    /// nothing more is written.
    pub fn record(&mut self, event: &Event, context: &LogContext) -> Option<String> {
        if self.failed {
            return None;
        }
        let meta = Meta {
            session_id: context.session.clone(),
            turn: context.turn,
            backend: Some(context.backend.clone()),
            model: context.model.clone(),
            latency_ms: match event {
                Event::Usage { .. } => self.last_latency,
                _ => None,
            },
        };
        if let Event::BackendFinished { elapsed_ms, .. } = event {
            self.last_latency = Some(*elapsed_ms);
        }
        let ts = rfc3339(std::time::SystemTime::now());
        let mut lines = Vec::new();
        if let Some(record) = record(event, &meta, &ts) {
            lines.push(serde_json::to_value(record).unwrap_or_default());
        }
        if let Event::BackendFinished { raw: Some(raw), .. } = event {
            lines.push(serde_json::json!({
                "ts": ts,
                "event": "backend_output",
                "session_id": meta.session_id,
                "turn": meta.turn,
                "backend": meta.backend,
                "model": meta.model,
                "raw": raw,
            }));
        }
        for line in lines {
            if let Err(e) = self.log.write(&line) {
                self.failed = true;
                return Some(format!(
                    "warning: cannot write the log {}: {e} (the conversation goes on)",
                    self.log.path().display()
                ));
            }
        }
        None
    }
}
