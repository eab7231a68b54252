//! write: creates or replaces a file with the given content, atomically, creating parent
//! folders.

use serde::Deserialize;
use serde_json::Value;

use super::{Builtin, ToolContext, ToolOutput};
use crate::BoxFuture;

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
    const MUTATING: bool = true;
    type Args = Args;

    fn schema() -> Value {
        serde_json::json!({
            "properties": {
                "content": {"description": "The file's new content.", "type": "string"},
                "path": {"description": "File to write.", "type": "string"}
            },
            "required": ["path", "content"],
            "type": "object"
        })
    }

    fn run<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let path = match ctx.path(&args.path) {
                Ok(p) => p,
                Err(e) => return e,
            };
            match ctx.replace(&path, &args.path, args.content.as_bytes()) {
                Ok(()) => ToolOutput::ok(format!(
                    "wrote {} ({} bytes, {} lines)",
                    args.path,
                    args.content.len(),
                    args.content.lines().count()
                )),
                Err(e) => e,
            }
        })
    }
}
