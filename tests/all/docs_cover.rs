//! The documentation against the program: every flag and subcommand `--help` lists, every
//! setting `agent-loop config` lists, and every command the REPL's `/help` lists, appears in
//! README.md or docs/*.md; and every link between those pages leads to a file that exists
//! and, with a `#fragment`, to a heading in it.

use std::collections::BTreeSet;
use std::path::Path;

use regex::Regex;

use crate::common::Workspace;
use crate::readme::pages;
use crate::repl::repl;

/// Every page's text, joined: what "appears in the docs" searches.
fn all_docs() -> String {
    pages().into_iter().map(|(_, text)| text).collect()
}

/// The lines of the block of `--help` that starts with `heading` (`Options:`), up to the next
/// line that is not indented.
fn section<'a>(help: &'a str, heading: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

#[test]
fn every_flag_and_subcommand_of_help_is_documented() {
    let ws = Workspace::new();
    let out = ws.cmd(&[]).arg("--help").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8(out.stdout).unwrap();
    let docs = all_docs();

    let options = section(&help, "Options:").join("\n");
    let long = Regex::new(r"--[a-z][a-z-]+").unwrap();
    let flags: BTreeSet<&str> = long.find_iter(&options).map(|m| m.as_str()).collect();
    for must in ["--backend", "--context", "--model", "--help", "--version"] {
        assert!(flags.contains(must), "{must} not found in --help:\n{help}");
    }
    let missing: Vec<&&str> = flags
        .iter()
        .filter(|flag| !docs.contains(&format!("`{flag}")) && !docs.contains(&format!(", {flag}")))
        .collect();
    assert!(
        missing.is_empty(),
        "flags of --help missing from the docs: {missing:?}"
    );

    // Short forms, as in the flag table: `-m, --model`.
    let pair = Regex::new(r"(?m)^\s+(-[A-Za-z]), (--[a-z][a-z-]+)").unwrap();
    let pairs: Vec<String> = pair
        .captures_iter(&options)
        .map(|c| format!("{}, {}", &c[1], &c[2]))
        .collect();
    assert!(pairs.iter().any(|p| p == "-m, --model"), "{pairs:?}");
    let missing: Vec<&String> = pairs
        .iter()
        .filter(|p| !docs.contains(p.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "short flags missing from the docs: {missing:?}"
    );

    let name = Regex::new(r"^  ([a-z][a-z-]*)\s").unwrap();
    let subcommands: Vec<&str> = section(&help, "Commands:")
        .into_iter()
        .filter_map(|l| name.captures(l).map(|c| c.get(1).unwrap().as_str()))
        .filter(|c| *c != "help")
        .collect();
    assert!(subcommands.contains(&"doctor"), "{help}");
    let missing: Vec<&&str> = subcommands
        .iter()
        .filter(|c| !docs.contains(&format!("agent-loop {c}")))
        .collect();
    assert!(
        missing.is_empty(),
        "subcommands missing from the docs: {missing:?}"
    );
}

#[test]
fn short_help_fits_a_phone_screen_and_long_help_keeps_everything() {
    let ws = Workspace::new();
    // A phone's terminal is 50 columns or so; clap wraps to COLUMNS.
    for columns in ["50", "100"] {
        let short = ws
            .cmd(&[])
            .arg("-h")
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        let short = String::from_utf8(short.stdout).unwrap();
        let lines = short.lines().count();
        assert!(lines <= 40, "{lines} lines at {columns} columns:\n{short}");
    }
    let short = ws.cmd(&[]).arg("-h").output().unwrap();
    assert!(short.status.success(), "{short:?}");
    let short = String::from_utf8(short.stdout).unwrap();
    for must in [
        "Usage:",
        "--backend",
        "--yes",
        "--model",
        "agent-loop --help",
        "docs/",
    ] {
        assert!(short.contains(must), "{must} not in -h:\n{short}");
    }
    let options = section(&short, "Options:");
    let flags = options
        .iter()
        .filter(|l| l.trim_start().starts_with('-'))
        .count();
    // The ten most used flags, and -h and -V.
    assert_eq!(flags, 12, "{short}");
    assert!(!short.contains("--no-save"), "{short}");

    let long = ws.cmd(&[]).arg("--help").output().unwrap();
    let long = String::from_utf8(long.stdout).unwrap();
    for must in [
        "--no-save",
        "--tail",
        "--max-iterations",
        "Examples:",
        "Exit codes:",
    ] {
        assert!(long.contains(must), "{must} not in --help:\n{long}");
    }
    assert!(!long.contains("see the README"), "{long}");
}

#[test]
fn every_repl_command_of_slash_help_is_documented() {
    let ws = Workspace::new();
    let (code, screen) = repl(&ws, "--backend demo", "/help\n/exit\n");
    assert_eq!(code, 0, "{screen}");
    let docs = all_docs();
    // `/help` lists one command a line, indented; `/exit` names `/quit` beside it.
    let listed = Regex::new(r"(?m)^\s+(/[a-z]+)\b|\(also (/[a-z]+)").unwrap();
    let commands: BTreeSet<&str> = listed
        .captures_iter(&screen)
        .filter_map(|c| c.get(1).or(c.get(2)).map(|m| m.as_str()))
        .collect();
    for must in ["/help", "/quit", "/context", "/memory", "/mcp"] {
        assert!(commands.contains(must), "{must} not in /help:\n{screen}");
    }
    let missing: Vec<&&str> = commands
        .iter()
        .filter(|c| !docs.contains(&format!("`{c}")))
        .collect();
    assert!(
        missing.is_empty(),
        "REPL commands missing from the docs: {missing:?}"
    );
}

#[test]
fn every_setting_of_config_is_documented() {
    let ws = Workspace::new();
    let run = ws.run(&["config"]);
    run.expect_code(0);
    let docs = all_docs();
    // `agent-loop config` lists one setting a line after its heading line.
    let settings: Vec<String> = run
        .stdout()
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(settings.iter().any(|s| s == "web_timeout"), "{settings:?}");
    let missing: Vec<&String> = settings
        .iter()
        .filter(|s| !docs.contains(&format!("`{s}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "settings missing from the docs: {missing:?}"
    );
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, punctuation other than `-` and
/// `_` dropped; a repeated heading gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let ticks: String = line.chars().take_while(|c| *c == '`').collect();
        if ticks.len() >= 3 {
            match &fence {
                None => fence = Some(ticks),
                Some(open) if ticks.len() >= open.len() && line.trim_end() == ticks => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else {
            continue;
        };
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while out.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        out.insert(unique);
    }
    out
}

#[test]
fn every_link_between_the_pages_leads_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = pages();
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    let mut linked_from_readme = BTreeSet::new();
    for (page, text) in &pages {
        let dir = Path::new(page).parent().unwrap();
        for target in link.captures_iter(text).map(|c| c[1].to_string()) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let rel = if file.is_empty() {
                Path::new(page).to_path_buf()
            } else {
                dir.join(file)
            };
            let path = root.join(&rel);
            if !path.exists() {
                broken.push(format!("{page}: {target}: no file {}", rel.display()));
                continue;
            }
            if page == "README.md" {
                linked_from_readme.insert(path.canonicalize().unwrap());
            }
            if !fragment.is_empty() {
                let text = std::fs::read_to_string(&path).unwrap();
                if !anchors(&text).contains(fragment) {
                    broken.push(format!("{page}: {target}: no heading #{fragment}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // Every page of docs/ can be reached from the README.
    let orphans: Vec<&String> = pages
        .iter()
        .map(|(page, _)| page)
        .filter(|page| page.starts_with("docs/"))
        .filter(|page| !linked_from_readme.contains(&root.join(page).canonicalize().unwrap()))
        .collect();
    assert!(
        orphans.is_empty(),
        "pages the README does not link to: {orphans:?}"
    );
    assert!(pages.len() >= 11, "README.md and the ten pages of docs/");
}
