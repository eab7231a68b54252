//! Session data is private to the user: folders 0700 and files 0600 (`session.json`,
//! `log.jsonl`, artifacts, `--log` files), created with those modes in the same call, so
//! there is no moment when another user could open them, whatever the umask. A save cut short
//! (a crash between writing the temporary file and renaming it) leaves a `.tmp` file, which
//! the next start removes.

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

/// Removes the temporary files that saves cut short left in the folders under `dir`: those
/// of processes no longer running.
pub fn sweep(dir: &Path) {
    let Ok(folders) = std::fs::read_dir(dir) else {
        return;
    };
    for folder in folders.filter_map(Result::ok) {
        let Ok(files) = std::fs::read_dir(folder.path()) else {
            continue;
        };
        for file in files.filter_map(Result::ok) {
            let name = file.file_name();
            let Some(pid) = leftover_pid(&name.to_string_lossy()) else {
                continue;
            };
            let running = rustix::process::Pid::from_raw(pid)
                .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok());
            if !running || pid == std::process::id() as i32 {
                let _ = std::fs::remove_file(file.path());
            }
        }
    }
}

/// The process id in a temporary file's name: `.session.json.agent-loop-PID.tmp`.
fn leftover_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    rest.rsplit_once(TMP_TAG)?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn private_modes_whatever_the_umask_and_leftovers_swept() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("sessions/s1");
        create_dir(&folder).unwrap();
        assert_eq!(std::fs::metadata(&folder).unwrap().mode() & 0o777, 0o700);
        write_atomic(&folder.join("session.json"), b"{}").unwrap();
        let meta = std::fs::metadata(folder.join("session.json")).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        // A process id that cannot be running (above the kernel's pid_max).
        let stale = folder.join(".session.json.agent-loop-999999999.tmp");
        std::fs::write(&stale, "half").unwrap();
        let other = folder.join("notes.tmp");
        std::fs::write(&other, "mine").unwrap();
        sweep(&dir.path().join("sessions"));
        assert!(!stale.exists());
        assert!(other.exists());
        assert_eq!(leftover_pid(".log.agent-loop-12.tmp"), Some(12));
    }
}
