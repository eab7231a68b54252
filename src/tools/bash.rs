//! bash: runs a shell command in the working directory. The shell is found through `PATH`
//! (`bash`, else `sh`), never a hard-coded `/bin/bash`, so it works on Termux.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::spec::{Builtin, Param, ToolContext, ToolOutput};
use crate::process::{self, Spec};

/// Each of stdout and stderr is kept up to this many bytes.
pub const OUTPUT_CAP: usize = 200 * 1024;
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
        let spec = Spec {
            program: shell(),
            args: vec!["-c".into(), args.command.clone()],
            env: BTreeMap::new(),
            env_remove: ctx.env.removed(),
            cwd: Some(ctx.cwd.clone()),
            stdin: None,
            timeout: Duration::from_secs(timeout),
            cap: OUTPUT_CAP,
            tick: None,
        };
        let done = match process::run(&spec, &mut |_| {}).await {
            Ok(done) => done,
            Err(e) => {
                return ToolOutput::error(format!(
                    "could not start {}: {e}",
                    spec.program.display()
                ))
            }
        };
        let code = if done.timed_out {
            124
        } else {
            done.exit_code().unwrap_or(-1)
        };
        let mut output = format!("exit code: {code}\n");
        if done.timed_out {
            output.push_str(&format!(
                "timed out after {timeout}s: the command and everything it started were killed\n"
            ));
        }
        for (label, capture) in [("stdout", &done.stdout), ("stderr", &done.stderr)] {
            if !capture.bytes().is_empty() || capture.dropped() > 0 {
                let text = crate::parse::strip_ansi(capture.bytes());
                output.push_str(&format!("{label}:\n{}", text.trim_end_matches('\n')));
                if capture.dropped() > 0 {
                    output.push_str(&format!(
                        "\n[{label} cut: {} more bytes were dropped after the first {}]",
                        capture.dropped(),
                        capture.bytes().len()
                    ));
                }
                output.push('\n');
            }
        }
        ToolOutput {
            ok: code == 0,
            output: output.trim_end().to_string(),
            exit_code: Some(code),
        }
    }
}
