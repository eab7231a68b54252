//! grep: searches files under a folder for a regex, honouring `.gitignore` the way ripgrep
//! does (through the `ignore` crate), and returns `path:line:text` rows, capped.

use std::path::Path;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use super::beneath;
use super::lines::Lines;
use super::tool::{Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};

const MAX_MATCHES: usize = 200;
const MAX_LINE: usize = 300;
/// How much of one line is searched: a line is held whole to be matched, and a file may be
/// one line of gigabytes.
const MAX_SEARCHED: usize = 4 * 1024 * 1024;

pub struct Grep;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pattern: String,
    #[serde(default = "super::fs::working_dir")]
    path: String,
    #[serde(default)]
    ignore_case: bool,
}

impl Builtin for Grep {
    const NAME: &'static str = "grep";
    const DESCRIPTION: &'static str =
        "Search text files under a folder (recursively, skipping .gitignore'd and \
        hidden files) for a regular expression. Returns path:line:text rows, at most 200.";
    const MAIN_PARAM: &'static str = "pattern";
    const KIND: ToolKind = ToolKind::Search;
    const EFFECT: Effect = Effect::Reads;
    const PATH_PARAM: Option<&'static str> = Some("path");
    const PARAMS: &'static [Param] = &[
        Param::required(
            "pattern",
            "string",
            "Regular expression (Rust regex syntax).",
        ),
        Param::optional(
            "ignore_case",
            "boolean",
            "Match case-insensitively (default false).",
        ),
        Param::optional(
            "path",
            "string",
            "Folder or file to search (default: the working directory).",
        ),
    ];
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let re = match RegexBuilder::new(&args.pattern)
            .case_insensitive(args.ignore_case)
            .build()
        {
            Ok(re) => re,
            Err(e) => return ToolOutput::error(format!("invalid pattern: {e}")),
        };
        let root = match ctx.path(&args.path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        if !root.exists() {
            return ToolOutput::error(format!(
                "cannot search {}: no such file or folder",
                args.path
            ));
        }
        let mut rows = Vec::new();
        let mut more = false;
        // Lines searched only in part: how many, and where the first is.
        let (mut long, mut long_lines) = (None, 0);
        for entry in ignore::WalkBuilder::new(&root)
            .build()
            .filter_map(Result::ok)
        {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            // Opened beneath the root like every file tool's file: no link followed.
            let Ok(beneath::Opened::File(file)) =
                beneath::open_read(ctx.root.dir(), entry.path(), "", false)
            else {
                continue;
            };
            let shown = display_path(entry.path(), &ctx.cwd);
            let room = MAX_MATCHES - rows.len();
            let Some(searched) = search(file, &re, &shown, room) else {
                continue;
            };
            rows.extend(searched.rows);
            if long.is_none() {
                long = searched.long;
            }
            long_lines += searched.long_lines;
            if searched.more {
                more = true;
                break;
            }
        }
        // A match past the part searched would be missed: say so, found or not.
        let long = long.map(|first| {
            let mib = MAX_SEARCHED >> 20;
            match long_lines {
                1 => format!(
                    "\n[{first}: a line longer than {mib} MiB, searched in its first {mib} MiB \
                     only]"
                ),
                n => format!(
                    "\n[{n} lines longer than {mib} MiB were searched in their first {mib} MiB \
                     only, the first at {first}]"
                ),
            }
        });
        let long = long.unwrap_or_default();
        if rows.is_empty() {
            return ToolOutput::ok(format!(
                "no match for {:?} under {}{long}",
                args.pattern, args.path
            ));
        }
        let mut out = rows.join("\n");
        out.push_str(&long);
        if more {
            out.push_str(&format!(
                "\n[stopped at {MAX_MATCHES} matches; narrow the pattern or the path]"
            ));
        }
        ToolOutput::ok(out)
    }
}

/// What one file gave.
struct Searched {
    rows: Vec<String>,
    /// The row limit was reached in it.
    more: bool,
    /// Where its first line longer than [`MAX_SEARCHED`] is, and how many it has.
    long: Option<String>,
    long_lines: usize,
}

/// The rows of `file`'s lines that `re` matches, at most `room`, read line by line: a file
/// of any size is searched in a bounded amount of memory. `None` for a binary file, found
/// as far as it was read.
fn search(file: std::fs::File, re: &Regex, shown: &str, room: usize) -> Option<Searched> {
    let mut lines = Lines::new(file);
    let mut found = Searched {
        rows: Vec::new(),
        more: false,
        long: None,
        long_lines: 0,
    };
    while let Some(line) = lines.next_line(MAX_SEARCHED).ok()? {
        if line.dropped > 0 {
            found.long_lines += 1;
            found
                .long
                .get_or_insert_with(|| format!("{shown}:{}", line.number));
        }
        if re.is_match(line.text) {
            if found.rows.len() == room {
                found.more = true;
                break;
            }
            let text: String = line.text.chars().take(MAX_LINE).collect();
            found.rows.push(format!("{shown}:{}:{text}", line.number));
        }
    }
    Some(found)
}

fn display_path(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}
