//! `agent-loop config`: every setting's effective value and where it came from, each value
//! checked as a run checks it (a bad one exits 2 with the message the run would give), and
//! where each configuration file is looked for, found or not.

use std::fmt::Write;

use agent_loop::chat::{Chat, LoadedConfig};
use agent_loop::Error;

use super::args::Args;
use super::options::Settings;
use super::screen::Screen;

/// Prints the table and the files; the exit code.
pub fn run(args: &Args, settings: &Settings) -> Result<(), Error> {
    let config = check(args, settings)?;
    let mut out = settings.describe();
    out.push_str(&Chat::describe_setup(
        args.run.config.as_deref(),
        &settings.run,
    )?);
    let _ = writeln!(
        out,
        "agent-loop's own environment (its keys): {}",
        own_environment()
    );
    // The backends the `backend` setting names are checked after the table is printed: a
    // misspelt one is the mistake whose row (the value and where it came from) the user
    // needs to see; the error a run would give follows, with its exit code. Without the
    // setting, a run takes `default_backend`, which is checked the same way.
    let backends = match &settings.run.backend {
        Some(setting) => Chat::check_backend_setting(&config, setting),
        None => Chat::check_default_backend(&config),
    };
    super::stdout::print(&out)?;
    backends
}

/// What a run checks beyond the values' types (each value was parsed as the settings were
/// read), in the order a run does, so the first bad one gives the same error: the display,
/// then the backend files; the configuration they hold.
fn check(args: &Args, settings: &Settings) -> Result<LoadedConfig, Error> {
    Screen::for_args(args, &settings.screen)?;
    let config = Chat::load_config(args.run.config.as_deref())?;
    if settings.run.max_iterations.as_ref().map(|s| s.value) == Some(0) {
        return Err(Error::config("max_iterations must be at least 1"));
    }
    Ok(config)
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
