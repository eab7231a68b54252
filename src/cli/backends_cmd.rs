//! `agent-loop backends`: a table of every configured backend (name, type, command or URL,
//! whether it can run here, version: see `versions`), from the library's `Chat::backends`,
//! with the servers asked whether they answer and the programs for their versions.
//! `agent-loop doctor BACKEND` is the library's `Chat::doctor`.

use std::fmt::Write as _;

use super::display::sanitize;
use agent_loop::chat::{BackendRow as Row, Chat, LoadedConfig};
use agent_loop::Error;

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

/// Every configured backend with its HERE status, without the versions: what
/// `agent-loop mcp serve`'s `backends` tool tells the calling agent.
pub async fn here(config: &LoadedConfig) -> Result<Vec<Row>, Error> {
    let mut rows = Chat::backends(config)?;
    probed(&mut rows).await;
    Ok(rows)
}

/// The table, columns padded to their widest cell.
pub async fn table(config: &LoadedConfig) -> Result<String, Error> {
    let mut rows = Chat::backends(config)?;
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
