//! The memory file: `AGENTS.md` (or `AGENT.md`) in the working directory, notes the user keeps
//! for every conversation there. Its text goes into the system preamble of every request, cut
//! at [`MAX_MEMORY_BYTES`] so a huge file cannot crowd out the conversation; `/memory TEXT`
//! appends `* TEXT` to it.
//!
//! It is read and written within the working directory only, as the file tools would: a
//! cloned repository's `AGENTS.md` may be a link to `~/.ssh/id_rsa`, and it would go with every
//! request without a tool call or a question. A link to another file of the folder (the
//! common `AGENTS.md -> CLAUDE.md`) is followed.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::ContextError;
use crate::tools::{open_read, replace, FileError, Opened, Root};

/// The files looked for, in order; new notes go to the first one found, or `AGENTS.md`.
pub const MEMORY_FILES: [&str; 2] = ["AGENTS.md", "AGENT.md"];
/// Bytes of the memory file sent with each request.
pub const MAX_MEMORY_BYTES: usize = 64 * 1024;

/// The memory file as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    pub path: PathBuf,
    /// The text, cut at [`MAX_MEMORY_BYTES`] with a note saying so.
    pub text: String,
}

impl Memory {
    /// The file's name, for the preamble (`AGENTS.md`).
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map_or_else(|| "AGENTS.md".into(), |n| n.to_string_lossy().into_owned())
    }
}

/// The memory file in `dir`, if there is one (a link is one, wherever it leads: where it
/// leads is checked when it is opened).
fn find(dir: &Path) -> Option<PathBuf> {
    MEMORY_FILES
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.symlink_metadata().is_ok_and(|m| !m.is_dir()))
}

