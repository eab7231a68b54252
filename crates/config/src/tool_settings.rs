//! The settings of the built-in tools, read into the tools' own option types: the tools
//! take values, and never read the settings themselves.

use std::time::Duration;

use super::bool_setting::Flag;
use super::settings::Settings;
use super::ConfigError;
use agent_loop_tools::{EnvPolicy, WebOptions};

impl Settings {
    /// `web_connect_timeout`, `web_timeout` (seconds), `web_max_bytes` and `web_keep_chrome`.
    pub fn web_options(&self) -> Result<WebOptions, ConfigError> {
        let mut web = WebOptions::default();
        if let Some(s) = self.get::<u64>("web_connect_timeout")? {
            web.connect_timeout = Duration::from_secs(s.max(1));
        }
        if let Some(s) = self.get::<u64>("web_timeout")? {
            web.timeout = Duration::from_secs(s.max(1));
        }
        if let Some(n) = self.get::<usize>("web_max_bytes")? {
            web.max_bytes = n.max(1);
        }
        if let Some(keep) = self.get::<Flag>("web_keep_chrome")? {
            web.keep_chrome = keep.0;
        }
        Ok(web)
    }

    /// The policy of config.toml's `[tools.bash]` for these backends' key variables.
    pub fn env_policy(&self, backend_keys: Vec<String>) -> EnvPolicy {
        let list = |key: &str| -> Vec<String> {
            self.raw(key).map_or(Vec::new(), |(value, _)| {
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(String::from)
                    .collect()
            })
        };
        EnvPolicy::new(
            backend_keys,
            list("tools.bash.env_keep"),
            list("tools.bash.env_remove"),
        )
    }
}
