//! The session's event log: one JSON object per line, appended as events happen, each line
//! redacted before it is written. Streamed text is batched: consecutive `assistant_delta`
//! (or `thinking_delta`) records of one turn become one record (up to [`BATCH`] bytes of text), and lines go out
//! through a buffer flushed at every other record, so a backend printing a million lines
//! costs a few hundred writes, not a million records and a million writes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Redactor;
use super::SessionError;
use crate::event::Event;
use crate::jsonl::{rfc3339, Body, Meta};
use crate::tools::Throttle;

/// The most text one batched `assistant_delta` or `thinking_delta` record holds.
pub const BATCH: usize = 64 * 1024;
/// How often a running tool's progress is logged.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

pub struct Log {
    /// `None` until the first line for a [`Log::deferred`] log.
    file: Option<BufWriter<File>>,
    path: PathBuf,
    redactor: Redactor,
    /// The `assistant_delta` or `thinking_delta` record being filled.
    pending: Option<Value>,
}

impl Log {
    /// Opens (creating folders and file, private to the user) for appending.
    pub fn open(path: &Path, redactor: Redactor) -> Result<Self, SessionError> {
        let mut log = Log::deferred(path, redactor);
        log.file = Some(BufWriter::with_capacity(BATCH, create(path)?));
        Ok(log)
    }

