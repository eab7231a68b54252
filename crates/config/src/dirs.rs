//! Where agent-loop keeps its files: the XDG base folders, which the configuration (config
//! folder), the sessions (data folder) and the version cache (cache folder) all start from.

use std::path::PathBuf;

/// An XDG base folder: `$VAR` when it is an absolute path, else `$HOME/FALLBACK`.
pub fn xdg_home(var: &str, fallback: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(fallback)))
}
