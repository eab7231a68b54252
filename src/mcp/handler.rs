//! agent-loop's side of a connection: what it tells a server about itself at the handshake,
//! and its answers to the server's requests (rmcp answers `ping` itself).

use std::path::Path;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::ClientHandler;

/// One connection's handler.
pub struct Handler {
    info: ClientConfig,
}

impl Handler {
    pub fn new(_cwd: &Path) -> Self {
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agent-loop", env!("CARGO_PKG_VERSION")),
        );
        Handler { info }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}
