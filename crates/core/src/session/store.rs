//! Reading, writing, listing and removing session folders.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::Redactor;
use super::SessionError;
use crate::context::Conversation;
use crate::parse::{ByBackend, Totals};

const SESSION_FILE: &str = "session.json";
const FORMAT_VERSION: u32 = 1;

/// One saved conversation and what is known about it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    pub version: u32,
    pub name: String,
    /// The session's id in logs (`session_id`): random, kept in the file, never reused.
    /// Files from before it existed get one when they are read.
    #[serde(default = "super::new_id")]
    pub id: String,
    pub backend: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Unix time in milliseconds.
    pub created: u64,
    pub updated: u64,
    pub turns: u32,
    #[serde(default)]
    pub usage: Totals,
    /// `usage` by backend name; empty in files from before it was kept.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub usage_by_backend: ByBackend,
    /// The messages, in the file; empty in a chat's own session (`Chat::session`), whose
    /// conversation is the chat's (`Chat::messages`).
    pub conversation: Conversation,
    /// The context mode it ran with (`sliding:4`), restored unless a flag says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The user's system prompt it ran with, restored unless a flag names another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<crate::context::SystemPrompt>,
    /// The tools the user answered "always" for, which keep running without asking.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub always: Vec<String>,
    /// The front end that started the session, when it marks its own (`mcp serve`, which
    /// continues only the sessions it started): none for the others' and for older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
    /// The folder it last ran in: a run that continues it from another says so, for its
    /// conversation is about that folder's files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<std::path::PathBuf>,
    /// The agents' own session ids (ACP agents), by backend name, resumed by a later run.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub agent_sessions: std::collections::BTreeMap<String, String>,
    /// How many messages of the conversation each of those sessions held when last kept: a
    /// session loaded later is given the ones after, which other backends had.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub agent_seen: std::collections::BTreeMap<String, usize>,
}

impl Session {
    pub fn new(name: &str, backend: &str) -> Self {
        let now = now();
        Session {
            version: FORMAT_VERSION,
            name: name.to_string(),
            id: super::new_id(),
            backend: backend.to_string(),
            model: None,
            created: now,
            updated: now,
            turns: 0,
            usage: Totals::default(),
            usage_by_backend: Default::default(),
            conversation: Conversation::new(),
            context: None,
            system: None,
            always: Vec::new(),
            started_by: None,
            folder: None,
            agent_sessions: Default::default(),
            agent_seen: Default::default(),
        }
    }
}

/// What a listing shows of a saved session: everything but its conversation. Each file is
/// read as a load reads it (so a row is a session that loads), one at a time, and its
/// conversation dropped at once: listing thousands of long sessions (or `--continue` finding
/// the newest) holds one of them in memory, not all.
#[derive(Debug, Clone)]
pub struct Summary {
    pub name: String,
    pub backend: String,
    pub model: Option<String>,
    /// Unix time in milliseconds.
    pub created: u64,
    pub updated: u64,
    pub turns: u32,
    pub usage: Totals,
}

impl From<Session> for Summary {
    fn from(s: Session) -> Summary {
        Summary {
            name: s.name,
            backend: s.backend,
            model: s.model,
            created: s.created,
            updated: s.updated,
            turns: s.turns,
            usage: s.usage,
        }
    }
}

/// A row of `agent-loop sessions`: a readable session, or a folder whose file is broken.
#[derive(Debug)]
pub enum Listing {
    Ok(Box<Summary>),
    Broken {
        name: String,
        path: PathBuf,
        error: String,
    },
}

/// The folder that holds every session.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// Session names become folder names: keep them to a safe alphabet.
pub fn validate_name(name: &str) -> Result<(), SessionError> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(SessionError::InvalidName {
            name: name.to_string(),
        })
    }
}

