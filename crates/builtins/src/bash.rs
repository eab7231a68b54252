//! bash: runs a shell command in the working directory. The shell is found through `PATH`
//! (`bash`, else `sh`), never a hard-coded `/bin/bash`, so it works on Termux. A front end in
//! an editor may run it in the editor's terminal instead (see [`crate::Terminal`]).

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::command;
use super::tool::{Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};
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
    const KIND: ToolKind = ToolKind::Execute;
    const EFFECT: Effect = Effect::Changes;
    const PARAMS: &'static [Param] = &[
        Param::required("command", "string", "The command line to run."),
        Param::optional(
            "timeout_s",
            "integer",
            "Seconds before the command is killed (default 120).",
        ),
    ];
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let timeout = args.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1);
        let argv = vec!["-c".into(), args.command];
        let timeout = Duration::from_secs(timeout);
        if let Some(terminal) = &ctx.files.terminal {
            return terminal.run(shell(), argv, &ctx.cwd, timeout).await;
        }
        command::run(shell(), argv, ctx.cwd.clone(), ctx.env.removed(), timeout).await
    }
}
