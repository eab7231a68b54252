//! bash: runs a shell command in the working directory. The shell is found through `PATH`
//! (`bash`, else `sh`), never a hard-coded `/bin/bash`, so it works on Termux.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::{command, Builtin, ToolContext, ToolOutput};
use crate::BoxFuture;
const DEFAULT_TIMEOUT_S: u64 = 120;

pub struct Bash;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    command: String,
    timeout_s: Option<u64>,
}

fn shell() -> PathBuf {
    which::which("bash")
        .or_else(|_| which::which("sh"))
        .unwrap_or_else(|_| PathBuf::from("sh"))
}

impl Builtin for Bash {
    const NAME: &'static str = "bash";
    const DESCRIPTION: &'static str =
        "Run a shell command in the working directory and return its exit code, stdout \
        and stderr (each cut at 200 KB). Non-interactive: stdin is empty.";
    const MAIN_PARAM: &'static str = "command";
    const MUTATING: bool = true;
    type Args = Args;

    fn schema() -> Value {
        serde_json::json!({
            "properties": {
                "command": {"description": "The command line to run.", "type": "string"},
                "timeout_s": {"description": "Seconds before the command is killed (default 120).", "type": "integer"}
            },
            "required": ["command"],
            "type": "object"
        })
    }

    fn run<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let timeout = args.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1);
            let argv = vec!["-c".into(), args.command];
            command::run(shell(), argv, ctx.cwd.clone(), Duration::from_secs(timeout)).await
        })
    }
}