/// `path` (in `dir`) resolved, `..` and links followed, and checked to stay in `dir`.
fn within(dir: &Path, path: &Path) -> std::io::Result<(Root, PathBuf)> {
    let root = Root::new(dir).map_err(std::io::Error::other)?;
    let shown = path.display().to_string();
    match root.check(path, &shown) {
        Ok(resolved) => Ok((root, resolved)),
        Err(FileError::Outside { resolved, .. }) => Err(std::io::Error::other(format!(
            "refused: it leads to {}, outside the working directory",
            resolved.display()
        ))),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// Opens the memory file: a regular file within `dir`, no link followed past the check.
fn open(dir: &Path, path: &Path) -> std::io::Result<File> {
    let (root, resolved) = within(dir, path)?;
    let shown = path.display().to_string();
    match open_read(root.dir(), &resolved, &shown, false) {
        Ok(Opened::File(file)) => Ok(file),
        Ok(Opened::Dir(_)) => Err(std::io::Error::other(format!("{shown} is a folder"))),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// Reads the memory file of `dir`; `None` if there is none or it is empty.
pub fn load(dir: &Path) -> Result<Option<Memory>, ContextError> {
    let Some(path) = find(dir) else {
        return Ok(None);
    };
    let io_error = |source: std::io::Error| ContextError::ReadMemory {
        path: path.clone(),
        source,
    };
    let mut bytes = Vec::new();
    // One byte past the limit tells whether the file is longer, without reading all of it.
    open(dir, &path)
        .and_then(|f| f.take(MAX_MEMORY_BYTES as u64 + 1).read_to_end(&mut bytes))
        .map_err(io_error)?;
    let cut = bytes.len() > MAX_MEMORY_BYTES;
    bytes.truncate(MAX_MEMORY_BYTES);
    let mut text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // A cut inside a character leaves an incomplete sequence at the end: drop it.
        Err(e) if cut && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).expect("valid up to here")
        }
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let memory_name = path.file_name().map_or_else(
        || "the memory file".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    if cut {
        text.push_str(&format!(
            "\n\n[{memory_name} is longer than {} KB: the rest is cut here. Read {} for more.]",
            MAX_MEMORY_BYTES / 1024,
            path.display()
        ));
    }
    Ok(Some(Memory { path, text }))
}

/// Appends `* TEXT` as a line of the memory file in `dir` (creating `AGENTS.md` if there is
/// none); returns the file's path.
pub fn append(dir: &Path, note: &str) -> Result<PathBuf, ContextError> {
    let note = note.split_whitespace().collect::<Vec<_>>().join(" ");
    if note.is_empty() {
        return Err(ContextError::NothingToRemember);
    }
    let path = find(dir).unwrap_or_else(|| dir.join(MEMORY_FILES[0]));
    let io_error = |source: std::io::Error| ContextError::AddMemory {
        path: path.clone(),
        source,
    };
    let (root, resolved) = within(dir, &path).map_err(io_error)?;
    let mut text = Vec::new();
    if resolved.symlink_metadata().is_ok() {
        open(dir, &path)
            .and_then(|mut f| f.read_to_end(&mut text))
            .map_err(io_error)?;
    }
    // Start on a line of its own when the file does not end with a newline.
    if text.last().is_some_and(|b| *b != b'\n') {
        text.push(b'\n');
    }
    text.extend_from_slice(format!("* {note}\n").as_bytes());
    // The whole file replaced at once, where the link (if any) leads: no link written through.
    let shown = path.display().to_string();
    replace(root.dir(), &resolved, &shown, &text)
        .map_err(|e| io_error(std::io::Error::other(e.to_string())))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_file_no_memory() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), None);
    }

    #[test]
    fn agents_md_is_preferred_over_agent_md() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENT.md"), "old name").unwrap();
        assert_eq!(load(dir.path()).unwrap().unwrap().text, "old name");
        std::fs::write(dir.path().join("AGENTS.md"), "new name").unwrap();
        let memory = load(dir.path()).unwrap().unwrap();
        assert_eq!(memory.text, "new name");
        assert_eq!(memory.file_name(), "AGENTS.md");
    }

    #[test]
    fn a_file_over_64_kb_is_cut_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        // A multi-byte character straddles the limit: the cut must not split it.
        let mut text = "a".repeat(MAX_MEMORY_BYTES - 1);
        text.push('é');
        text.push_str(&"b".repeat(10_000));
        std::fs::write(dir.path().join("AGENTS.md"), &text).unwrap();
        let memory = load(dir.path()).unwrap().unwrap();
        let (kept, note) = memory.text.split_once("\n\n[").unwrap();
        assert_eq!(kept, "a".repeat(MAX_MEMORY_BYTES - 1));
        assert!(
            note.starts_with("AGENTS.md is longer than 64 KB: the rest is cut here."),
            "{note}"
        );
        // Exactly at the limit: nothing is cut.
        std::fs::write(dir.path().join("AGENTS.md"), "c".repeat(MAX_MEMORY_BYTES)).unwrap();
        assert_eq!(
            load(dir.path()).unwrap().unwrap().text.len(),
            MAX_MEMORY_BYTES
        );
    }

    #[test]
    fn append_adds_a_bullet_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = append(dir.path(), "run tests with cargo test").unwrap();
        assert_eq!(path, dir.path().join("AGENTS.md"));
        append(dir.path(), "  use\n4 spaces ").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "* run tests with cargo test\n* use 4 spaces\n"
        );
        assert!(append(dir.path(), "  ").is_err());
    }

    #[test]
    fn append_goes_to_the_existing_file_on_a_new_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENT.md"), "# Notes").unwrap();
        let path = append(dir.path(), "x").unwrap();
        assert_eq!(path, dir.path().join("AGENT.md"));
        assert_eq!(std::fs::read_to_string(path).unwrap(), "# Notes\n* x\n");
    }

    /// A cloned repository's `AGENTS.md -> ~/.ssh/id_rsa` is neither sent nor appended to; a
    /// link within the folder is followed both ways, and stays a link.
    #[test]
    fn a_link_out_of_the_folder_is_refused_and_one_within_is_followed() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("id_rsa");
        std::fs::write(&secret, "PRIVATE KEY").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let memory = dir.path().join("AGENTS.md");
        std::os::unix::fs::symlink(&secret, &memory).unwrap();
        let refused = load(dir.path()).unwrap_err().to_string();
        assert!(
            refused.contains("outside the working directory"),
            "{refused}"
        );
        assert!(append(dir.path(), "x").is_err());
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "PRIVATE KEY");
        std::fs::remove_file(&memory).unwrap();
        std::fs::write(dir.path().join("CLAUDE.md"), "# Shared").unwrap();
        std::os::unix::fs::symlink("CLAUDE.md", &memory).unwrap();
        assert_eq!(load(dir.path()).unwrap().unwrap().text, "# Shared");
        append(dir.path(), "kept").unwrap();
        let claude = std::fs::read_to_string(dir.path().join("CLAUDE.md")).unwrap();
        assert_eq!(claude, "# Shared\n* kept\n");
        assert!(memory.symlink_metadata().unwrap().is_symlink());
    }
}
