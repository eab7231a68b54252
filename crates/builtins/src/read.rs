//! read: a text file's lines, numbered, optionally from `offset` for `limit` lines. Binary
//! files are refused rather than dumped into the conversation. It also opens this session's
//! saved tool outputs wherever the root is: a cut result says to read the rest with it.

use serde::Deserialize;

use super::tool::{Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};

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
        let text = match ctx.read_artifact("read", &args.path) {
            Some(read) => read,
            None => ctx
                .read_text("read", &args.path)
                .await
                .map(|(_, text)| text),
        };
        let text = match text {
            Ok(text) => text,
            Err(e) => return e,
        };
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let total = text.lines().count();
        let mut out = String::new();
        let mut shown = 0;
        for (i, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
            if out.len() + line.len() > MAX_BYTES {
                if shown == 0 {
                    // A line alone past the cap (minified code, a log line) is shown cut, as
                    // a bash result is: offset and limit count whole lines, so it could
                    // never be read otherwise.
                    out.push_str(&cut_line(i + 1, line));
                    shown = 1;
                }
                break;
            }
            out.push_str(&format!("{:>6}\t{line}\n", i + 1));
            shown += 1;
        }
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

/// Line `number`, longer than the cap alone, cut at the cap (on a character boundary) with a
/// note of what was dropped.
fn cut_line(number: usize, line: &str) -> String {
    let mut end = MAX_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{number:>6}\t{}\n[line {number} cut: {} dropped after the first {end}; \
         bash (cut -c, head -c) can show the rest]\n",
        &line[..end],
        crate::plural::count(line.len() - end, "more byte was", "more bytes were"),
    )
}