/// Unix time in milliseconds: seconds would tie sessions used in the same second.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Store {
    /// The store in `dir`. Nothing is read yet: a start costs the same however many sessions
    /// are kept, and what a save cut short left in a folder waits for that session's load.
    pub fn new(dir: PathBuf) -> Self {
        Store { dir }
    }

    /// `$XDG_DATA_HOME/agent-loop/sessions`, or `~/.local/share/agent-loop/sessions`.
    pub fn default_dir() -> Option<PathBuf> {
        crate::dirs::xdg_home("XDG_DATA_HOME", ".local/share")
            .map(|d| d.join("agent-loop").join("sessions"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The session's own folder (its log and artifacts live there too).
    pub fn folder(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.folder(name).join(SESSION_FILE)
    }

    /// Whether a session called `name` has been saved.
    pub fn has(&self, name: &str) -> bool {
        self.file(name).is_file()
    }

    /// The session in folder `name` (whatever name its file says: a copied folder is its own
    /// session): `Ok(None)` if there is none, an error naming the file if
    /// it cannot be read or parsed (then nothing in its folder is touched). A save killed
    /// before its rename (a dead process's whole temporary file, newer than the saved file or
    /// with none) is the session; only [`Store::load_locked`] puts it in place.
    pub fn load(&self, name: &str) -> Result<Option<Session>, SessionError> {
        self.load_tidying(name, false)
    }

    /// [`Store::load`] by the holder of the session's lock, who alone may change its folder:
    /// the recovered save is renamed into place and the other leftovers removed.
    pub fn load_locked(&self, name: &str) -> Result<Option<Session>, SessionError> {
        self.load_tidying(name, true)
    }

    fn load_tidying(&self, name: &str, tidy: bool) -> Result<Option<Session>, SessionError> {
        validate_name(name)?;
        let path = self.file(name);
        let saved = match std::fs::read_to_string(&path) {
            Ok(text) => Some(
                serde_json::from_str(&text)
                    .map_err(|source| SessionError::Invalid { path, source })?,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(SessionError::Read { path, source }),
        };
        // A folder copied under another name (a fork, a restored backup) is its own session:
        // its name is the folder's, so it is saved there, not into the one it was copied from
        // (whose later turns it would overwrite), and its id is new, as `/save NAME`'s is.
        Ok(self.recover(name, saved, tidy).map(|mut session| {
            if session.name != name {
                session.name = name.to_string();
                session.id = super::new_id();
            }
            session
        }))
    }

    /// The newest whole save among the saved file and the dead processes' temporary files;
    /// with `tidy`, put in place, every other such file removed.
    fn recover(&self, name: &str, saved: Option<Session>, tidy: bool) -> Option<Session> {
        let left = crate::tools::private::leftovers(&self.folder(name), SESSION_FILE);
        let newest = left
            .iter()
            .filter_map(|path| {
                let text = std::fs::read_to_string(path).ok()?;
                let session: Session = serde_json::from_str(&text).ok()?;
                (session.name == name).then_some((session, path))
            })
            .max_by_key(|(s, _)| s.updated)
            .filter(|(s, _)| saved.as_ref().is_none_or(|saved| s.updated > saved.updated));
        if tidy {
            if let Some((_, path)) = &newest {
                // Should the rename fail, the file stays, still the newest save.
                let _ = std::fs::rename(path, self.file(name));
            }
            for path in &left {
                if newest.as_ref().is_none_or(|(_, kept)| kept != &path) {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        newest.map(|(s, _)| s).or(saved)
    }

    /// Whether the session's folder holds something (a log, artifacts, a broken file) but no
    /// saved session: what a run stopped before its first save leaves.
    pub fn unsaved_folder(&self, name: &str) -> bool {
        self.folder(name).is_dir() && !self.file(name).exists()
    }

    /// The folder a new session asked for as `name` goes to: `name` itself when it holds no
    /// session file (a run stopped before its first save: its log is kept and appended to),
    /// else a free name beside it.
    pub fn name_for_new(&self, name: &str) -> String {
        if self.file(name).exists() {
            self.free_name(name)
        } else {
            name.to_string()
        }
    }

    /// Writes the session atomically (a temporary file, then a rename), stamping `updated`,
    /// with secrets redacted.
    pub fn save(&self, session: &mut Session, redactor: &Redactor) -> Result<(), SessionError> {
        validate_name(&session.name)?;
        session.updated = now();
        let path = self.file(&session.name);
        let json =
            serde_json::to_string_pretty(session).map_err(|source| SessionError::Serialize {
                name: session.name.clone(),
                source,
            })?;
        let folder = self.folder(&session.name);
        crate::tools::private::create_dir(&folder)
            .and_then(|()| {
                crate::tools::private::write_atomic(&path, redactor.redact(&json).as_bytes())
            })
            .map_err(|source| SessionError::Save { path, source })
    }

    /// Every session folder, newest first; broken files are listed, not skipped.
    pub fn list(&self) -> Vec<Listing> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut rows: Vec<Listing> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().join(SESSION_FILE).is_file())
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                match self.load(&name) {
                    Ok(Some(s)) => Listing::Ok(Box::new(Summary::from(s))),
                    Ok(None) => Listing::Broken {
                        path: self.file(&name),
                        name,
                        error: "vanished".into(),
                    },
                    Err(err) => Listing::Broken {
                        path: self.file(&name),
                        name,
                        error: err.to_string(),
                    },
                }
            })
            .collect();
        rows.sort_by_key(|r| match r {
            Listing::Ok(s) => std::cmp::Reverse(s.updated),
            Listing::Broken { .. } => std::cmp::Reverse(0),
        });
        rows
    }

    /// The name of the most recently used readable session.
    pub fn most_recent(&self) -> Option<String> {
        self.list().into_iter().find_map(|r| match r {
            Listing::Ok(s) => Some(s.name),
            Listing::Broken { .. } => None,
        })
    }

    /// Deletes a session's folder (its log and artifacts too), unless a run uses it: that
    /// run would write it back at its next save, without its log. A folder with no session
    /// file goes too: a run's that stopped before its first save, which keeps its name from
    /// `/save NAME` (whose refusal points here).
    pub fn remove(&self, name: &str) -> Result<(), SessionError> {
        validate_name(name)?;
        let folder = self.folder(name);
        if !self.file(name).is_file() && !folder.is_dir() {
            return Err(SessionError::NoSuchSession {
                name: name.to_string(),
                dir: self.dir.clone(),
            });
        }
        // Held while the folder goes: a run waiting for it (`--wait-session`) then starts
        // afresh. The lock file stays, as another run may have it open.
        let _held = self.hold(name, "remove")?;
        std::fs::remove_dir_all(&folder).map_err(|source| SessionError::Remove {
            path: folder,
            source,
        })
    }

    /// `base` if no session folder has that name yet, else `base-2`, `base-3`, ...
    pub fn free_name(&self, base: &str) -> String {
        if !self.folder(base).exists() {
            return base.to_string();
        }
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|n| !self.folder(n).exists())
            .expect("unbounded")
    }

    /// A new name from the current time, e.g. `2026-11-22T03-15-00`.
    pub fn fresh_name(&self) -> String {
        self.free_name(&Store::stamp())
    }

    /// The current time as a session name, e.g. `2026-11-22T03-15-00`.
    pub(super) fn stamp() -> String {
        let stamp = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        stamp.trim_end_matches('Z').replace(':', "-")
    }
}

/// Unix milliseconds as `2026-11-22 03:15` (UTC) for listings.
pub fn format_time(unix_ms: u64) -> String {
    let t = UNIX_EPOCH + std::time::Duration::from_millis(unix_ms);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    s.get(..16).unwrap_or(&s).replace('T', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Message;

    #[test]
    fn save_load_list_remove() {
        // The sessions folder inside the temporary one: the locks folder a removal takes is
        // beside it, and goes with it.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("sessions");
        std::fs::create_dir(&dir).unwrap();
        let store = Store::new(dir.clone());
        let mut s = Session::new("work", "demo");
        s.conversation.push(Message::user("hi"));
        store.save(&mut s, &Redactor::default()).unwrap();
        let back = store.load("work").unwrap().unwrap();
        assert_eq!(back.conversation.messages, s.conversation.messages);
        assert_eq!(store.most_recent().as_deref(), Some("work"));
        match &store.list()[..] {
            [Listing::Ok(row)] => assert_eq!((row.name.as_str(), row.updated), ("work", s.updated)),
            rows => panic!("{rows:?}"),
        }
        // A file that does not load (its conversation not one) is not a session a listing
        // may offer, however new.
        std::fs::create_dir(dir.join("bare")).unwrap();
        let bare = serde_json::json!({"version": 1, "name": "bare", "backend": "demo",
            "created": 1, "updated": u64::MAX, "turns": 1, "conversation": {"messages": "x"}});
        std::fs::write(dir.join("bare/session.json"), bare.to_string()).unwrap();
        assert_eq!(store.most_recent().as_deref(), Some("work"));
        std::fs::remove_dir_all(dir.join("bare")).unwrap();
        assert_eq!(store.free_name("work"), "work-2");
        store.remove("work").unwrap();
        assert!(store.load("work").unwrap().is_none());
        let err = store.remove("work").unwrap_err();
        assert!(
            err.to_string().starts_with("no session named `work`"),
            "{err}"
        );
        assert_eq!(err.kind(), crate::ErrorKind::Config);
    }

    #[test]
    fn broken_files_are_reported_and_listed_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        std::fs::create_dir_all(dir.path().join("bad")).unwrap();
        std::fs::write(dir.path().join("bad/session.json"), "{ not json").unwrap();
        let err = store.load("bad").unwrap_err();
        assert!(
            err.to_string().contains("bad/session.json is not valid"),
            "{err}"
        );
        // The parser's error is the source, for a front end that shows the chain.
        let source = std::error::Error::source(&err).expect("the JSON error");
        assert!(source.is::<serde_json::Error>(), "{source:?}");
        assert!(matches!(&store.list()[0], Listing::Broken { name, .. } if name == "bad"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("bad/session.json")).unwrap(),
            "{ not json"
        );
    }

    #[test]
    fn a_killed_first_save_is_resumed_not_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        // A run stopped during its first turn: a log, no session file.
        std::fs::create_dir_all(dir.path().join("fresh")).unwrap();
        std::fs::write(dir.path().join("fresh/log.jsonl"), "{}\n").unwrap();
        assert!(store.load("fresh").unwrap().is_none());
        assert!(store.unsaved_folder("fresh"));
        assert_eq!(store.name_for_new("fresh"), "fresh");
        // Stopped between writing the temporary file and renaming it: that file is the save.
        let mut s = Session::new("fresh", "demo");
        s.turns = 1;
        let tmp = dir.path().join("fresh/.session.json.agent-loop-4242.tmp");
        std::fs::write(&tmp, serde_json::to_string(&s).unwrap()).unwrap();
        std::fs::write(
            dir.path().join("fresh/.session.json.agent-loop-7.tmp"),
            "{ half",
        )
        .unwrap();
        assert_eq!(store.load_locked("fresh").unwrap().unwrap().turns, 1);
        assert!(!tmp.exists() && dir.path().join("fresh/session.json").is_file());
        assert_eq!(store.name_for_new("fresh"), "fresh-2");
    }

    #[test]
    fn a_whole_save_killed_before_its_rename_wins_when_newer_and_leftovers_go() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        let mut s = Session::new("work", "demo");
        s.turns = 1;
        store.save(&mut s, &Redactor::default()).unwrap();
        // Process 999999999 (never running) wrote turn 2 and died before renaming it.
        let tmp = |pid: u32| {
            dir.path()
                .join(format!("work/.session.json.agent-loop-{pid}.tmp"))
        };
        let mut newer = s.clone();
        newer.turns = 2;
        newer.updated += 1;
        std::fs::write(tmp(999_999_999), serde_json::to_string(&newer).unwrap()).unwrap();
        std::fs::write(tmp(999_999_998), "{ half").unwrap();
        // Read without the lock: the newest save, and nothing in the folder changed.
        assert_eq!(store.load("work").unwrap().unwrap().turns, 2);
        assert!(tmp(999_999_999).exists() && tmp(999_999_998).exists());
        assert_eq!(store.list().len(), 1);
        // By the lock's holder: put in place, the leftovers removed.
        assert_eq!(store.load_locked("work").unwrap().unwrap().turns, 2);
        assert!(!tmp(999_999_999).exists() && !tmp(999_999_998).exists());
        assert_eq!(store.load("work").unwrap().unwrap().turns, 2);
        // An older leftover loses to the saved file, and is removed.
        std::fs::write(tmp(999_999_997), serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(store.load_locked("work").unwrap().unwrap().turns, 2);
        assert!(!tmp(999_999_997).exists());
        // A broken saved file is an error, and its folder is left as it is.
        std::fs::write(dir.path().join("work/session.json"), "{ not json").unwrap();
        std::fs::write(tmp(999_999_996), serde_json::to_string(&newer).unwrap()).unwrap();
        assert!(store.load_locked("work").is_err());
        assert!(tmp(999_999_996).exists());
    }

    #[test]
    fn names_are_checked() {
        for bad in ["", "../x", "a/b", ".hidden", "sp ace"] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
        validate_name("my-session_2.1").unwrap();
    }

    #[test]
    fn times_format_for_people() {
        assert_eq!(format_time(0), "1970-01-01 00:00");
    }
}
