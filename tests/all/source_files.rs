//! The shape of the source tree: no source file over 600 lines, its tests included, unsafe
//! code only in the process module (and scan), and every shell script parses (the live ones
//! run by hand only, so nothing else would notice). The layering itself is the workspace's crate
//! graph (protocol, tools, builtins, parse, context, config, backends, mcp, core, import, the
//! binary), checked here against the manifests: an import against it does not compile.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace crates a crate's manifest depends on, sorted (the root package, `agent-loop`,
/// is the thin library and the binary).
fn workspace_deps(manifest: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(manifest)).unwrap();
    let deps = text.split("\n[dependencies]\n").nth(1).unwrap_or("");
    let deps = deps.split("\n[").next().unwrap_or("");
    let mut names: Vec<String> = deps
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(name, _)| name.trim().trim_end_matches(".workspace").to_string())
        .filter(|name| name == "agent-loop" || name.starts_with("agent-loop-"))
        .collect();
    names.sort();
    names
}

#[test]
fn the_crates_depend_downwards_only() {
    let layers: [(&str, &[&str]); 12] = [
        ("scan", &[]),
        ("crates/protocol", &[]),
        ("crates/tools", &["agent-loop-protocol", "agent-loop-scan"]),
        // The built-in tools beside the backends and the MCP client, not below them: a change
        // to one rebuilds neither.
        (
            "crates/builtins",
            &[
                "agent-loop-protocol",
                "agent-loop-skills",
                "agent-loop-tools",
            ],
        ),
        ("crates/parse", &["agent-loop-protocol", "agent-loop-scan"]),
        // The context manager: it knows the tools' specs, not how a backend is configured.
        (
            "crates/context",
            &[
                "agent-loop-protocol",
                "agent-loop-skills",
                "agent-loop-tools",
            ],
        ),
        // The configuration, below both of its readers: the backends and the MCP client.
        (
            "crates/config",
            &[
                "agent-loop-context",
                "agent-loop-parse",
                "agent-loop-protocol",
                "agent-loop-tools",
            ],
        ),
        (
            "crates/backends",
            &[
                "agent-loop-config",
                "agent-loop-context",
                "agent-loop-parse",
                "agent-loop-protocol",
                "agent-loop-tools",
            ],
        ),
        // The MCP client is a source of tools: it knows nothing of the agent loop, nor of the
        // backends.
        (
            "crates/mcp",
            &[
                "agent-loop-config",
                "agent-loop-protocol",
                "agent-loop-tools",
            ],
        ),
        // The loop and the façade: no front end, so not the binary's package.
        (
            "crates/core",
            &[
                "agent-loop-backends",
                "agent-loop-builtins",
                "agent-loop-config",
                "agent-loop-context",
                "agent-loop-mcp",
                "agent-loop-parse",
                "agent-loop-protocol",
                "agent-loop-skills",
                "agent-loop-tools",
            ],
        ),
        (
            "crates/import",
            &["agent-loop-protocol", "agent-loop-tools"],
        ),
        // Agent Skills: files and text only, so the context and the tools can both use it.
        ("crates/skills", &[]),
    ];
    for (dir, expected) in layers {
        assert_eq!(
            workspace_deps(&format!("{dir}/Cargo.toml")),
            expected,
            "{dir}"
        );
    }
    // Every crate of the workspace is in the table above, so a new one states its layer.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members = manifest
        .split("\nmembers = ")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    let listed: Vec<String> = layers.iter().map(|(d, _)| format!("\"{d}\"")).collect();
    assert_eq!(members, format!("[{}]", listed.join(", ")));
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

/// Each dependency with the features one kind of build turns on, from `cargo tree`.
fn features(edges: &str) -> std::collections::BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let out = std::process::Command::new(cargo)
        .current_dir(root())
        .args(["tree", "--locked", "--offline", "--workspace"])
        .args(["--prefix", "none", "-e", edges, "-f", "{p} {f}"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches(" (*)").to_string())
        .collect()
}

/// `cargo test` after `cargo build` or `cargo run` builds the dependencies again whose features
/// the tests' own dependencies change (and everything built on them): Cargo.toml turns those
/// features on for every build. A new dev-dependency that turns on another fails here.
#[test]
fn the_tests_build_on_the_dependencies_the_binary_built() {
    let plain = features("normal,build");
    let with_dev = features("normal,build,dev");
    let changed: Vec<&String> = plain
        .difference(&with_dev)
        .filter(|dep| !dep.starts_with("regex-syntax "))
        .collect();
    assert!(
        changed.is_empty(),
        "features the tests' dependencies add: {changed:#?}"
    );
}

/// The crates that must hold no unsafe code, and the one module that may (system calls the
/// libraries wrap none of): every other crate root denies it, and nothing else allows it.
/// `scan`'s byte loops are unsafe on purpose and are not checked here.
#[test]
fn unsafe_code_is_only_in_the_process_module() {
    let mut files = Vec::new();
    for dir in ["src", "crates"] {
        rust_files(&root().join(dir), &mut files);
    }
    let process = root().join("crates/tools/src/process");
    let mut wrong = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        let is_root = name.ends_with("src/lib.rs") || name == "src/main.rs";
        if is_root && !text.contains("#![deny(unsafe_code)]") {
            wrong.push(format!("{name}: no #![deny(unsafe_code)]"));
        }
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let allowed = name == "crates/tools/src/lib.rs"
                && code.contains("allow(unsafe_code)")
                && text.lines().nth(n + 1) == Some("pub mod process;");
            if code.contains("allow(unsafe_code)") && !allowed && !path.starts_with(&process) {
                wrong.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_shell_script_parses() {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(root().join("scripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    scripts.sort();
    assert!(
        scripts.iter().any(|p| p.ends_with("live-acp.sh")),
        "{scripts:?}"
    );
    for script in &scripts {
        let out = std::process::Command::new("bash")
            .arg("-n")
            .arg(script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{} does not parse: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
