//! What the bash tool and MCP stdio servers do not inherit from agent-loop's environment: the
//! secrets. A command the model wrote could print them, and its output goes to the backend.
//! Removed are every configured backend's `api_key_env`, `BRAVE_API_KEY`, the variables a
//! front end names as its own secrets (the Telegram bot's token), and every variable named
//! like a secret (see [`secret_name`]); config.toml's `[tools.bash]` keeps some (`env_keep`)
//! or removes more (`env_remove`). The values of the removed variables are also masked in every
//! tool result before it reaches the model.

use std::sync::OnceLock;

use crate::redact::Redactor;

/// Always removed, whatever their name looks like: web_search's key.
const ALWAYS: [&str; 1] = [crate::web::provider::BRAVE_KEY_ENV];

/// Words that make a variable a secret when one of them is a whole word of its name (split
/// on `_`, any case): `API_KEY`, `GITHUB_PAT`, `OPENAI_APIKEY`, `TOKEN`, but not `KEYBOARD`,
/// `TOKENIZER` or `PATH`.
const SECRET_WORDS: [&str; 14] = [
    "KEY",
    "KEYS",
    "APIKEY",
    "ACCESSKEY",
    "PRIVATEKEY",
    "TOKEN",
    "TOKENS",
    "PAT",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "PASS",
    "PASSPHRASE",
    "COOKIE",
];
/// Parts that make a variable a secret anywhere in a word of its name (`PGPASSWORD`,
/// `DB_PASSWD`, `CLIENTSECRET`).
const SECRET_PARTS: [&str; 2] = ["PASSW", "SECRET"];

/// Whether `name` is named like a secret: a word of it is one of [`SECRET_WORDS`] or holds
/// one of [`SECRET_PARTS`].
pub fn secret_name(name: &str) -> bool {
    // Compared in place, any case: every run asks this of each variable it has.
    name.split('_').any(|word| {
        SECRET_WORDS.iter().any(|w| word.eq_ignore_ascii_case(w))
            || SECRET_PARTS.iter().any(|part| holds(word, part))
    })
}

/// Whether `word` holds `part` (upper case), in any case; the whole part is compared only
/// where its first letter is.
fn holds(word: &str, part: &str) -> bool {
    let part = part.as_bytes();
    (word.as_bytes().windows(part.len()))
        .any(|w| w[0].to_ascii_uppercase() == part[0] && w.eq_ignore_ascii_case(part))
}

/// The environment policy of the tools.
#[derive(Debug, Clone, Default)]
pub struct EnvPolicy {
    /// Every configured backend's `api_key_env`.
    backend_keys: Vec<String>,
    /// Kept although they look like secrets (`[tools.bash] env_keep`).
    keep: Vec<String>,
    /// Removed besides (`[tools.bash] env_remove`).
    remove: Vec<String>,
    /// A front end's own secrets (the Telegram bot's token variable).
    front_end: Vec<String>,
    /// Whether the values of every removed variable are masked (a policy made by
    /// [`EnvPolicy::new`]), not only the front end's and `secrets`.
    masks_removed: bool,
    /// Values masked that are in no variable (an MCP login's tokens).
    secrets: Vec<String>,
    /// What tool results are masked of, read from the environment when first needed: a run
    /// whose model calls no tool never needs it.
    redactor: OnceLock<Redactor>,
}

impl EnvPolicy {
    pub fn new(backend_keys: Vec<String>, keep: Vec<String>, remove: Vec<String>) -> Self {
        EnvPolicy {
            backend_keys,
            keep,
            remove,
            masks_removed: true,
            ..EnvPolicy::default()
        }
    }

    /// The same policy, also removing (and masking) the variables `names`: a front end's own
    /// secrets, which agent-loop's libraries do not name.
    pub fn also_removing(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.front_end.extend(names);
        self.redactor = OnceLock::new();
        self
    }

    /// Whether the variable `name` is kept from the tools.
    pub fn removes(&self, name: &str) -> bool {
        if self.keep.iter().any(|k| k == name) {
            return false;
        }
        self.remove.iter().any(|r| r == name)
            || self.backend_keys.iter().any(|k| k == name)
            || self.front_end.iter().any(|k| k == name)
            || ALWAYS.contains(&name)
            || secret_name(name)
    }

    /// The variables set now that the tools do not get.
    pub fn removed(&self) -> Vec<String> {
        let mut names: Vec<String> = self.removed_vars().map(|(name, _)| name).collect();
        names.sort();
        names
    }

