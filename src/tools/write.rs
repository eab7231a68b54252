//! write: creates or replaces a file with the given content, atomically, creating parent
//! folders.

use serde::Deserialize;
use serde_json::Value;

use super::{compact_json, fs, parse_args, spec, Tool, ToolContext, ToolOutput, ToolSpec};
use crate::BoxFuture;

pub struct Write {
    spec: ToolSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    content: String,
}

impl Write {
    pub fn new() -> Self {
        Write {
            spec: spec(
                "write",
                "Create a file, or replace its whole content. Parent folders are created.",
                "path",
                true,
                compact_json!(
                    r#"{
                    "properties": {
                        "content": {"description": "The file's new content.", "type": "string"},
                        "path": {"description": "File to write.", "type": "string"}
                    },
                    "required": ["path", "content"],
                    "type": "object"
                }"#
                ),
            ),
        }
    }
}

impl Tool for Write {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let args: Args = match parse_args("write", args) {
                Ok(a) => a,
                Err(e) => return e,
            };
            let path = match ctx.path(&args.path) {
                Ok(p) => p,
                Err(e) => return e,
            };
            match fs::write_atomic(&path, args.content.as_bytes()) {
                Ok(()) => ToolOutput::ok(format!(
                    "wrote {} ({} bytes, {} lines)",
                    args.path,
                    args.content.len(),
                    args.content.lines().count()
                )),
                Err(e) => ToolOutput::error(format!("cannot write {}: {e}", args.path)),
            }
        })
    }
}
