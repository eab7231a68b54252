//! Keeps secrets out of everything agent-loop writes: the values of the environment variables
//! that hold API keys are replaced by `[REDACTED]` in logs, session files and displays.
//! A secret that appears while agent-loop runs (a token an MCP login refreshed mid-session, a
//! header value) is [`learn`]ed by every redactor of the process at once: it may be echoed
//! into any text before anyone could hand it to each of the redactors cloned about.

use std::sync::RwLock;

/// The secrets learned while running, longest first.
static LEARNED: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Every redactor of this process masks `secrets` from now on (those long enough to be a
/// key rather than a word).
pub fn learn(secrets: impl IntoIterator<Item = String>) {
    let mut learned = LEARNED.write().unwrap_or_else(|e| e.into_inner());
    learned.extend(secrets.into_iter().filter(|v| v.trim().len() >= 8));
    learned.sort();
    learned.dedup();
    learned.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// Replaces known secret values in text.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

pub const MASK: &str = "[REDACTED]";

impl Redactor {
    /// The values of the named environment variables that are set (and long enough to be a
    /// key rather than a word that happens to appear in text).
    pub fn from_env(names: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = names
            .into_iter()
            .filter_map(|n| std::env::var(&n).ok())
            .filter(|v| v.trim().len() >= 8)
            .collect();
        secrets.sort();
        secrets.dedup();
        // Longest first, so a key that contains another is masked whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Redactor { secrets }
    }

    /// This one, masking `secrets` too (a server's OAuth tokens).
    pub fn with(mut self, secrets: impl IntoIterator<Item = String>) -> Self {
        let secrets = secrets.into_iter().filter(|v| v.trim().len() >= 8);
        self.secrets.extend(secrets);
        self.secrets.sort();
        self.secrets.dedup();
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty() && LEARNED.read().map_or(true, |l| l.is_empty())
    }

    pub fn redact(&self, text: &str) -> String {
        let learned = LEARNED.read().unwrap_or_else(|e| e.into_inner());
        let mut secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        if !learned.is_empty() {
            secrets.extend(learned.iter().map(String::as_str));
            // Longest first, so a key that contains another is masked whole.
            secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
        let mut out = text.to_string();
        for secret in secrets {
            if out.contains(secret) {
                out = out.replace(secret, MASK);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_longest_first() {
        let r = Redactor {
            secrets: vec!["sk-abcdef123456".into(), "sk-abcdef".into()],
        };
        assert_eq!(
            r.redact("key sk-abcdef123456 and sk-abcdef."),
            "key [REDACTED] and [REDACTED]."
        );
    }

    #[test]
    fn a_learned_secret_is_masked_by_redactors_made_before() {
        let r = Redactor::default().with(["sk-known-0123".to_string()]);
        learn(["learned-token-0123456789".to_string(), "short".to_string()]);
        assert_eq!(
            r.redact("sk-known-0123 learned-token-0123456789 short"),
            "[REDACTED] [REDACTED] short"
        );
    }
}
