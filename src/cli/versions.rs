//! The VERSION column of `agent-loop backends`: `PROGRAM --version`, first line, remembered per
//! program path and modification time in `$XDG_CACHE_HOME/agent-loop/versions.json`. Node and
//! Python CLIs take seconds to print their version (13–17 s for gemini, qwen, llm and aider
//! started together on two cores), so each is asked once per install, not on every listing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How long `--version` may take before the column says [`SLOW`]. The checks run side by side.
const VERSION_TIMEOUT: Duration = Duration::from_secs(15);

/// What the column says when `--version` did not answer in time: the install may be fine.
const SLOW: &str = "(slow to answer)";

/// One remembered answer: valid while the program's modification time and size are the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    modified_ns: u128,
    size: u64,
    version: String,
}

/// The cache file: answers by program path.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Cache {
    versions: BTreeMap<PathBuf, Entry>,
}

fn cache_path() -> Option<PathBuf> {
    agent_loop::process::xdg_home("XDG_CACHE_HOME", ".cache")
        .map(|d| d.join("agent-loop").join("versions.json"))
}

/// The program's modification time (following links: an npm `.bin` entry is a link to the
/// package's script) and size, which change when it is reinstalled.
fn stamp(program: &Path) -> Option<(u128, u64)> {
    let meta = std::fs::metadata(program).ok()?;
    let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((modified.as_nanos(), meta.len()))
}

fn load(path: &Path) -> Cache {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Written to a temporary file beside it and renamed, so a listing running at the same time
/// never reads half a file. A cache that cannot be written is only slower next time.
fn save(path: &Path, cache: &Cache) {
    let Some(dir) = path.parent() else { return };
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        serde_json::to_writer_pretty(&mut file, cache)?;
        file.persist(path)?;
        Ok(())
    };
    let _ = write();
}

/// The version of each program (`None`: no program, an empty cell), from the cache where the
/// program is unchanged, else asked side by side.
pub async fn versions(programs: &[Option<PathBuf>]) -> Vec<String> {
    let path = cache_path();
    let mut cache = path.as_deref().map(load).unwrap_or_default();
    let known = |program: &Path| {
        let (modified_ns, size) = stamp(program)?;
        cache
            .versions
            .get(program)
            .filter(|e| e.modified_ns == modified_ns && e.size == size)
            .map(|e| e.version.clone())
    };
    let cached: Vec<Option<String>> = programs
        .iter()
        .map(|p| p.as_deref().and_then(known))
        .collect();
    let asked = futures_util::future::join_all(programs.iter().zip(&cached).map(
        |(program, cached)| async move {
            match (program, cached) {
                (Some(p), None) => Some(ask(p).await),
                _ => None,
            }
        },
    ))
    .await;
    let mut changed = false;
    for (program, answer) in programs.iter().zip(&asked) {
        if let (Some(p), Some(Ok(version))) = (program, answer) {
            if let Some((modified_ns, size)) = stamp(p) {
                let entry = Entry {
                    modified_ns,
                    size,
                    version: version.clone(),
                };
                changed |= cache.versions.insert(p.clone(), entry.clone()) != Some(entry);
            }
        }
    }
    if changed {
        if let Some(path) = &path {
            save(path, &cache);
        }
    }
    programs
        .iter()
        .zip(cached)
        .zip(asked)
        .map(
            |((program, cached), asked)| match (program, cached, asked) {
                (None, _, _) => String::new(),
                (Some(_), Some(version), _) => version,
                (Some(_), None, Some(Ok(version) | Err(version))) => version,
                (Some(_), None, None) => String::new(),
            },
        )
        .collect()
}

/// The first line `PROGRAM --version` prints; `Err` with the cell's text when it did not
/// answer (not remembered: it may answer next time).
async fn ask(program: &Path) -> Result<String, String> {
    let mut command = tokio::process::Command::new(program);
    command
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // Like every child: no terminal of ours to write to, and its group killed when done (or
    // by the watchdog, if agent-loop is killed first).
    agent_loop::process::isolate(&mut command);
    let child = command.spawn().map_err(|e| format!("(cannot run: {e})"))?;
    let _group = agent_loop::process::GroupGuard::new(child.id());
    match tokio::time::timeout(VERSION_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(out)) => {
            let text = agent_loop::text::strip_ansi(if out.stdout.is_empty() {
                &out.stderr
            } else {
                &out.stdout
            });
            Ok(text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("")
                .to_string())
        }
        Ok(Err(e)) => Err(format!("(cannot run: {e})")),
        Err(_) => Err(SLOW.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_file_round_trips_and_a_broken_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/versions.json");
        let mut cache = Cache::default();
        cache.versions.insert(
            "/bin/x".into(),
            Entry {
                modified_ns: 1,
                size: 2,
                version: "x 1.0".into(),
            },
        );
        save(&path, &cache);
        assert_eq!(load(&path).versions, cache.versions);
        std::fs::write(&path, "{not json").unwrap();
        assert!(load(&path).versions.is_empty());
    }
}
