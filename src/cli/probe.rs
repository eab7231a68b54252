//! Whether a keyless HTTP backend (a local server such as Ollama) answers at its URL, for the
//! `HERE` column of `agent-loop backends`: any HTTP reply within a short time counts.

use std::time::Duration;

/// How long the server may take to answer before the column says it does not.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// `server answers`, or why not.
pub async fn server_status(url: &str) -> String {
    let client = match agent_loop::process::tls::client()
        .no_gzip()
        .timeout(PROBE_TIMEOUT)
        .connect_timeout(PROBE_TIMEOUT)
        .build()
    {
        Ok(client) => client,
        Err(e) => return format!("cannot check: {e}"),
    };
    match client.get(url).send().await {
        Ok(_) => "server answers".into(),
        Err(e) if e.is_timeout() => format!("no answer within {}s", PROBE_TIMEOUT.as_secs()),
        Err(e) if e.is_connect() => "no server answering".into(),
        Err(e) => format!("cannot check: {e}"),
    }
}
