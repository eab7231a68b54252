//! What read_url and web_search are given (their options, the search provider the environment
//! sets up) and which addresses are private (`address`, also MCP's HTTP client's check); the
//! fetching, decoding and converting are agent-loop-builtins'.

pub mod address;
pub mod provider;

use std::time::Duration;

use globset::GlobMatcher;

/// How read_url fetches (`web_connect_timeout`, `web_timeout`, `web_max_bytes`) and converts
/// (`web_keep_chrome`), and which URLs the user named in allow rules.
#[derive(Debug, Clone)]
pub struct WebOptions {
    pub connect_timeout: Duration,
    /// The whole read: every redirect, the body and the conversion.
    pub timeout: Duration,
    pub max_bytes: usize,
    /// Whether pages keep their `<nav>`, `<header>` and `<footer>`.
    pub keep_chrome: bool,
    /// The globs of `read_url:GLOB` allow rules: a URL one of them matches may be on a
    /// private address (the user named it).
    pub named: Vec<GlobMatcher>,
}

impl Default for WebOptions {
    fn default() -> Self {
        WebOptions {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_bytes: 5_000_000,
            keep_chrome: false,
            named: Vec::new(),
        }
    }
}

impl WebOptions {
    /// Whether an allow rule names `url`.
    pub fn names(&self, url: &str) -> bool {
        self.named.iter().any(|g| g.is_match(url))
    }
}

/// The host of a URL, for asking approval once per host; `None` if it is no URL.
pub fn host_of(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    Some(match url.port() {
        Some(port) => format!("{}:{port}", url.host_str()?),
        None => url.host_str()?.to_string(),
    })
}
