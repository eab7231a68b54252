//! write: creates or replaces a file with the given content, atomically, creating parent
//! folders.

use serde::Deserialize;

use serde_json::Value;

use super::tool::{Builtin, Change, Effect, Param, ToolContext, ToolKind, ToolOutput};

pub struct Write;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    path: String,
    content: String,
}

impl Builtin for Write {
    const NAME: &'static str = "write";
    const DESCRIPTION: &'static str =
        "Create a file, or replace its whole content. Parent folders are created.";
    const MAIN_PARAM: &'static str = "path";
    const KIND: ToolKind = ToolKind::Edit;
    const EFFECT: Effect = Effect::Changes;
    const PATH_PARAM: Option<&'static str> = Some("path");
    const CHANGE: Option<fn(&Value) -> Option<Change>> =
        Some(|args| Some(Change::Write(args.get("content")?.as_str()?.to_string())));
    const PARAMS: &'static [Param] = &[
        Param::required("path", "string", "File to write."),
        Param::required("content", "string", "The file's new content."),
    ];
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let path = match ctx.path(&args.path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        match ctx.replace(&path, &args.path, &args.content).await {
            Ok(()) => ToolOutput::ok(format!(
                "wrote {} ({}, {})",
                args.path,
                crate::plural::count(args.content.len(), "byte", "bytes"),
                crate::plural::count(args.content.lines().count(), "line", "lines")
            )),
            Err(e) => e,
        }
    }
}
