//! The providers behind web_search, chosen from the environment: the Brave Search API when
//! `BRAVE_API_KEY` is set (`BRAVE_SEARCH_BASE_URL` moves it, for tests and proxies), else a
//! SearXNG instance's JSON API when `SEARXNG_URL` is set. Neither: web_search is not offered.
//! The search itself is agent-loop-builtins'; which provider, if any, is known here, below
//! the configuration that checks tool names against the built-in ones.

pub const BRAVE_KEY_ENV: &str = "BRAVE_API_KEY";
pub const BRAVE_BASE_ENV: &str = "BRAVE_SEARCH_BASE_URL";
pub const SEARXNG_ENV: &str = "SEARXNG_URL";
const BRAVE_BASE: &str = "https://api.search.brave.com";

/// Where searches go.
#[derive(Debug, Clone, PartialEq)]
pub enum Provider {
    Brave { base: String, key: String },
    Searxng { base: String },
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Provider {
    /// The provider the environment sets up, if any.
    pub fn from_env() -> Option<Provider> {
        if let Some(key) = env(BRAVE_KEY_ENV) {
            let base = env(BRAVE_BASE_ENV).unwrap_or_else(|| BRAVE_BASE.into());
            return Some(Provider::Brave { base, key });
        }
        env(SEARXNG_ENV).map(|base| Provider::Searxng { base })
    }

    /// The provider in a few words, for `agent-loop backends` and `config`.
    pub fn describe(&self) -> String {
        match self {
            Provider::Brave { base, .. } if base == BRAVE_BASE => {
                format!("Brave Search ({BRAVE_KEY_ENV} is set)")
            }
            Provider::Brave { base, .. } => {
                format!("Brave Search at {base} ({BRAVE_KEY_ENV} is set)")
            }
            Provider::Searxng { base } => format!("SearXNG at {base} ({SEARXNG_ENV})"),
        }
    }
}
