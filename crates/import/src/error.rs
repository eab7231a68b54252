//! What can go wrong importing a spec, each failure naming the file and where in it, and the
//! kind the binary's exit code is decided from when it becomes the workspace's [`Error`].

use std::path::PathBuf;

use agent_loop_protocol::{Error, ErrorKind};

use crate::term::{printable, SyntaxError};

/// An import that failed. Messages are shown as they are: whatever comes from the spec is
/// escaped (`printable`), since a spec can hold any text.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The spec is not the Prolog subset this import reads.
    #[error("{}", printable(&format!("{spec}:{error}")))]
    Syntax {
        spec: String,
        #[source]
        error: SyntaxError,
    },
    /// A fact reads as Prolog but cannot be translated (a missing type, a value of the
    /// wrong sort).
    #[error("{}", printable(&format!("{spec}:{line}: {message}")))]
    Fact {
        spec: String,
        line: usize,
        message: String,
    },
    /// The output file exists and `--force` was not given.
    #[error("{} exists; pass --force to replace it", path.display())]
    Exists { path: PathBuf },
    /// Writing the output file failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ImportError {
    /// Bad input is a configuration error (exit 2); a failed write, I/O (exit 1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ImportError::Write { .. } => ErrorKind::Io,
            _ => ErrorKind::Config,
        }
    }
}

impl From<ImportError> for Error {
    fn from(e: ImportError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}
