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
/// keeps its permissions (without set-id bits). The temporary file has a random name and is
/// made exclusively (`O_EXCL`, by `tempfile`), and its mode is set through its open handle:
/// a predictable name would let a program sharing the folder (an agent, a command) plant a
/// link there for the write, or the mode, to follow, and two writes of one file at once
/// (two chats exporting it) would share it.
pub fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    // Dropped without `persist` (any error below), the temporary file is removed.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.agent-loop-"))
        .suffix(".tmp")
        .tempfile_in(&dir)?;
    tmp.write_all(content)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o777;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map(drop).map_err(|e| e.error)
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
    fn write_atomic_replaces_whole_keeps_the_mode_and_leaves_no_temporary_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.md");
        std::fs::write(&file, b"old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o4751)).unwrap();
        write_atomic(&file, b"new").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o751, "kept, without the set-id bit");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.md"]);
    }

    #[test]
    fn two_writes_of_one_file_at_once_each_land_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.md");
        let (a, b) = (vec![b'a'; 1 << 20], vec![b'b'; 1 << 20]);
        std::thread::scope(|s| {
            for content in [&a, &b] {
                let file = &file;
                s.spawn(move || {
                    for _ in 0..20 {
                        write_atomic(file, content).unwrap();
                    }
                });
            }
        });
        let got = std::fs::read(&file).unwrap();
        assert!(
            got == a || got == b,
            "a mixed or cut file of {} bytes",
            got.len()
        );
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
