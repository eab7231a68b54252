//! One run per session at a time. Two runs that both load a session and both save it would
//! each write their own turn over the other's, so a run holds an exclusive lock on the
//! session for as long as it uses it: a second run is refused (or waits, with
//! `--wait-session`). The lock is an OS file lock on `sessions.locks/NAME` beside the sessions
//! folder (not inside it, where every folder is a session), released by the kernel when the
//! holder exits however it exits, so a killed run never leaves a stale lock. The file holds the
//! holder's process id, for the message of the run that was refused.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use super::store::{validate_name, Session, Store};
use super::{Redactor, SessionError};

/// Held for as long as a run uses the session; dropping it releases the lock.
#[derive(Debug)]
pub struct SessionLock {
    name: String,
    _file: File,
}

impl SessionLock {
    /// The session this lock is for.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What `acquire` does when another process holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contended {
    /// Fail at once, naming the process that holds it.
    Fail,
    /// Block until it is released; `on_wait` is told the holder's pid first.
    Wait,
}

/// Locks session `name` in the sessions folder `dir`.
pub fn acquire(
    dir: &Path,
    name: &str,
    contended: Contended,
    on_wait: &mut dyn FnMut(&str),
) -> Result<SessionLock, SessionError> {
    validate_name(name)?;
    let mut locks = dir.as_os_str().to_owned();
    locks.push(".locks");
    let path = Path::new(&locks).join(name);
    let io = |what: &'static str, source: std::io::Error| SessionError::Lock {
        what,
        path: path.clone(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io("create the folder of", e))?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| io("open", e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let holder = holder(&mut file);
            match contended {
                Contended::Fail => {
                    return Err(SessionError::InUse {
                        name: name.to_string(),
                        holder,
                    })
                }
                Contended::Wait => {
                    on_wait(&format!(
                        "[waiting for session {name}: it is in use by {holder}]"
                    ));
                    file.lock().map_err(|e| io("wait for", e))?;
                }
            }
        }
        Err(TryLockError::Error(e)) => return Err(io("take", e)),
    }
    // Ours now: record who holds it, for a run that finds it taken. Only that: the lock is
    // held without it, so a full disk still lets the turn run (its save fails and says so).
    let pid = std::process::id().to_string();
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(pid.as_bytes()));
    Ok(SessionLock {
        name: name.to_string(),
        _file: file,
    })
}

impl Store {
    /// Locks session `name` for this run (see the module doc).
    pub fn lock(
        &self,
        name: &str,
        contended: Contended,
        on_wait: &mut dyn FnMut(&str),
    ) -> Result<SessionLock, SessionError> {
        acquire(self.dir(), name, contended, on_wait)
    }

    /// A new session named after the time, locked: two runs started in the same second
    /// would otherwise pick the same free name, and the second would be refused.
    pub fn lock_fresh(&self) -> Result<(String, SessionLock), SessionError> {
        self.lock_first_free(&Store::stamp())
    }

