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
            let mut partial = false;
            for row in rows {
                let _ = match row {
                    Listing::Ok(s) => {
                        // A count some calls did not report is at least what is shown.
                        let more = if s.usage.uncounted > 0 { "+" } else { "" };
                        partial |= s.usage.uncounted > 0;
                        writeln!(
                            out,
                            "{:<28} {:<14} {:>5} {:>10} {:>9}  {}",
                            s.name,
                            s.backend,
                            s.turns,
                            format!("{}{more}", s.usage.input),
                            format!("{}{more}", s.usage.output),
                            format_time(s.updated)
                        )
                    }
                    Listing::Broken { name, path, .. } => {
                        writeln!(out, "{name:<28} (unreadable: {})", path.display())
                    }
                };
            }
            if partial {
                out.push_str("(+: some backend calls of the session reported no token count)\n");
            }
            super::stdout::print(&out)?;
        }
    }
    Ok(())
}
