//! The session's event log: one JSON object per line, appended as events happen, each line
//! redacted before it is written. Streamed text is batched: consecutive `assistant_delta`
//! records of one turn become one record (up to [`BATCH`] bytes of text), and lines go out
//! through a buffer flushed at every other record, so a backend printing a million lines
//! costs a few hundred writes, not a million records and a million writes.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Redactor;
use crate::Error;

/// The most text one batched `assistant_delta` record holds.
pub const BATCH: usize = 64 * 1024;

pub struct Log {
    file: BufWriter<File>,
    path: PathBuf,
    redactor: Redactor,
    /// The `assistant_delta` record being filled.
    pending: Option<Value>,
}

impl Log {
    /// Opens (creating folders and file) for appending.
    pub fn open(path: &Path, redactor: Redactor) -> Result<Self, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::config(format!("cannot create log folder {}: {e}", dir.display()))
            })?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::config(format!("cannot open log file {}: {e}", path.display())))?;
        Ok(Log {
            file: BufWriter::with_capacity(BATCH, file),
            path: path.to_path_buf(),
            redactor,
            pending: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one JSON value as a line (a delta joins the one before it). A failed write is
    /// reported once by the caller, not fatal to the conversation.
    pub fn write(&mut self, value: &Value) -> std::io::Result<()> {
        if value["event"] == "assistant_delta" {
            if let Some(text) = value["text"].as_str() {
                return self.add_delta(value, text);
            }
        }
        self.write_pending()?;
        self.write_line(value)?;
        self.file.flush()
    }

    fn add_delta(&mut self, value: &Value, text: &str) -> std::io::Result<()> {
        let same_turn = self
            .pending
            .as_ref()
            .is_some_and(|p| p["turn"] == value["turn"] && p["backend"] == value["backend"]);
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
        self.file.write_all(line.as_bytes())?;
        self.file.write_all(b"\n")
    }
}

impl Drop for Log {
    /// The last batch and the buffer go out when the log is closed.
    fn drop(&mut self) {
        let _ = self.write_pending();
        let _ = self.file.flush();
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
}