    /// A log whose folder and file are made when the first line is written: a session's own
    /// log, so that a session with nothing to say leaves nothing behind.
    pub fn deferred(path: &Path, redactor: Redactor) -> Self {
        Log {
            file: None,
            path: path.to_path_buf(),
            redactor,
            pending: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Masks what `redactor` knows from the next line on (a secret learnt after opening: an
    /// MCP login's token refreshed at start-up).
    pub fn set_redactor(&mut self, redactor: Redactor) {
        self.redactor = redactor;
    }

    /// Appends one JSON value as a line (a delta joins the one before it). A failed write is
    /// reported once by the caller, not fatal to the conversation.
    pub fn write(&mut self, value: &Value) -> std::io::Result<()> {
        if value["event"] == "assistant_delta" || value["event"] == "thinking_delta" {
            if let Some(text) = value["text"].as_str() {
                return self.add_delta(value, text);
            }
        }
        self.write_pending()?;
        self.write_line(value)?;
        self.file()?.flush()
    }

    fn add_delta(&mut self, value: &Value, text: &str) -> std::io::Result<()> {
        let same_turn = self.pending.as_ref().is_some_and(|p| {
            p["event"] == value["event"]
                && p["turn"] == value["turn"]
                && p["backend"] == value["backend"]
        });
        if !same_turn {
            self.write_pending()?;
            self.pending = Some(value.clone());
        } else if let Some(Value::String(joined)) =
            self.pending.as_mut().and_then(|p| p.get_mut("text"))
        {
            joined.push_str(text);
        }
        let full = self
            .pending
            .as_ref()
            .and_then(|p| p["text"].as_str())
            .map_or(0, str::len);
        if full >= BATCH {
            self.write_pending()?;
        }
        Ok(())
    }

    /// Writes the batched delta, if any.
    fn write_pending(&mut self) -> std::io::Result<()> {
        match self.pending.take() {
            Some(pending) => self.write_line(&pending),
            None => Ok(()),
        }
    }

    fn write_line(&mut self, value: &Value) -> std::io::Result<()> {
        let line = self.redactor.redact(&value.to_string());
        let file = self.file()?;
        file.write_all(line.as_bytes())?;
        file.write_all(b"\n")
    }

    /// The file, made now for a deferred log.
    fn file(&mut self) -> std::io::Result<&mut BufWriter<File>> {
        match self.file {
            Some(ref mut file) => Ok(file),
            None => {
                let file = create(&self.path).map_err(std::io::Error::other)?;
                Ok(self.file.insert(BufWriter::with_capacity(BATCH, file)))
            }
        }
    }
}

impl Drop for Log {
    /// The last batch and the buffer go out when the log is closed.
    fn drop(&mut self) {
        let _ = self.write_pending();
        if let Some(file) = &mut self.file {
            let _ = file.flush();
        }
    }
}

/// Creates the log's folder and file, private to the user.
fn create(path: &Path) -> Result<File, SessionError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::tools::private::create_dir(dir).map_err(|source| SessionError::LogFolder {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    crate::tools::private::open_lines(path).map_err(|source| SessionError::LogFile {
        path: path.to_path_buf(),
        source,
    })
}

/// Where every line of a session's event log says it came from.
#[derive(Debug, Clone, Default)]
pub struct LogContext {
    /// The session's name.
    pub session: String,
    /// The session's random id, the `session_id` of every record.
    pub session_id: String,
    pub backend: String,
    pub model: Option<String>,
    pub turn: u32,
}

impl LogContext {
    /// What every record repeats, from this context.
    fn meta(&self) -> Meta {
        Meta {
            session_id: self.session_id.clone(),
            turn: self.turn,
            backend: Some(self.backend.clone()),
            model: self.model.clone(),
        }
    }
}

/// A session's events as JSON lines in the public schema ([`crate::jsonl`]: each event
/// serialised as it is, the common keys around it), plus the raw
/// output of each CLI backend call as a `backend_output` record of the log's own (and a
/// `backend_output_dropped` note of what `max_output_bytes` kept out of it: the raw record
/// shares the cap with the answer, [`crate::event::RawOutput::share_cap`]).
pub struct EventLog {
    log: Log,
    /// The `session_start` record, written before the first other one: a session that never
    /// has anything to say leaves no log behind.
    start: Option<Value>,
    /// A write failed already: said once, then the log is left alone.
    failed: bool,
    /// A running tool's progress is logged at most once a second.
    progress: Throttle,
}

impl EventLog {
    /// See [`Log::set_redactor`].
    pub fn set_redactor(&mut self, redactor: Redactor) {
        self.log.set_redactor(redactor);
    }

    /// The log of session `context.session`, which starts with its `session_start` record.
    pub fn new(log: Log, context: &LogContext) -> Self {
        let start = Body::SessionStart {
            session: context.session.clone(),
        };
        let start = context
            .meta()
            .value(&rfc3339(std::time::SystemTime::now()), start);
        EventLog {
            log,
            start,
            failed: false,
            progress: Throttle::new(PROGRESS_EVERY),
        }
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Appends a record of the log's own (`session_clear`) to a log that has begun: a session
    /// that had nothing to say gets no log for it. The first write that fails returns what to
    /// tell the user.
    pub fn body(&mut self, body: Body, context: &LogContext) -> Option<String> {
        if self.start.is_some() {
            return None;
        }
        let record = context
            .meta()
            .value(&rfc3339(std::time::SystemTime::now()), body);
        self.write(record.into_iter().collect())
    }

    /// Appends `event`. The first write that fails returns what to tell the user; after it
    /// nothing more is written.
    pub fn record(&mut self, event: &Event, context: &LogContext) -> Option<String> {
        if let Event::ToolProgress { call_id, .. } = event {
            if !self.progress.admit(call_id) {
                return None;
            }
        }
        let meta = context.meta();
        let ts = rfc3339(std::time::SystemTime::now());
        let mut records = Vec::new();
        // A CLI's stdout lines are in the log once, byte for byte, in the `backend_output`
        // record that ends the call: as `assistant_delta` records too, a flood would be
        // logged twice over (`--output jsonl` streams them).
        if !matches!(event, Event::BackendOutput { .. }) {
            records.extend(meta.value(&ts, event));
        }
        if let Event::BackendFinished { raw: Some(raw), .. } = event {
            let raw_value = serde_json::to_value(raw).unwrap_or_default();
            records.extend(meta.value(&ts, Body::BackendOutput { raw: raw_value }));
            let left_out =
                raw.stdout_dropped + raw.stderr_dropped + raw.stdout_unlogged + raw.stderr_unlogged;
            if left_out > 0 {
                records.extend(meta.value(
                    &ts,
                    Body::BackendOutputDropped {
                        stdout_dropped_bytes: raw.stdout_dropped,
                        stderr_dropped_bytes: raw.stderr_dropped,
                        stdout_unlogged_bytes: raw.stdout_unlogged,
                        stderr_unlogged_bytes: raw.stderr_unlogged,
                    },
                ));
            }
        }
        self.write(records)
    }

    fn write(&mut self, lines: Vec<Value>) -> Option<String> {
        if self.failed || lines.is_empty() {
            return None;
        }
        for line in self.start.take().into_iter().chain(lines) {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn deltas_are_batched_and_every_other_record_is_written_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut log = Log::open(&path, Redactor::default()).unwrap();
        let delta =
            |t: &str| json!({"event": "assistant_delta", "turn": 1, "backend": "b", "text": t});
        for line in ["a\n", "b\n", "c\n"] {
            log.write(&delta(line)).unwrap();
        }
        log.write(&json!({"event": "turn_end", "turn": 1})).unwrap();
        // Written before the log is closed: the file is current after every other record.
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["text"], "a\nb\nc\n");
        assert_eq!(lines[1]["event"], "turn_end");
        // A batch is cut at BATCH bytes.
        let big = "x".repeat(BATCH / 2 + 1);
        for _ in 0..3 {
            log.write(&delta(&big)).unwrap();
        }
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 4, "two batches more");
    }

    /// A log whose last write was cut short (a full disk) loses the torn record at the next
    /// open: every line is a whole record after it, and a reader of values (jq), whom the
    /// torn record's open string would stop, reads them all.
    #[test]
    fn a_torn_record_is_cut_off_so_every_line_after_parses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(
            &path,
            "{\"event\":\"turn_end\"}\n{\"event\":\"assistant\",\"text\":\"it was",
        )
        .unwrap();
        let mut log = Log::open(&path, Redactor::default()).unwrap();
        log.write(&json!({"event": "session_start"})).unwrap();
        log.write(&json!({"event": "user_message", "text": "go"}))
            .unwrap();
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        let events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let names: Vec<&str> = events
            .iter()
            .map(|e| e["event"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["turn_end", "session_start", "user_message"]);
        let values = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
        assert_eq!(values.map(Result::unwrap).count(), 3);
    }

    #[test]
    fn a_deferred_log_is_made_at_its_first_line_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s/log.jsonl");
        drop(Log::deferred(&path, Redactor::default()));
        assert!(!path.exists() && !path.parent().unwrap().exists());
        let mut log = Log::deferred(&path, Redactor::default());
        log.write(&json!({"event": "turn_end"})).unwrap();
        assert!(path.exists());
    }
}
