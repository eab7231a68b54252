//! `agent-loop import-spec`: reads the facts of a UnifyWeaver agent-loop spec (Prolog:
//! `agent_backend/2`, `tool_spec/2`, `loop_config/1`) and writes the equivalent
//! `backends.toml` text. `term` parses the Prolog subset, `mapping` turns the facts into
//! tables (`backends` the `agent_backend` facts, `regex` their patterns' groups); whatever has no equivalent becomes a comment in the output and a warning for the
//! front end to show.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

mod backends;
mod error;
mod mapping;
mod regex;
pub mod term;
mod translator;

pub use error::ImportError;
pub use mapping::Imported;
pub use regex::name_groups;

// The layers below at the paths the modules name them by.
use agent_loop_protocol::shown;

/// Translates the spec `text`, reported under `source` in messages.
pub fn import(text: &str, source: &str) -> Result<Imported, ImportError> {
    let clauses = term::parse(text).map_err(|error| ImportError::Syntax {
        spec: source.to_string(),
        error,
    })?;
    mapping::translate(&clauses, source)
}

/// Writes the translation to `path` atomically (a temporary file renamed over it); an
/// existing file is an error unless `force`.
pub fn write(path: &std::path::Path, text: &str, force: bool) -> Result<(), ImportError> {
    if !force && path.exists() {
        return Err(ImportError::Exists {
            path: path.to_path_buf(),
        });
    }
    agent_loop_tools::write_atomic(path, text.as_bytes()).map_err(|source| ImportError::Write {
        path: path.to_path_buf(),
        source,
    })
}
