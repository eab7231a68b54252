//! edit: replaces an exact string in a file. Without `replace_all` the string must occur
//! exactly once, so the model cannot change the wrong place by accident.

use serde::Deserialize;

use serde_json::Value;

use super::tool::{Builtin, Change, Effect, Param, ToolContext, ToolKind, ToolOutput};

/// The largest file edit takes: it holds the file and its new text at once, and a file
/// this size is data, not code to edit by hand.
const MAX_FILE: u64 = 16 * 1024 * 1024;

pub struct Edit;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

impl Builtin for Edit {
    const NAME: &'static str = "edit";
    const DESCRIPTION: &'static str =
        "Replace old_string with new_string in a file. old_string must match exactly \
        (whitespace included) and occur exactly once, unless replace_all is true.";
    const MAIN_PARAM: &'static str = "path";
    const KIND: ToolKind = ToolKind::Edit;
    const EFFECT: Effect = Effect::Changes;
    const PATH_PARAM: Option<&'static str> = Some("path");
    const CHANGE: Option<fn(&Value) -> Option<Change>> = Some(|args| {
        let text = |name: &str| Some(args.get(name)?.as_str()?.to_string());
        Some(Change::Edit {
            old: text("old_string")?,
            new: text("new_string")?,
            all: args.get("replace_all").and_then(Value::as_bool) == Some(true),
        })
    });
    const PARAMS: &'static [Param] = &[
        Param::required("path", "string", "File to edit."),
        Param::required("old_string", "string", "Exact text to replace."),
        Param::required("new_string", "string", "Text to put in its place."),
        Param::optional(
            "replace_all",
            "boolean",
            "Replace every occurrence (default false).",
        ),
    ];
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        if args.old_string.is_empty() {
            return ToolOutput::error("edit: old_string is empty; use write to create a file");
        }
        if args.old_string == args.new_string {
            return ToolOutput::error("edit: old_string and new_string are the same");
        }
        let (path, text) = match ctx.read_text("edit", &args.path, MAX_FILE).await {
            Ok(found) => found,
            Err(e) => return e,
        };
        let count = text.matches(&args.old_string).count();
        if count == 0 {
            return ToolOutput::error(format!(
                "old_string does not occur in {}; read the file and copy the text exactly",
                args.path
            ));
        }
        if count > 1 && !args.replace_all {
            return ToolOutput::error(format!(
                "old_string occurs {count} times in {}; add surrounding lines to make it \
                 unique, or set replace_all to true",
                args.path
            ));
        }
        let new_text = if args.replace_all {
            text.replace(&args.old_string, &args.new_string)
        } else {
            text.replacen(&args.old_string, &args.new_string, 1)
        };
        match ctx.replace(&path, &args.path, &new_text).await {
            Ok(()) => ToolOutput::ok(format!(
                "edited {}: replaced {}",
                args.path,
                crate::plural::count(count, "occurrence", "occurrences")
            )),
            Err(e) => e,
        }
    }
}
