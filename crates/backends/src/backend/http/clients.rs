//! The HTTP clients the chats of one process share, so that they share connections: a new
//! ACP session, an MCP `ask`, a Telegram chat or a backend switched back to starts on the
//! API's open connection instead of a new TCP connection and TLS handshake (two round trips
//! of the network before the first token). A front end that hosts
//! many chats puts one set in every chat's options; a client is kept per timeout pair, the
//! only settings a backend's client has of its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A cheap handle to one set of clients: clones share them. A new set has no client; each
/// is built when first asked for.
///
/// A client's connections are driven by tasks of the tokio runtime that made them, so a set
/// belongs to one runtime: a program that runs several gives each its own.
#[derive(Clone, Default)]
pub struct HttpClients {
    /// By `(connect_timeout, timeout)`.
    built: Arc<Mutex<HashMap<(Duration, Duration), reqwest::Client>>>,
}

impl HttpClients {
    /// The client for these timeouts, built on first use.
    pub(super) fn get(
        &self,
        connect_timeout: Duration,
        timeout: Duration,
    ) -> Result<reqwest::Client, reqwest::Error> {
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = built.get(&(connect_timeout, timeout)) {
            return Ok(client.clone());
        }
        let client = crate::tls::client()
            // Replies stream token by token; a compressing server or proxy would hold them
            // back in its gzip buffer (read_url alone asks for gzip).
            .no_gzip()
            .connect_timeout(connect_timeout)
            .timeout(timeout)
            .user_agent(concat!("agent-loop/", env!("CARGO_PKG_VERSION")))
            .build()?;
        built.insert((connect_timeout, timeout), client.clone());
        Ok(client)
    }
}

impl std::fmt::Debug for HttpClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let built = self.built.lock().map_or(0, |b| b.len());
        f.debug_struct("HttpClients")
            .field("built", &built)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_client_per_timeout_pair_shared_by_clones() {
        let clients = HttpClients::default();
        let other = clients.clone();
        let (a, b) = (Duration::from_secs(10), Duration::from_secs(300));
        clients.get(a, b).unwrap();
        other.get(a, b).unwrap();
        assert_eq!(clients.built.lock().unwrap().len(), 1);
        other.get(a, Duration::from_secs(30)).unwrap();
        assert_eq!(clients.built.lock().unwrap().len(), 2);
        assert_eq!(HttpClients::default().built.lock().unwrap().len(), 0);
    }
}
