//! The shape of the source tree: no source file over 600 lines, its tests included. The layering
//! itself is the workspace's crate graph (protocol, tools, backends, the library, the
//! binary): an import against it does not compile.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace crates each crate's manifest depends on (the root package is the library
/// and the binary).
fn workspace_deps(manifest: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(manifest)).unwrap();
    let deps = text.split("\n[dependencies]\n").nth(1).unwrap_or("");
    let deps = deps.split("\n[").next().unwrap_or("");
    deps.lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(name, _)| name.trim().to_string())
        .filter(|name| name.starts_with("agent-loop-"))
        .collect()
}

#[test]
fn the_crates_depend_downwards_only() {
    assert_eq!(
        workspace_deps("crates/protocol/Cargo.toml"),
        Vec::<String>::new()
    );
    assert_eq!(
        workspace_deps("crates/tools/Cargo.toml"),
        ["agent-loop-protocol", "agent-loop-scan"]
    );
    assert_eq!(
        workspace_deps("crates/backends/Cargo.toml"),
        ["agent-loop-protocol", "agent-loop-scan", "agent-loop-tools"]
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_600_lines() {
    let mut files = Vec::new();
    for dir in ["src", "crates", "scan/src"] {
        rust_files(&root().join(dir), &mut files);
    }
    let long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            (n > 600).then(|| format!("{}: {n} lines", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "{long:#?}");
}
