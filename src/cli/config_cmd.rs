//! `agent-loop config`: every setting's effective value and where it came from, each value
//! checked as a run checks it (a bad one exits 2 with the message the run would give), and
//! where each configuration file is looked for, found or not.

use std::fmt::Write;

use agent_loop::chat::Chat;
use agent_loop::settings::Flag;
use agent_loop::settings::Settings;
use agent_loop::settings::{AllowRule, ApprovalMode};
use agent_loop::settings::{ContextMode, CountTokens};
use agent_loop::Error;

use super::args::Args;
use super::screen::Screen;

/// Prints the table and the files; the exit code.
pub fn run(args: &Args, settings: &Settings) -> Result<(), Error> {
    check(args, settings)?;
    let mut out = settings.describe();
    let count_tokens = settings
        .get::<CountTokens>("count_tokens")?
        .unwrap_or_default();
    out.push_str(&Chat::describe_setup(
        args.run.config.as_deref(),
        settings,
        count_tokens,
    )?);
    let _ = writeln!(
        out,
        "agent-loop's own environment (its keys): {}",
        own_environment()
    );
    super::stdout::print(&out)
}

/// Every value parsed as a run parses it, in the order a run does, so the first bad one gives
/// the same error: the display first, then the backend files and the chat's settings
/// (`Chat::open`).
fn check(args: &Args, settings: &Settings) -> Result<(), Error> {
    Screen::for_args(args, settings)?;
    settings.get::<Flag>("debug")?;
    let config = Chat::load_config(args.run.config.as_deref())?;
    if let Some(name) = settings.get::<String>("backend")? {
        Chat::check_backends(&config, &name)?;
    }
    settings.get::<String>("model")?;
    settings.get::<ApprovalMode>("approval")?;
    settings.get::<CountTokens>("count_tokens")?;
    if let Some((rules, origin)) = settings.raw("allow") {
        for rule in rules.split(',').filter(|r| !r.trim().is_empty()) {
            rule.trim()
                .parse::<AllowRule>()
                .map_err(|e| Error::config(format!("{origin}: {e}")))?;
        }
    }
    if settings.get::<u32>("max_iterations")? == Some(0) {
        return Err(Error::config("max_iterations must be at least 1"));
    }
    settings.get::<ContextMode>("context")?;
    settings.max_context_tokens()?;
    settings.get::<usize>("tool_result_max_chars")?;
    settings.web_options()?;
    Ok(())
}

/// Whether a command agent-loop runs could read agent-loop's environment through
/// /proc/PID/environ: not while agent-loop is non-dumpable (set in `main`).
fn own_environment() -> &'static str {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if rustix::process::dumpable_behavior()
        .is_ok_and(|d| d == rustix::process::DumpableBehavior::NotDumpable)
    {
        return "not dumpable: commands it runs cannot read it from /proc (root still can)";
    }
    "dumpable: a command running as your user can read it from /proc"
}
