//! Keeps secrets out of everything agent-loop writes: the values of the environment variables
//! that hold API keys are replaced by `[REDACTED]` in logs, session files and displays.

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
        self.secrets.is_empty()
    }

    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), MASK);
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
}
