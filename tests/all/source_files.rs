//! The shape of the source tree: no source file over 600 lines, its tests included, unsafe
//! code only in the process module (and scan), no string errors in the library crates, no
//! modules that import each other, and every shell script parses (the live ones run by hand
//! only, so nothing else would notice). The layering itself is the workspace's crate graph
//! (protocol, tools, builtins, parse, context, config, backends, mcp, core, import, the
//! binary), checked here against the manifests: an import against it does not compile.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub(crate) fn root() -> &'static Path {
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

/// Every `.rs` file under `dir` (also what `public_face` reads the front ends from).
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// No library crate returns a bare `String` as its error: each failure is a typed error that
/// says what failed and keeps the error underneath.
#[test]
fn no_library_crate_has_string_errors() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    let mut found = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let Some(start) = code.find("Result<") else {
                continue;
            };
            if code[start..].contains(", String>") {
                let name = path.strip_prefix(root()).unwrap().display();
                found.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// A crate's modules, each by its path (`backend::http`, the root as ""), with its file.
fn modules(src: &Path) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            (parts.join("::"), path)
        })
        .collect()
}

/// The modules of the same crate that `text` (module `this`) names by path: `crate::a::b`,
/// `super::a`, `self::a`, and each name of a `{...}` group after one. A module's own
/// ancestors and descendants are left out: a parent declares and re-exports its children.
fn named_modules(this: &str, text: &str, all: &BTreeSet<String>) -> BTreeSet<String> {
    let parent = |m: &str| {
        m.rsplit_once("::")
            .map_or(String::new(), |(p, _)| p.to_string())
    };
    let join = |base: &str, name: &str| match base {
        "" => name.to_string(),
        base => format!("{base}::{name}"),
    };
    let related = |a: &str, b: &str| {
        let below = |x: &str, y: &str| y.is_empty() || x == y || x.starts_with(&format!("{y}::"));
        below(a, b) || below(b, a)
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("::") {
        let before = &text[..i];
        let word_start = before
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        let mut base = match &before[word_start..] {
            "crate" => String::new(),
            "self" => this.to_string(),
            "super" if !before[..word_start].ends_with("::") => parent(this),
            _ => continue,
        };
        let mut rest = &text[i + 2..];
        while let Some(after) = rest.strip_prefix("super::") {
            base = parent(&base);
            rest = after;
        }
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .map(|item| item.trim())
                .collect(),
            None => vec![rest],
        };
        for name in names {
            let mut target = base.clone();
            for part in name.split("::") {
                let part = part
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next();
                let next = join(&target, part.unwrap_or(""));
                if !all.contains(&next) {
                    break;
                }
                target = next;
            }
            if !related(this, &target) {
                out.insert(target);
            }
        }
    }
    out
}

/// No two modules of a crate name each other, directly or through others: each file reads as
/// a layer of its own, and a change to one does not lead back to it.
#[test]
fn no_module_imports_lead_back_to_it() {
    let mut crates = vec![root().join("src"), root().join("scan/src")];
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        crates.push(entry.unwrap().path().join("src"));
    }
    let mut circles = Vec::new();
    for src in crates {
        let modules = modules(&src);
        let all: BTreeSet<String> = modules.iter().map(|(m, _)| m.clone()).collect();
        let mut edges = std::collections::BTreeMap::new();
        for (module, path) in &modules {
            let text = std::fs::read_to_string(path).unwrap();
            // Inline test modules see their file's module as `super`.
            let text = text.split("\n#[cfg(test)]\nmod ").next().unwrap_or("");
            let code: Vec<&str> = text
                .lines()
                .map(|l| l.split("//").next().unwrap())
                .collect();
            edges.insert(
                module.clone(),
                named_modules(module, &code.join("\n"), &all),
            );
        }
        // A module that reaches itself again through the edges is on a circle.
        for start in &all {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<Vec<String>> = vec![vec![start.clone()]];
            while let Some(path) = stack.pop() {
                let last = path.last().unwrap();
                for next in &edges[last] {
                    if next == start {
                        let shown = src.strip_prefix(root()).unwrap().display();
                        circles.push(format!("{shown}: {} -> {start}", path.join(" -> ")));
                    } else if seen.insert(next.clone()) {
                        let mut longer = path.clone();
                        longer.push(next.clone());
                        stack.push(longer);
                    }
                }
            }
        }
    }
    assert!(circles.is_empty(), "{circles:#?}");
}
