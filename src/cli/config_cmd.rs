//! `agent-loop config`: every setting's effective value and where it came from, each value
//! checked as a run checks it (a bad one exits 2 with the message the run would give), and
//! where each configuration file is looked for, found or not.

use std::fmt::Write;
use std::path::Path;

use agent_loop::agent::{AllowRule, ApprovalMode};
use agent_loop::config::bool_setting::Flag;
use agent_loop::config::settings::Settings;
use agent_loop::config::{user_backends_path, user_settings_path, Config, Definition, HttpDef};
use agent_loop::context::{ContextMode, CountTokens, Method};
use agent_loop::Error;

use super::args::Args;
use super::screen::Screen;

/// Prints the table and the files; the exit code.
pub fn run(args: &Args, settings: &Settings) -> Result<(), Error> {
    check(args, settings)?;
    let mut out = settings.describe();
    let _ = writeln!(
        out,
        "\nsettings file: {}",
        looked_for(user_settings_path().as_deref())
    );
    let mut files = vec![agent_loop::config::Source::BUILTIN_NAME.to_string()];
    files.push(looked_for(user_backends_path().as_deref()));
    if let Some(extra) = &args.run.config {
        files.push(format!("{} (--config)", extra.display()));
    }
    let _ = writeln!(out, "backends files: {}", files.join(", "));
    let config = agent_loop::chat::Chat::load_config(args.run.config.as_deref())?;
    let env = settings.env_policy(config.api_key_envs());
    out.push_str(&env.describe());
    let tools = config.tools.describe();
    if !tools.is_empty() {
        let _ = write!(out, "tools ([tools.NAME]):\n{tools}");
    }
    out.push_str(&token_counts(&config, settings)?);
    let _ = writeln!(
        out,
        "file tools open files with: {}",
        agent_loop::tools::confinement_method().describe()
    );
    let _ = writeln!(
        out,
        "agent-loop's own environment (its keys): {}",
        own_environment()
    );
    if let Some(dir) = agent_loop::session::Store::default_dir() {
        let _ = writeln!(out, "sessions: {}", dir.display());
    }
    let _ = writeln!(out, "{}", agent_loop::tools::web_search_status());
    let _ = writeln!(out, "{}", agent_loop::builtins::read_url_status());
    super::stdout::print(&out)
}

/// How each HTTP backend's tokens are counted, with the `count_tokens` setting; the other
/// backends' are estimated.
fn token_counts(config: &Config, settings: &Settings) -> Result<String, Error> {
    let count_tokens = settings
        .get::<CountTokens>("count_tokens")?
        .unwrap_or_default();
    let mut out = String::from("token counts:\n");
    for (name, def) in config.definitions()? {
        if let Definition::Http(def) = def {
            let def = HttpDef {
                count_tokens,
                ..def.clone()
            };
            let model = def.model.clone().unwrap_or_default();
            let method = agent_loop::backend::token_method(&def, &model);
            let _ = writeln!(out, "  {name}: {method}");
        }
    }
    let _ = writeln!(out, "  every other backend: {}", Method::Estimate);
    Ok(out)
}

/// A file's path, and `(not found)` when nothing is there.
fn looked_for(path: Option<&Path>) -> String {
    match path {
        Some(path) if path.is_file() => path.display().to_string(),
        Some(path) => format!("{} (not found)", path.display()),
        None => "(no home folder: neither XDG_CONFIG_HOME nor HOME is set)".to_string(),
    }
}

/// Every value parsed as a run parses it, in the order a run does, so the first bad one gives
/// the same error: the display first, then the backend files and the chat's settings
/// (`Chat::open`).
fn check(args: &Args, settings: &Settings) -> Result<(), Error> {
    Screen::for_args(args, settings)?;
    settings.get::<Flag>("debug")?;
    let config = agent_loop::chat::Chat::load_config(args.run.config.as_deref())?;
    if let Some(name) = settings.get::<String>("backend")? {
        config.backend_list(&name)?;
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
