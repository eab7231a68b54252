//! File-system helpers shared by the file tools: resolving paths against the working
//! directory, telling text from binary, writing atomically, and writing a file that must not
//! be there yet.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// A path from the model, relative to `cwd` unless absolute.
pub fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Text if it has no NUL byte and is valid UTF-8; `None` for binary content.
pub fn as_text(bytes: Vec<u8>) -> Option<String> {
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Writes `content` to `path` atomically: a temporary file in the same folder, then a rename,
/// so a crash never leaves a half-written file. Parent folders are created; an existing file
/// keeps its permissions. The temporary file is made exclusively (`O_EXCL`), after whatever
/// has its name is removed: its name is predictable, and a link planted there by a program
/// that shares the folder (an agent, a command) would otherwise be followed, and the write go
/// to the link's target.
pub fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let tmp = dir.join(format!(".{name}.agent-loop-{}.tmp", std::process::id()));
    // A link or a file left there goes first (the link itself, not what it names); one
    // planted again in between makes the exclusive create fail, which writes nothing.
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(content)?;
        file.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes `content` to `path`, which must not exist: the file is created exclusively
/// (`O_EXCL`), so one that appeared since the caller looked is never overwritten, nor a link
/// there followed (`AlreadyExists`). A write that fails removes the file it made, which held
/// nothing of anyone's.
pub fn write_new(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let result = file.write_all(content).and_then(|()| file.sync_all());
    if result.is_err() {
        let _ = std::fs::remove_file(path);
    }
    result
}

/// `.`: the default folder of the tools that take one.
pub fn working_dir() -> String {
    ".".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_never_writes_through_a_link_at_its_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let victim = elsewhere.path().join("victim");
        std::fs::write(&victim, b"kept").unwrap();
        let file = dir.path().join("out.md");
        let tmp = dir
            .path()
            .join(format!(".out.md.agent-loop-{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        write_atomic(&file, b"written").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"kept");
        assert_eq!(std::fs::read(&file).unwrap(), b"written");
        assert!(std::fs::symlink_metadata(&file).unwrap().is_file());
        assert!(std::fs::symlink_metadata(&tmp).is_err(), "the link is gone");
    }

    #[test]
    fn write_new_never_replaces_a_file_or_follows_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.md");
        write_new(&file, b"first").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"first");
        let again = write_new(&file, b"second").unwrap_err();
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&file).unwrap(), b"first");
        // A dangling link is there too: its target is not made.
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(dir.path().join("target.md"), &link).unwrap();
        let linked = write_new(&link, b"x").unwrap_err();
        assert_eq!(linked.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(!dir.path().join("target.md").exists());
    }
}