    /// The variables set now that the tools do not get, with their values.
    fn removed_vars(&self) -> impl Iterator<Item = (String, std::ffi::OsString)> + '_ {
        std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value)))
            .filter(|(name, _)| self.removes(name))
    }

    /// Removes the secrets from what `command`'s child inherits.
    pub fn apply(&self, command: &mut tokio::process::Command) {
        for name in self.removed() {
            command.env_remove(name);
        }
    }

    /// The same policy, also masking `secrets` (values that are in no variable: an MCP
    /// login's tokens) in tools' output.
    pub fn with_secrets(&self, secrets: impl IntoIterator<Item = String>) -> Self {
        let mut policy = self.clone();
        policy.secrets.extend(secrets);
        policy.redactor = OnceLock::new();
        policy
    }

    /// Masks the removed variables' values in a tool's output.
    pub fn redact(&self, text: &str) -> String {
        self.redactor().redact(text)
    }

    /// The removed variables' values (the values as the variables are listed, rather than
    /// each looked up again by name), the front end's and `secrets`.
    fn redactor(&self) -> &Redactor {
        self.redactor.get_or_init(|| {
            let removed = (self.masks_removed.then(|| self.removed_vars()).into_iter())
                .flatten()
                .filter_map(|(_, value)| value.into_string().ok());
            let front_end = self.front_end.iter().filter_map(|n| std::env::var(n).ok());
            let secrets = self.secrets.iter().cloned();
            Redactor::default().with(removed.chain(front_end).chain(secrets))
        })
    }

    /// The policy in a few lines, for `agent-loop config`.
    pub fn describe(&self) -> String {
        let list = |names: &[String]| {
            if names.is_empty() {
                "(none)".to_string()
            } else {
                names.join(", ")
            }
        };
        format!(
            "Tools (bash, MCP servers) do not inherit: backends' api_key_env ({}), {}, \
             variables with a word KEY, TOKEN, PAT, CREDENTIAL(S), PASS... or a part PASSW, \
             SECRET in their name\n  \
             env_remove: {}\n  env_keep: {}\n  removed now: {}\n",
            list(&self.backend_keys),
            ALWAYS.join(", "),
            list(&self.remove),
            list(&self.keep),
            list(&self.removed()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_front_ends_secrets_are_removed_whatever_their_name() {
        let name = "AGENT_LOOP_TEST_BOT_ENV_56";
        let policy = EnvPolicy::default();
        assert!(!policy.removes(name));
        let policy = policy.also_removing([name.to_string()]);
        assert!(policy.removes(name));
        assert!(!policy.removes("AGENT_LOOP_TEST_PLAIN_56"));
    }

    /// Values in no variable are masked too, also by a policy made from one that has masked
    /// text already (its masking is made when first used).
    #[test]
    fn secrets_added_later_are_masked() {
        let policy = EnvPolicy::default();
        assert_eq!(policy.redact("tok-0123456789"), "tok-0123456789");
        let policy = policy.with_secrets(["tok-0123456789".to_string()]);
        assert_eq!(policy.redact("a tok-0123456789"), "a [REDACTED]");
        let more = policy.with_secrets(["other-0123456789".to_string()]);
        assert_eq!(
            more.redact("tok-0123456789 other-0123456789"),
            "[REDACTED] [REDACTED]"
        );
    }

    #[test]
    fn secrets_by_name_config_and_backend() {
        let policy = EnvPolicy::new(
            vec!["GROQ_KEY".into()],
            vec!["GH_TOKEN".into()],
            vec!["MY_PRIVATE".into()],
        );
        for name in [
            "GROQ_KEY",
            "MY_PRIVATE",
            "TELEGRAM_BOT_TOKEN",
            "BRAVE_API_KEY",
            "OPENAI_API_KEY",
            "NPM_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "PGPASSWORD",
            "API_KEY",
            "STRIPE_KEY",
            "TOKEN",
            "SECRET",
            "DB_PASSWD",
            "GITHUB_PAT",
            "OPENAI_APIKEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "openai_api_key",
        ] {
            assert!(policy.removes(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "GH_TOKEN",
            "TOKENIZER",
            "LANG",
            "KEYBOARD",
            "PATTERN",
            "SSH_AUTH_SOCK",
            "PWD",
            "MONKEY_BUSINESS",
        ] {
            assert!(!policy.removes(name), "{name}");
        }
    }
}
