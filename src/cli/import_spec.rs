//! `agent-loop import-spec FILE.pl [-o FILE] [--force]`: the UnifyWeaver spec as
//! backends.toml, printed or written (the translation is `agent_loop::import`).

use std::path::Path;

use agent_loop::Error;

/// Translates `file`; the warnings go to stderr, the text to stdout or `out`.
pub fn run(file: &Path, out: Option<&Path>, force: bool) -> Result<(), Error> {
    // A spec that is not there or not readable is bad usage (exit 2), as a bad flag is.
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::config(format!("cannot read the spec {}: {e}", file.display())))?;
    let imported = agent_loop::import::import(&text, &file.display().to_string())?;
    for warning in &imported.warnings {
        eprintln!("agent-loop: warning: {warning}");
    }
    match out {
        Some(path) => {
            agent_loop::import::write(path, &imported.toml, force)?;
            eprintln!(
                "agent-loop: wrote {}; use it with --config {0}",
                path.display()
            );
        }
        None => super::stdout::print(&imported.toml)?,
    }
    Ok(())
}
