//! grep: searches files under a folder for a regex, honouring `.gitignore` the way ripgrep
//! does (through the `ignore` crate), and returns `path:line:text` rows, capped.

use std::path::Path;

use regex::RegexBuilder;
use serde::Deserialize;

use super::beneath;
use super::fs;
use super::tool::{Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};

const MAX_MATCHES: usize = 200;
const MAX_LINE: usize = 300;

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
        'files: for entry in ignore::WalkBuilder::new(&root)
            .build()
            .filter_map(Result::ok)
        {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            // Opened beneath the root like every file tool's file: no link followed.
            let Ok(beneath::Opened::File(mut file)) =
                beneath::open_read(ctx.root.dir(), entry.path(), "", false)
            else {
                continue;
            };
            let mut bytes = Vec::new();
            if std::io::Read::read_to_end(&mut file, &mut bytes).is_err() {
                continue;
            }
            let Some(text) = fs::as_text(bytes) else {
                continue;
            };
            let shown = display_path(entry.path(), &ctx.cwd);
            for (i, line) in text.lines().enumerate() {
                if re.is_match(line) {
                    if rows.len() == MAX_MATCHES {
                        more = true;
                        break 'files;
                    }
                    let line: String = line.chars().take(MAX_LINE).collect();
                    rows.push(format!("{shown}:{}:{line}", i + 1));
                }
            }
        }
        if rows.is_empty() {
            return ToolOutput::ok(format!(
                "no match for {:?} under {}",
                args.pattern, args.path
            ));
        }
        let mut out = rows.join("\n");
        if more {
            out.push_str(&format!(
                "\n[stopped at {MAX_MATCHES} matches; narrow the pattern or the path]"
            ));
        }
        ToolOutput::ok(out)
    }
}

fn display_path(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}
