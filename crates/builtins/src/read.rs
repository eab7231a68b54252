//! read: a text file's lines, numbered, optionally from `offset` for `limit` lines. Binary
//! files are refused rather than dumped into the conversation. It also opens this session's
//! saved tool outputs wherever the root is: a cut result says to read the rest with it.

use serde::Deserialize;

use super::lines::{Line, Lines, TextError};
use super::tool::{not_text, Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};

const DEFAULT_LIMIT: usize = 2000;
const MAX_BYTES: usize = 200 * 1024;

pub struct Read;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl Builtin for Read {
    const NAME: &'static str = "read";
    const DESCRIPTION: &'static str =
        "Read a text file. Lines come back numbered (number, tab, text); use offset and \
        limit for a part of a long file.";
    const MAIN_PARAM: &'static str = "path";
    const KIND: ToolKind = ToolKind::Read;
    const EFFECT: Effect = Effect::Reads;
    const PATH_PARAM: Option<&'static str> = Some("path");
    const PARAMS: &'static [Param] = &[
        Param::required(
            "path",
            "string",
            "File to read, relative to the working directory or absolute.",
        ),
        Param::optional(
            "limit",
            "integer",
            "How many lines to return (default 2000).",
        ),
        Param::optional(
            "offset",
            "integer",
            "First line to return, counting from 1 (default 1).",
        ),
    ];
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        // A saved tool output is agent-loop's own file, never an editor's buffer.
        let source = match ctx.open_artifact(&args.path) {
            Some(opened) => opened,
            None => ctx.open_text(&args.path).await.map(|(_, source)| source),
        };
        let reader = match source {
            Ok(source) => source.reader(),
            Err(e) => return e,
        };
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        // A large file takes a while to count through: off the runtime's threads.
        let page = tokio::task::spawn_blocking(move || page(reader, offset, limit)).await;
        let Page {
            mut out,
            shown,
            total,
        } = match page {
            Ok(Ok(page)) => page,
            Ok(Err(TextError::Binary)) => return not_text("read", &args.path),
            Ok(Err(TextError::Io(e))) => {
                return ToolOutput::error(format!("cannot read {}: {e}", args.path))
            }
            Err(e) => return ToolOutput::error(format!("cannot read {}: {e}", args.path)),
        };
        if total == 0 {
            return ToolOutput::ok(format!("{} is empty", args.path));
        }
        if offset > total {
            return ToolOutput::error(format!(
                "{} has {}; offset {offset} is past the end",
                args.path,
                crate::plural::count(total, "line", "lines")
            ));
        }
        if shown == 0 {
            return ToolOutput::error("limit 0 asks for no line; leave it out for 2000");
        }
        let last = offset - 1 + shown;
        if last < total {
            out.push_str(&format!(
                "[lines {offset}-{last} of {total}; read again with offset {} for more]",
                last + 1
            ));
        }
        ToolOutput::ok(out.trim_end().to_string())
    }
}

/// What a read returns: the lines shown, numbered, and how many the file has.
struct Page {
    out: String,
    shown: usize,
    total: usize,
}

/// Lines `offset` (from 1) on, at most `limit` of them and [`MAX_BYTES`] in all, and the
/// count of every line. Only the lines shown are kept: a file of any size is read in a
/// bounded amount of memory.
fn page(reader: impl std::io::Read, offset: usize, limit: usize) -> Result<Page, TextError> {
    let mut lines = Lines::new(reader);
    let mut page = Page {
        out: String::new(),
        shown: 0,
        total: 0,
    };
    let mut full = false;
    loop {
        let wanted = !full && page.total + 1 >= offset && page.shown < limit;
        let keep = match wanted {
            true => MAX_BYTES.saturating_sub(page.out.len()),
            false => 0,
        };
        let Some(line) = lines.next_line(keep)? else {
            return Ok(page);
        };
        page.total = line.number;
        if !wanted {
            continue;
        }
        if line.dropped == 0 {
            page.out
                .push_str(&format!("{:>6}\t{}\n", line.number, line.text));
            page.shown += 1;
            continue;
        }
        full = true;
        if page.shown == 0 {
            // A line alone past the cap (minified code, a log line) is shown cut, as a bash
            // result is: offset and limit count whole lines, so it could never be read
            // otherwise.
            page.out.push_str(&cut_line(&line));
            page.shown = 1;
        }
    }
}

/// A line longer than the cap alone, its start kept, with a note of what was dropped.
fn cut_line(line: &Line) -> String {
    format!(
        "{:>6}\t{}\n[line {} cut: {} dropped after the first {}; bash (cut -c, head -c) \
         can show the rest]\n",
        line.number,
        line.text,
        line.number,
        crate::plural::count(line.dropped, "more byte was", "more bytes were"),
        line.text.len(),
    )
}
