//! `agent-loop sessions` (list) and `agent-loop sessions rm NAME`.

use std::fmt::Write;

use agent_loop::session::{format_time, Listing, Store};
use agent_loop::Error;

use super::args::SessionsAction;

pub fn run(action: Option<SessionsAction>) -> Result<(), Error> {
    let dir = Store::default_dir()
        .ok_or_else(|| Error::config("neither XDG_DATA_HOME nor HOME is set"))?;
    let store = Store::new(dir);
    match action {
        Some(SessionsAction::Rm { names }) => {
            for name in names {
                store.remove(&name)?;
                super::stdout::print(&format!("removed {name}\n"))?;
            }
        }
        None => {
            let rows = store.list();
            if rows.is_empty() {
                eprintln!("no saved sessions in {}", store.dir().display());
                return Ok(());
            }
            let mut out = format!(
                "{:<28} {:<14} {:>5} {:>10} {:>9}  LAST USED\n",
                "NAME", "BACKEND", "TURNS", "TOKENS IN", "OUT"
            );
            for row in rows {
                let _ = match row {
                    Listing::Ok(s) => writeln!(
                        out,
                        "{:<28} {:<14} {:>5} {:>10} {:>9}  {}",
                        s.name,
                        s.backend,
                        s.turns,
                        s.usage.input,
                        s.usage.output,
                        format_time(s.updated)
                    ),
                    Listing::Broken { name, path, .. } => {
                        writeln!(out, "{name:<28} (unreadable: {})", path.display())
                    }
                };
            }
            super::stdout::print(&out)?;
        }
    }
    Ok(())
}
