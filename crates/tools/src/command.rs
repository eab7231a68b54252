//! Running one program for a tool the way bash does: in its own process group, stdin empty,
//! each of stdout and stderr capped, everything killed at the timeout (reported as exit 124),
//! and the result written for the model. The bash tool and the custom command tools of
//! `[tools.NAME]` both run through [`run`], so whatever policy applies to a tool's child
//! process (its environment, its limits) is set in this one place.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::tool::ToolOutput;
use crate::process::{self, Spec};

/// Each of stdout and stderr is kept up to this many bytes.
pub const OUTPUT_CAP: usize = 200 * 1024;

/// The line that says the command was killed at `timeout`.
pub fn timed_out(timeout: Duration) -> String {
    format!(
        "timed out after {}s: the command and everything it started were killed\n",
        timeout.as_secs()
    )
}

/// Runs `program` with `args` in `cwd`, without the variables `env_remove` names (the
/// secrets of the environment policy), for at most `timeout`; a failure to start it is an
/// error result naming the program.
pub async fn run(
    program: PathBuf,
    args: Vec<String>,
    cwd: PathBuf,
    env_remove: Vec<String>,
    timeout: Duration,
) -> ToolOutput {
    let spec = Spec {
        program,
        args,
        env: BTreeMap::new(),
        env_remove,
        cwd: Some(cwd),
        stdin: None,
        timeout,
        cap: OUTPUT_CAP,
        keep_stdout: true,
        read_ahead: false,
        tick: None,
    };
    let done = match process::run(&spec, &mut |_| {}).await {
        Ok(done) => done,
        Err(e) => {
            return ToolOutput::error(format!("could not start {}: {e}", spec.program.display()))
        }
    };
    let code = if done.timed_out {
        124
    } else {
        done.exit_code().unwrap_or(-1)
    };
    let mut output = format!("exit code: {code}\n");
    if done.timed_out {
        output.push_str(&timed_out(timeout));
    }
    for (label, capture) in [("stdout", &done.stdout), ("stderr", &done.stderr)] {
        if !capture.bytes().is_empty() || capture.dropped() > 0 {
            let text = agent_loop_scan::strip_ansi(capture.bytes());
            output.push_str(&format!("{label}:\n{}", text.trim_end_matches('\n')));
            if capture.dropped() > 0 {
                output.push_str(&format!(
                    "\n[{label} cut: {} dropped after the first {}]",
                    crate::plural::count(capture.dropped(), "more byte was", "more bytes were"),
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
