//! The shape of the source tree: no import cycles between files (scripts/layering.py says
//! what an import is), and no source file over 600 lines, tests aside.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_two_source_files_import_each_other() {
    let out = Command::new("python3")
        .arg(root().join("scripts/layering.py"))
        .arg(root().join("src"))
        .output()
        .expect("python3 runs scripts/layering.py");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(report.ends_with("0 cycles\n"), "{report}");
}

/// The checker itself finds a cycle when there is one.
#[test]
fn the_checker_sees_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    std::fs::write(src.join("b.rs"), "use super::a::A;\npub struct B;\n").unwrap();
    let out = Command::new("python3")
        .arg(root().join("scripts/layering.py"))
        .arg(src)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("a -> b") && report.contains("b -> a"),
        "{report}"
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
        .filter(|p| !p.ends_with("tests.rs"))
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            // Unit tests at the end of a file do not count.
            let code = text.split("\n#[cfg(test)]\nmod ").next().unwrap_or(&text);
            let n = code.lines().count();
            (n > 600).then(|| format!("{}: {n} lines", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "{long:#?}");
}
