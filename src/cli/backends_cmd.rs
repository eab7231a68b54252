//! `agent-loop backends`: a table of every configured backend (name, type, command or URL,
//! whether it can run here, version: see `versions`). `agent-loop doctor BACKEND` is the
//! library's `backend::doctor`.

use std::fmt::Write as _;

use super::display::sanitize::sanitize;
use agent_loop::config::{Config, Definition};
use agent_loop::Error;

/// One row of the table.
struct Row {
    name: String,
    kind: String,
    target: String,
    status: String,
    /// The program to ask for `--version`, when it was found.
    program: Option<std::path::PathBuf>,
    /// A keyless HTTP backend's URL: whether its server answers is the status.
    probe: Option<String>,
}

fn row(name: &str, def: &Definition) -> Row {
    match def {
        Definition::Cli(d) => {
            let kind = if d.parsers.own_tools {
                "cli, own tools"
            } else {
                "cli"
            };
            let (status, program) = if d.command == "{self}" {
                ("built in".to_string(), None)
            } else {
                match which::which(&d.command) {
                    Ok(path) => (format!("found: {}", path.display()), Some(path)),
                    Err(_) => ("not on PATH".to_string(), None),
                }
            };
            Row {
                name: name.into(),
                kind: kind.into(),
                target: d.command.replace("{self}", "agent-loop"),
                status,
                program,
                probe: None,
            }
        }
        Definition::Pty(d) => {
            let (status, program) = match which::which(&d.command) {
                Ok(path) => (format!("found: {}", path.display()), Some(path)),
                Err(_) => ("not on PATH".to_string(), None),
            };
            Row {
                name: name.into(),
                kind: "pty, own tools".into(),
                target: d.command.clone(),
                status,
                program,
                probe: None,
            }
        }
        Definition::Acp(d) => {
            let (status, program) = match which::which(&d.command) {
                Ok(path) => (format!("found: {}", path.display()), Some(path)),
                Err(_) => ("not on PATH".to_string(), None),
            };
            Row {
                name: name.into(),
                kind: "acp, own tools".into(),
                target: d.command.clone(),
                status,
                program,
                probe: None,
            }
        }
        Definition::Http(d) => Row {
            name: name.into(),
            kind: d.format.type_name().into(),
            target: d.base_url.clone(),
            status: match &d.api_key_env {
                None => String::new(),
                Some(var) if def.is_available() => format!("{var} set"),
                Some(var) => format!("{var} not set"),
            },
            program: None,
            probe: d.api_key_env.is_none().then(|| d.base_url.clone()),
        },
    }
}

/// The rows with their HERE status: a keyless HTTP backend's server asked whether it answers.
async fn probed(rows: &mut [Row]) {
    let probes = futures_util::future::join_all(rows.iter().map(|r| {
        let url = r.probe.clone();
        async move {
            match url {
                Some(url) => Some(super::probe::server_status(&url).await),
                None => None,
            }
        }
    }))
    .await;
    for (row, status) in rows.iter_mut().zip(probes) {
        if let Some(status) = status {
            row.status = status;
        }
    }
}

/// Every configured backend as (name, type, command or URL, HERE), without the versions:
/// what `agent-loop mcp serve`'s `backends` tool tells the calling agent.
pub async fn here(config: &Config) -> Result<Vec<[String; 4]>, Error> {
    let mut rows: Vec<Row> = config
        .definitions()?
        .into_iter()
        .map(|(name, def)| row(name, def))
        .collect();
    probed(&mut rows).await;
    Ok(rows
        .into_iter()
        .map(|r| [r.name, r.kind, r.target, r.status])
        .collect())
}

/// The table, columns padded to their widest cell.
pub async fn table(config: &Config) -> Result<String, Error> {
    let mut rows: Vec<Row> = config
        .definitions()?
        .into_iter()
        .map(|(name, def)| row(name, def))
        .collect();
    let programs: Vec<_> = rows.iter().map(|r| r.program.clone()).collect();
    let ((), versions) =
        futures_util::future::join(probed(&mut rows), super::versions::versions(&programs)).await;
    let mut cells = vec![["NAME", "TYPE", "COMMAND / URL", "HERE", "VERSION"].map(String::from)];
    for (r, v) in rows.into_iter().zip(versions) {
        cells.push([r.name, r.kind, r.target, r.status, v]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for c in &cells {
        let line: Vec<String> = c
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{:<w$}", sanitize(cell), w = w))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    Ok(out)
}
