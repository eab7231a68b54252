//! `agent-loop sessions` (list) and `agent-loop sessions rm NAME`.

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
                println!("removed {name}");
            }
        }
        None => {
            let rows = store.list();
            if rows.is_empty() {
                eprintln!("no saved sessions in {}", store.dir().display());
                return Ok(());
            }
            println!(
                "{:<28} {:<14} {:>5} {:>10} {:>9}  LAST USED",
                "NAME", "BACKEND", "TURNS", "TOKENS IN", "OUT"
            );
            for row in rows {
                match row {
                    Listing::Ok(s) => println!(
                        "{:<28} {:<14} {:>5} {:>10} {:>9}  {}",
                        s.name,
                        s.backend,
                        s.turns,
                        s.usage.input,
                        s.usage.output,
                        format_time(s.updated)
                    ),
                    Listing::Broken { name, path, .. } => {
                        println!("{name:<28} (unreadable: {})", path.display())
                    }
                }
            }
        }
    }
    Ok(())
}
