//! The program a backend's `{self}` command names: the agent-loop program, which answers
//! `demo-agent` (the built-in `demo` backend). The `agent-loop` binary says at start that it
//! is that program; a program that embeds the library is not, unless it serves `demo-agent`
//! itself and says so: starting it with an argument it does not know would run it again for
//! the wrong reason (a bot starting a second copy of itself). Otherwise `{self}` is the
//! `agent-loop` found on PATH.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::BackendError;

static IS_AGENT_LOOP: AtomicBool = AtomicBool::new(false);

/// Says that this process's own executable answers `demo-agent` as the `agent-loop` binary
/// does: a backend whose command is `{self}` runs it.
pub fn this_program_serves_demo_agent() {
    IS_AGENT_LOOP.store(true, Ordering::Relaxed);
}

/// What `{self}` runs for `backend`; `path` is the PATH it is looked up on otherwise.
pub fn resolve(backend: &str, path: Option<&std::ffi::OsStr>) -> Result<PathBuf, BackendError> {
    if IS_AGENT_LOOP.load(Ordering::Relaxed) {
        return std::env::current_exe().map_err(|source| BackendError::OwnExecutable {
            backend: backend.to_string(),
            source,
        });
    }
    // Absolute folders only: a relative one would be looked up in the project's folder,
    // where a cloned repository could hold an `agent-loop` of its own.
    let folders: Vec<PathBuf> = path
        .map(|p| {
            std::env::split_paths(p)
                .filter(|d| d.is_absolute())
                .collect()
        })
        .unwrap_or_default();
    let path = std::env::join_paths(folders).ok();
    which::which_in("agent-loop", path, "/").map_err(|_| BackendError::NotSelf {
        backend: backend.to_string(),
    })
}