    /// `base`, else `base-2`, `base-3`, ...: the first with no folder whose lock is free. A
    /// burst of new sessions in one second (an editor's, a script's) takes as many names as it
    /// needs; an error other than a name in use ends the search, as every name would meet it.
    fn lock_first_free(&self, base: &str) -> Result<(String, SessionLock), SessionError> {
        let names = std::iter::once(base.to_string()).chain((2..).map(|n| format!("{base}-{n}")));
        for name in names.take(MAX_NAMES_A_SECOND) {
            if self.folder(&name).exists() {
                continue;
            }
            match acquire(self.dir(), &name, Contended::Fail, &mut |_| {}) {
                Ok(lock) => return Ok((name, lock)),
                Err(SessionError::InUse { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(SessionError::NoFreeName)
    }
}

impl Store {
    /// Locks `name` for a change made to a session by a run that does not use it (removing
    /// it, saving a copy under its name): a run holding it is reported as holding it.
    pub(super) fn hold(&self, name: &str, what: &'static str) -> Result<SessionLock, SessionError> {
        acquire(self.dir(), name, Contended::Fail, &mut |_| {}).map_err(|e| match e {
            SessionError::InUse { name, holder } => SessionError::Held { what, name, holder },
            e => e,
        })
    }

    /// Saves `session` under a name no session has yet (`/save NAME`): a session there is
    /// refused, not written over, and the name's lock is held while it is written, so that a
    /// run which took the name and has not saved yet keeps it (its own save would write over
    /// the copy).
    pub fn save_new(&self, session: &mut Session, redactor: &Redactor) -> Result<(), SessionError> {
        validate_name(&session.name)?;
        let name = session.name.clone();
        // A folder without a session file is a run's that has not saved yet: its log is there.
        let exists = || match self.folder(&name).exists() {
            true => Err(SessionError::Exists {
                name: name.clone(),
                dir: self.dir().to_path_buf(),
            }),
            false => Ok(()),
        };
        exists()?;
        let _held = self.hold(&name, "save over")?;
        // Saved by its holder between the look and the lock.
        exists()?;
        self.save(session, redactor)
    }
}

/// How many new sessions one second can name: a bound on the search, far past any burst.
const MAX_NAMES_A_SECOND: usize = 100_000;

/// "process 1234", from the lock file (the holder may not have written it yet).
fn holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.rewind().and_then(|()| file.read_to_string(&mut text));
    match text.trim().parse::<u32>() {
        Ok(pid) => format!("process {pid}"),
        Err(_) => "another process".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        // The sessions folder inside the temporary one: the locks folder beside it is then
        // removed with it.
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().join("sessions");
        let first = acquire(&dir, "dup", Contended::Fail, &mut |_| {}).unwrap();
        assert_eq!(first.name(), "dup");
        // Another open file description conflicts even within one process.
        let err = acquire(&dir, "dup", Contended::Fail, &mut |_| {}).unwrap_err();
        let me = std::process::id();
        assert!(
            err.to_string()
                .starts_with(&format!("session dup is in use by process {me}")),
            "{err}"
        );
        assert!(matches!(err, SessionError::InUse { .. }), "{err:?}");
        acquire(&dir, "other", Contended::Fail, &mut |_| {}).unwrap();
        drop(first);
        acquire(&dir, "dup", Contended::Fail, &mut |_| {}).unwrap();
    }

    #[test]
    fn a_copy_is_not_saved_over_a_session_nor_a_name_another_run_holds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("sessions"));
        let redactor = Redactor::default();
        let mut first = Session::new("kept", "demo");
        first.turns = 2;
        store.save(&mut first, &redactor).unwrap();
        let mut copy = Session::new("kept", "demo");
        let err = store.save_new(&mut copy, &redactor).unwrap_err();
        assert!(matches!(err, SessionError::Exists { .. }), "{err:?}");
        assert!(
            err.to_string().contains("agent-loop sessions rm kept"),
            "{err}"
        );
        assert_eq!(store.load("kept").unwrap().unwrap().turns, 2);
        // Another run has taken `new` and not saved yet: its save would write over the copy.
        let _other = acquire(store.dir(), "new", Contended::Fail, &mut |_| {}).unwrap();
        let mut copy = Session::new("new", "demo");
        let err = store.save_new(&mut copy, &redactor).unwrap_err();
        let me = std::process::id();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot save over session new: it is in use by process {me}; try again when \
                 that run ends"
            )
        );
        assert!(!store.folder("new").exists());
        let mut copy = Session::new("free", "demo");
        store.save_new(&mut copy, &redactor).unwrap();
        assert!(store.has("free"));
    }

    #[test]
    fn a_session_in_use_is_not_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("sessions"));
        store
            .save(&mut Session::new("busy", "demo"), &Redactor::default())
            .unwrap();
        let held = store.lock("busy", Contended::Fail, &mut |_| {}).unwrap();
        let err = store.remove("busy").unwrap_err();
        assert!(matches!(err, SessionError::Held { .. }), "{err:?}");
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        let me = std::process::id();
        assert!(
            err.to_string().starts_with(&format!(
                "cannot remove session busy: it is in use by process {me}"
            )),
            "{err}"
        );
        assert!(store.has("busy"));
        drop(held);
        store.remove("busy").unwrap();
        assert!(!store.folder("busy").exists());
    }

    #[test]
    fn the_folder_of_a_run_that_never_saved_is_removed_unless_the_run_goes_on() {
        // `/save NAME` refuses NAME while such a folder is there, and says to remove it.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("sessions"));
        let held = store.lock("left", Contended::Fail, &mut |_| {}).unwrap();
        std::fs::create_dir_all(store.folder("left")).unwrap();
        std::fs::write(store.folder("left").join("log.jsonl"), "{}\n").unwrap();
        let mut copy = Session::new("left", "demo");
        let err = store.save_new(&mut copy, &Redactor::default()).unwrap_err();
        assert!(
            err.to_string().contains("agent-loop sessions rm left"),
            "{err}"
        );
        let err = store.remove("left").unwrap_err();
        assert!(matches!(err, SessionError::Held { .. }), "{err:?}");
        assert!(store.folder("left").join("log.jsonl").is_file());
        drop(held);
        store.remove("left").unwrap();
        assert!(!store.folder("left").exists());
        store.save_new(&mut copy, &Redactor::default()).unwrap();
        assert!(store.has("left"));
        let err = store.remove("never").unwrap_err();
        assert!(matches!(err, SessionError::NoSuchSession { .. }), "{err:?}");
    }

    #[test]
    fn a_fresh_name_in_use_by_another_run_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("sessions"));
        let (first, _held) = store.lock_fresh().unwrap();
        // Another run that has not saved yet (no folder) holds `first`.
        let (second, _) = store.lock_fresh().unwrap();
        assert!(
            second.starts_with(&first) && second != first,
            "{first} {second}"
        );
    }

    #[test]
    fn a_burst_of_new_sessions_in_one_second_each_gets_a_name() {
        // More than the 99 the names once stopped at, all held (none saved yet), as an
        // editor's `session/new`s or a script's asks can be.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("sessions"));
        let held: Vec<_> = (0..150)
            .map(|_| store.lock_first_free("2026-12-07T04-00-00").unwrap())
            .collect();
        let names: std::collections::BTreeSet<_> = held.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), 150);
        assert!(names.contains("2026-12-07T04-00-00-150"), "{names:?}");
    }

    #[test]
    fn a_lock_that_cannot_be_made_ends_the_search_with_why() {
        // The locks folder's place is a file: no name could be locked, so the first error
        // is the answer, not a search through every name.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sessions.locks"), "").unwrap();
        let store = Store::new(dir.path().join("sessions"));
        let err = store.lock_first_free("2026-12-07T04-00-00").unwrap_err();
        assert!(matches!(err, SessionError::Lock { .. }), "{err:?}");
        assert!(err.to_string().contains("sessions.locks"), "{err}");
    }
}
