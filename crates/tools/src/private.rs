//! Session data is private to the user: folders 0700 and files 0600 (`session.json`,
//! `log.jsonl`, artifacts, `--log` files), created with those modes in the same call, so
//! there is no moment when another user could open them, whatever the umask. A save cut short
//! (a crash between writing the temporary file and renaming it) leaves a `.tmp` file, which
//! may be the newest save: [`leftovers`] finds them in one session's folder, for the next load
//! of that session to recover from and remove. Nothing sweeps every folder at start, which
//! would cost a read of each session kept at every start and remove saves not yet recovered.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;
/// What a temporary file of [`write_atomic`] is called after its process id.
const TMP_TAG: &str = ".agent-loop-";

/// Creates `dir` and any missing parents, each 0700; an existing `dir` that others can
/// enter is closed to them.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    let meta = std::fs::metadata(dir)?;
    if meta.permissions().mode() & 0o077 != 0 {
        // Made before sessions were private: from now on it is.
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(DIR_MODE));
    }
    Ok(())
}

/// Opens `path` for appending, creating it 0600.
pub fn open_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .open(path)
}

/// Opens a file of lines (`log.jsonl`) for appending, creating it 0600. When its last line
/// was cut short (a write that failed part-way: a full disk), the file is cut back to the end
/// of its last whole line: the torn record is lost anyway, and left in place its open string
/// would swallow the line breaks after it, so that `jq`, which reads values, not lines,
/// stops there. The file itself (its mode, owner) stays.
pub fn open_lines(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(FILE_MODE)
        .open(path)?;
    let len = file.metadata()?.len();
    let whole = whole_lines(&file, len)?;
    if whole < len {
        file.set_len(whole)?;
    }
    Ok(file)
}

/// How many of the first `len` bytes of `file` its whole lines take: up to its last `\n`,
/// read backwards a piece at a time (a torn record can be long).
fn whole_lines(file: &File, len: u64) -> std::io::Result<u64> {
    use std::os::unix::fs::FileExt as _;
    let mut last = [0u8];
    if len == 0 || file.read_exact_at(&mut last, len - 1).is_ok() && last == *b"\n" {
        return Ok(len);
    }
    let mut piece = vec![0u8; 64 * 1024];
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(piece.len() as u64);
        let bytes = &mut piece[..(end - start) as usize];
        file.read_exact_at(bytes, start)?;
        if let Some(at) = memchr::memrchr(b'\n', bytes) {
            return Ok(start + at as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// Creates a new file at `path`, 0600; an existing one is an `AlreadyExists` error.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
}

/// Writes `content` to `path` (in an existing folder) atomically, 0600: a temporary file
/// next to it, then a rename.
pub fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let tmp = dir.join(format!(".{name}{TMP_TAG}{}.tmp", std::process::id()));
    // A temporary file left by a process with our (reused) id goes first.
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut file = create_new(&tmp)?;
        file.write_all(content)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The temporary files that saves of `file` cut short left in `folder`: those of processes
/// no longer running. A running process's file is a save under way, never a leftover; a
/// process with our own id is a former one whose id was reused, as we are not saving now.
pub fn leftovers(folder: &Path, file: &str) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((of, pid)) = leftover_of(&name) else {
                return false;
            };
            of == file && (pid == std::process::id() as i32 || !running(pid))
        })
        .map(|entry| entry.path())
        .collect()
}

/// Whether process `pid` exists; one we may not signal (another user's) exists too.
fn running(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e != rustix::io::Errno::SRCH,
    }
}

/// The file a temporary file stands for, and the process id in its name:
/// `.session.json.agent-loop-PID.tmp` is `session.json`'s, of process PID.
fn leftover_of(name: &str) -> Option<(&str, i32)> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (of, pid) = rest.rsplit_once(TMP_TAG)?;
    Some((of, pid.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// A torn last line is cut off, however long, and the file keeps its mode: every line
    /// after the next write is a whole record.
    #[test]
    fn a_torn_last_line_is_cut_off_before_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let long = format!("{{\"a\":1}}\n{{\"cut\":\"{}", "x".repeat(200_000));
        for (before, after) in [
            ("", "{\"b\":2}\n"),
            ("{\"a\":1}\n", "{\"a\":1}\n{\"b\":2}\n"),
            ("{\"a\":1}\n{\"cut", "{\"a\":1}\n{\"b\":2}\n"),
            ("{\"cut", "{\"b\":2}\n"),
            (long.as_str(), "{\"a\":1}\n{\"b\":2}\n"),
        ] {
            std::fs::write(&path, before).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
            open_lines(&path)
                .unwrap()
                .write_all(b"{\"b\":2}\n")
                .unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), after);
            assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o640);
        }
    }

    #[test]
    fn private_modes_whatever_the_umask_and_leftovers_found() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("sessions/s1");
        create_dir(&folder).unwrap();
        assert_eq!(std::fs::metadata(&folder).unwrap().mode() & 0o777, 0o700);
        write_atomic(&folder.join("session.json"), b"{}").unwrap();
        let meta = std::fs::metadata(folder.join("session.json")).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        // A process id that cannot be running (above the kernel's pid_max), and our own,
        // which is not saving now: both left over.
        let stale = folder.join(".session.json.agent-loop-999999999.tmp");
        let reused = folder.join(format!(
            ".session.json.agent-loop-{}.tmp",
            std::process::id()
        ));
        // A running process's save under way (our parent's, which runs as long as we do),
        // another file's, and the user's own file: not.
        let parent = std::os::unix::process::parent_id();
        let under_way = folder.join(format!(".session.json.agent-loop-{parent}.tmp"));
        let other = folder.join(".log.jsonl.agent-loop-999999999.tmp");
        let mine = folder.join("notes.tmp");
        for file in [&stale, &reused, &under_way, &other, &mine] {
            std::fs::write(file, "half").unwrap();
        }
        let mut found = leftovers(&folder, "session.json");
        found.sort();
        let mut expected = vec![stale, reused];
        expected.sort();
        assert_eq!(found, expected);
        assert!(leftovers(&dir.path().join("none"), "session.json").is_empty());
        assert_eq!(leftover_of(".log.agent-loop-12.tmp"), Some(("log", 12)));
        assert_eq!(leftover_of("log.agent-loop-12.tmp"), None);
    }
}
