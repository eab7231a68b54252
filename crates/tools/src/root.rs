//! Confinement of the file tools (read, write, edit, ls, grep) to one folder, `--root`. Paths
//! are resolved the way the kernel would follow them, `..` and symbolic links included, also
//! for files that do not exist yet, and anything that lands outside the root is refused.
//! The checked path is then opened by beneath.rs, which follows no link, so nothing swapped
//! in after the check can lead outside. bash is not confined: it can do anything the user can, which is why it asks first.

use std::path::{Component, Path, PathBuf};

use crate::error::{FileError, RootError};

/// Where the file tools may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// `--root /`: no confinement.
    Anywhere,
    /// This folder (canonical) and everything below it.
    Dir(PathBuf),
}

impl Root {
    /// The root for `dir`, which must exist; `/` means anywhere.
    pub fn new(dir: &Path) -> Result<Root, RootError> {
        let canonical = std::fs::canonicalize(dir).map_err(|source| RootError::Unreadable {
            dir: dir.to_path_buf(),
            source,
        })?;
        if !canonical.is_dir() {
            return Err(RootError::NotFolder {
                dir: dir.to_path_buf(),
            });
        }
        Ok(if canonical.parent().is_none() {
            Root::Anywhere
        } else {
            Root::Dir(canonical)
        })
    }

    /// The folder files are opened beneath (`/` for anywhere).
    pub fn dir(&self) -> &Path {
        match self {
            Root::Anywhere => Path::new("/"),
            Root::Dir(dir) => dir,
        }
    }

    /// Resolves `path` (absolute) and checks it is inside the root; the error is the message
    /// for the model.
    pub fn check(&self, path: &Path, shown: &str) -> Result<PathBuf, FileError> {
        let resolved = resolve(path, shown)?;
        let Root::Dir(root) = self else {
            return Ok(resolved);
        };
        if resolved.starts_with(root) {
            Ok(resolved)
        } else {
            Err(FileError::Outside {
                shown: shown.to_string(),
                resolved,
                root: root.clone(),
            })
        }
    }
}

/// Follows `path` component by component: existing parts are canonicalised (symbolic links
/// followed), missing parts are taken literally, `..` goes up from what was resolved so far.
fn resolve(path: &Path, shown: &str) -> Result<PathBuf, FileError> {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => out = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                let next = out.join(name);
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) => {
                        out = std::fs::canonicalize(&next).map_err(|_| {
                            let shown = shown.to_string();
                            if meta.file_type().is_symlink() {
                                FileError::DanglingLink { shown, link: next }
                            } else {
                                FileError::Unresolvable { shown, part: next }
                            }
                        })?;
                    }
                    // Does not exist (yet): nothing to follow below this point but names.
                    Err(_) => out = next,
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_outside_dotdot_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root_dir = base.join("root");
        std::fs::create_dir_all(root_dir.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::os::unix::fs::symlink(base.join("outside"), root_dir.join("escape")).unwrap();
        std::os::unix::fs::symlink(base.join("outside/none"), root_dir.join("dangling")).unwrap();
        std::os::unix::fs::symlink(root_dir.join("sub"), root_dir.join("inner")).unwrap();
        let root = Root::new(&root_dir).unwrap();
        let ok = |p: &str| root.check(&root_dir.join(p), p);
        let outside = |p: &str| matches!(ok(p), Err(FileError::Outside { .. }));
        assert_eq!(ok("sub/new.txt").unwrap(), root_dir.join("sub/new.txt"));
        assert_eq!(ok("new/dir/../file").unwrap(), root_dir.join("new/file"));
        assert_eq!(ok("inner/x").unwrap(), root_dir.join("sub/x"));
        assert!(outside("../outside/x"));
        assert!(outside("missing/../../outside"));
        assert!(outside("escape/secret"));
        assert!(ok("dangling")
            .unwrap_err()
            .to_string()
            .contains("symbolic link to nothing"));
        assert!(root
            .check(Path::new("/etc/passwd"), "/etc/passwd")
            .unwrap_err()
            .to_string()
            .contains("outside the folder"));
        assert_eq!(Root::new(Path::new("/")).unwrap(), Root::Anywhere);
        assert!(Root::Anywhere.check(Path::new("/etc/passwd"), "x").is_ok());
    }
}
