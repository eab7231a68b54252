//! `agent-loop sessions` (list) and `agent-loop sessions rm NAME`.

use std::fmt::Write;

use agent_loop::chat::{Chat, Listing};
use agent_loop::text::format_time;
use agent_loop::Error;

use super::args::SessionsAction;

pub fn run(action: Option<SessionsAction>) -> Result<(), Error> {
    match action {
        Some(SessionsAction::Rm { names }) => {
            for name in names {
                Chat::remove_saved(&name)?;
                super::stdout::print(&format!("removed {name}\n"))?;
            }
        }
        None => {
            let rows = Chat::saved_sessions()?;
            if rows.is_empty() {
                let dir = Chat::saved_sessions_dir().unwrap_or_default();
                eprintln!("no saved sessions in {}", dir.display());
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
