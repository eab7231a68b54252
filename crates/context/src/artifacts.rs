//! Artifacts: full tool outputs too long for the context, saved as files in the session's
//! folder so the model can read more of them with the read tool. The folder is made on the
//! first save: `artifacts/` in the session's folder
//! (`$XDG_DATA_HOME/agent-loop/sessions/NAME/artifacts/`).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::ContextError;

/// Where saved tool outputs go.
#[derive(Debug, Clone)]
pub struct Artifacts {
    dir: PathBuf,
}

impl Artifacts {
    /// Artifacts saved in `dir` (made when the first one is saved).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Artifacts { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves the full output of tool call `call_id` and returns the file's path.
    pub fn save(&self, call_id: &str, tool: &str, content: &str) -> Result<PathBuf, ContextError> {
        let io_error =
            |what: &'static str, path: &Path, source: std::io::Error| ContextError::Artifact {
                what,
                path: path.to_path_buf(),
                source,
            };
        crate::tools::private::create_dir(&self.dir)
            .map_err(|e| io_error("create the artifacts folder", &self.dir, e))?;
        let stem = format!("{}-{}", safe(call_id), safe(tool));
        // Call ids a backend chose could repeat; never overwrite an earlier artifact.
        for n in 1.. {
            let name = if n == 1 {
                format!("{stem}.txt")
            } else {
                format!("{stem}-{n}.txt")
            };
            let path = self.dir.join(name);
            match crate::tools::private::create_new(&path) {
                Ok(mut file) => {
                    file.write_all(content.as_bytes())
                        .map_err(|e| io_error("write the artifact", &path, e))?;
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_error("create the artifact", &path, e)),
            }
        }
        unreachable!("an unbounded loop returns")
    }
}

/// A file-name-safe form of an id or tool name.
fn safe(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "tool".into()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_on_demand_and_never_overwrites() {
        let tmp = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(tmp.path().join("s1/artifacts"));
        assert!(!artifacts.dir().exists());
        let first = artifacts.save("call_1", "bash", "one").unwrap();
        assert_eq!(first, tmp.path().join("s1/artifacts/call_1-bash.txt"));
        let second = artifacts.save("call_1", "bash", "two").unwrap();
        assert_eq!(second, tmp.path().join("s1/artifacts/call_1-bash-2.txt"));
        assert_eq!(std::fs::read_to_string(first).unwrap(), "one");
        assert_eq!(std::fs::read_to_string(second).unwrap(), "two");
    }

    #[test]
    fn odd_ids_make_safe_names() {
        assert_eq!(safe("../x y"), "___x_y");
        assert_eq!(safe(""), "tool");
    }

    #[test]
    fn an_unwritable_folder_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("file"), "").unwrap();
        let err = Artifacts::new(tmp.path().join("file/artifacts"))
            .save("c", "t", "x")
            .unwrap_err();
        assert!(err.to_string().contains("artifacts folder"), "{err}");
    }
}
