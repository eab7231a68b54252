//! Settings and where each one came from. Layers, lowest first: built-in defaults, the user's
//! `$XDG_CONFIG_HOME/agent-loop/config.toml`, `AGENT_LOOP_*` environment variables, flags.
//! `agent-loop config` prints the result.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use super::ConfigError;

/// One known setting: its key in `config.toml`, its environment variable, its flag, its
/// built-in default and what it does.
#[derive(Debug)]
pub struct Key {
    pub name: &'static str,
    pub flag: Option<&'static str>,
    pub default: Option<&'static str>,
    pub help: &'static str,
}

impl Key {
    pub fn env(&self) -> String {
        format!(
            "AGENT_LOOP_{}",
            self.name.to_ascii_uppercase().replace('.', "_")
        )
    }
}

/// Every setting, in the order `agent-loop config` lists them.
pub const KEYS: &[Key] = &[
    Key {
        name: "backend",
        flag: Some("--backend"),
        default: None,
        help: "backend used when none is named",
    },
    Key {
        name: "model",
        flag: Some("--model"),
        default: None,
        help: "model of the backend ({model} in its args, or its model_args)",
    },
    Key {
        name: "max_iterations",
        flag: Some("--max-iterations"),
        default: Some("10"),
        help: "backend calls allowed in one turn",
    },
    Key {
        name: "approval",
        flag: Some("--approval"),
        default: Some("on-write"),
        help: "when tools ask first: never, on-write, always-ask",
    },
    Key {
        name: "allow",
        flag: Some("--allow"),
        default: None,
        help: "allow rules, comma-separated (TOOL or TOOL:GLOB)",
    },
    Key {
        name: "context",
        flag: Some("--context"),
        default: None,
        help: "history per request: continue, fresh, sliding:N, summarize",
    },
    Key {
        name: "max_context_tokens",
        flag: None,
        default: None,
        help: "token budget of each request (overrides the backend's)",
    },
    Key {
        name: "tool_result_max_chars",
        flag: None,
        default: None,
        help: "longer tool results are cut, the full text saved as an artifact",
    },
    Key {
        name: "count_tokens",
        flag: None,
        default: Some("local"),
        help: "api: Anthropic and Gemini backends count tokens through their API (a request a message)",
    },
    Key {
        name: "tools.bash.env_keep",
        flag: None,
        default: None,
        help: "secret-looking variables bash and MCP servers still get",
    },
    Key {
        name: "tools.bash.env_remove",
        flag: None,
        default: None,
        help: "more variables bash and MCP servers do not get",
    },
    Key {
        name: "system_prompt",
        flag: None,
        default: None,
        help: "your system prompt (else --system FILE, else system.md in the config folder)",
    },
    Key {
        name: "system_mode",
        flag: None,
        default: Some("append"),
        help: "append your system prompt to the built-in one, or replace its opening",
    },
    Key {
        name: "skill_dirs",
        flag: None,
        default: None,
        help:
            "more folders of skills, after the project's, ~/.agents/skills and the config folder's",
    },
    Key {
        name: "web_connect_timeout",
        flag: None,
        default: Some("10"),
        help: "read_url: seconds to look up and connect to a host",
    },
    Key {
        name: "web_timeout",
        flag: None,
        default: Some("30"),
        help: "read_url: seconds for a whole read (redirects, body, conversion); web_search too",
    },
    Key {
        name: "web_max_bytes",
        flag: None,
        default: Some("5000000"),
        help: "read_url: bytes of a page read at most (the rest is left out, with a note)",
    },
    Key {
        name: "web_keep_chrome",
        flag: None,
        default: Some("false"),
        help: "read_url: keep a page's <nav>, <header> and <footer> (left out by default)",
    },
    Key {
        name: "debug",
        flag: Some("--debug"),
        default: Some("false"),
        help: "internal tracing on stderr",
    },
];

/// The settings of a front end (the binary's display and output, the Telegram bot's), which
/// it passes to [`Settings::load_with`]: the library knows none of them. In config.toml they
/// are top-level keys under their own names (`display = "plain"`), or, when the front end
/// names a `table`, the entries of that table, each an `(entry, key)` pair
/// (`[telegram] allowed_users` is `telegram_users`).
#[derive(Debug)]
pub struct FrontEndKeys {
    pub keys: &'static [Key],
    pub table: Option<&'static str>,
    pub entries: &'static [(&'static str, &'static str)],
}

/// The file's keys with tables flattened: `[tools.bash] env_keep` is `tools.bash.env_keep`.
fn flatten(table: toml::Table) -> Vec<(String, toml::Value)> {
    let mut out = Vec::new();
    for (k, v) in table {
        match v {
            toml::Value::Table(inner) => out.extend(
                flatten(inner)
                    .into_iter()
                    .map(|(sub, v)| (format!("{k}.{sub}"), v)),
            ),
            v => out.push((k, v)),
        }
    }
    out
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Default,
    File(String),
    Env(String),
    Flag(&'static str),
}

impl Origin {
    /// Whether a command-line flag set it.
    pub fn is_flag(&self) -> bool {
        matches!(self, Origin::Flag(_))
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("built-in default"),
            Origin::File(at) => f.write_str(at),
            Origin::Env(var) => write!(f, "environment {var}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// The effective settings: a value (as text) and its origin per key.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    values: BTreeMap<&'static str, (String, Origin)>,
    /// The front end's own settings, known besides [`KEYS`].
    front_ends: &'static [FrontEndKeys],
    /// The config file read, if any.
    pub file: Option<String>,
}

impl Settings {
    /// Built-in defaults, then `file` (if it exists), then the environment as `env` reports it.
    pub fn load(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        Settings::load_with(file, env, &[])
    }

    /// [`Settings::load`], knowing the settings of `front_ends` too.
    pub fn load_with(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
        front_ends: &'static [FrontEndKeys],
    ) -> Result<Self, ConfigError> {
        let mut settings = Settings {
            front_ends,
            ..Settings::default()
        };
        for key in settings.keys() {
            if let Some(d) = key.default {
                settings
                    .values
                    .insert(key.name, (d.to_string(), Origin::Default));
            }
        }
        if let Some(path) = file.filter(|p| p.is_file()) {
            settings.read_file(path)?;
        }
        for key in settings.keys() {
            if let Some(v) = env(&key.env()).filter(|v| !v.is_empty()) {
                settings
                    .values
                    .insert(key.name, (v, Origin::Env(key.env())));
            }
        }
        Ok(settings)
    }

    fn read_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let doc: toml::Spanned<toml::Table> = toml::from_str(&text).map_err(|e| {
            let line = e.span().map_or(String::new(), |s| {
                format!(":{}", super::source::line_of(&text, s.start))
            });
            ConfigError::Syntax {
                place: format!("{name}{line}"),
                source: e,
            }
        })?;
        for (k, v) in flatten(doc.into_inner()) {
            let leaf = k.rsplit('.').next().unwrap_or(&k);
            let at = format!("{name}:{}", line_of_key(&text, leaf));
            // `[telegram] allowed_users` and the like are the front end's `telegram_*`.
            let table = self.front_ends.iter().find_map(|front_end| {
                let table = front_end.table?;
                let entry = k.strip_prefix(table)?.strip_prefix('.')?;
                Some((front_end, table, entry))
            });
            let k = match table {
                Some((front_end, table, entry)) => {
                    match front_end.entries.iter().find(|(t, _)| *t == entry) {
                        Some((_, key)) => key.to_string(),
                        None => {
                            return Err(ConfigError::UnknownTableSetting {
                                at,
                                table,
                                name: entry.to_string(),
                                known: front_end.entries.iter().map(|(t, _)| *t).collect(),
                            })
                        }
                    }
                }
                None => k,
            };
            self.insert_from_file(&k, v, at)?;
        }
        self.file = Some(name);
        Ok(())
    }

    /// Sets the setting `k` from a value of the file (at `at`); an unknown key is an error.
    fn insert_from_file(&mut self, k: &str, v: toml::Value, at: String) -> Result<(), ConfigError> {
        let Some(key) = self.keys().find(|key| key.name == k) else {
            return Err(ConfigError::UnknownSetting {
                at,
                name: k.to_string(),
                known: self.keys().map(|k| k.name).collect(),
            });
        };
        let value = match v {
            toml::Value::String(s) => s,
            toml::Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| i.to_string())
                })
                .collect::<Vec<_>>()
                .join(","),
            other => other.to_string(),
        };
        self.values.insert(key.name, (value, Origin::File(at)));
        Ok(())
    }

    /// A flag given on the command line wins over everything.
    pub fn flag(&mut self, name: &'static str, value: Option<String>) {
        let key = self.keys().find(|k| k.name == name).expect("known setting");
        if let Some(v) = value {
            self.values
                .insert(key.name, (v, Origin::Flag(key.flag.unwrap_or("--?"))));
        }
    }

    /// A flag that sets another setting: `--yes` is `approval` = `never`.
    pub fn flag_as(&mut self, name: &'static str, value: &str, flag: &'static str) {
        let key = self.keys().find(|k| k.name == name).expect("known setting");
        self.values
            .insert(key.name, (value.to_string(), Origin::Flag(flag)));
    }

    /// Every setting known: the library's, then the front end's.
    fn keys(&self) -> impl Iterator<Item = &'static Key> + 'static {
        let front_ends = self.front_ends;
        KEYS.iter()
            .chain(front_ends.iter().flat_map(|front_end| front_end.keys))
    }

    pub fn raw(&self, name: &str) -> Option<&(String, Origin)> {
        self.values.get(name)
    }

    /// The typed value; a bad value is an error naming where it came from.
    pub fn get<T: FromStr>(&self, name: &str) -> Result<Option<T>, ConfigError>
    where
        T::Err: std::fmt::Display,
    {
        match self.values.get(name) {
            None => Ok(None),
            Some((value, origin)) => {
                value
                    .parse()
                    .map(Some)
                    .map_err(|e: T::Err| ConfigError::BadSetting {
                        origin: origin.clone(),
                        name: name.to_string(),
                        value: value.clone(),
                        why: e.to_string(),
                    })
            }
        }
    }

    /// `max_context_tokens`, held to the minimum a backend entry is held to; a value below
    /// it is an error naming where it was set.
    pub fn max_context_tokens(&self) -> Result<Option<u64>, ConfigError> {
        let n = self.get::<u64>("max_context_tokens")?;
        match (
            n.and_then(crate::context::modes::context_tokens_too_small),
            self.raw("max_context_tokens"),
        ) {
            (Some(why), Some((value, origin))) => Err(ConfigError::BadSetting {
                origin: origin.clone(),
                name: "max_context_tokens".into(),
                value: value.clone(),
                why,
            }),
            _ => Ok(n),
        }
    }

    /// The `agent-loop config` table, its columns as wide as their longest entry.
    pub fn describe(&self) -> String {
        let rows: Vec<(&str, String, String)> = self
            .keys()
            .map(|key| match self.values.get(key.name) {
                Some((v, o)) => (key.name, v.clone(), o.to_string()),
                None => (key.name, "(unset)".to_string(), "-".to_string()),
            })
            .collect();
        let width = |column: &dyn Fn(&(&str, String, String)) -> usize, title: &str| {
            rows.iter().map(column).max().unwrap_or(0).max(title.len())
        };
        let name_w = width(&|r| r.0.chars().count(), "SETTING");
        let value_w = width(&|r| r.1.chars().count(), "VALUE");
        let mut out = format!("{:<name_w$}  {:<value_w$}  FROM\n", "SETTING", "VALUE");
        for (name, value, origin) in rows {
            out.push_str(&format!("{name:<name_w$}  {value:<value_w$}  {origin}\n"));
        }
        out
    }
}

/// The line (from 1) where `key` is set in `text`.
fn line_of_key(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with(key))
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_and_origins() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(
            &file,
            "backend = \"demo\"\nmax_iterations = 5\nallow = [\"read\", \"bash:ls*\"]\n",
        )
        .unwrap();
        let env = |k: &str| (k == "AGENT_LOOP_MAX_ITERATIONS").then(|| "7".to_string());
        let mut s = Settings::load(Some(&file), &env).unwrap();
        assert_eq!(s.get::<String>("backend").unwrap().as_deref(), Some("demo"));
        assert_eq!(
            s.raw("backend").unwrap().1,
            Origin::File(format!("{}:1", file.display()))
        );
        assert_eq!(s.get::<u32>("max_iterations").unwrap(), Some(7));
        assert_eq!(s.raw("allow").unwrap().0, "read,bash:ls*");
        assert_eq!(
            s.get::<String>("approval").unwrap().as_deref(),
            Some("on-write")
        );
        s.flag("max_iterations", Some("9".into()));
        assert_eq!(s.get::<u32>("max_iterations").unwrap(), Some(9));
        let table = s.describe();
        let row = table
            .lines()
            .find(|l| l.starts_with("max_iterations"))
            .unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["max_iterations", "9", "flag", "--max-iterations"]
        );
        // Every column starts at the same place on every line, long names included.
        let value_at = |l: &str| l.find("  ").map(|i| i + l[i..].find(|c| c != ' ').unwrap());
        let starts: std::collections::BTreeSet<_> = table.lines().map(value_at).collect();
        assert_eq!(starts.len(), 1, "{table}");
    }

    #[test]
    fn tables_flatten_to_dotted_keys() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "[tools.bash]\nenv_keep = [\"A_TOKEN\", \"B\"]\n").unwrap();
        let env = |k: &str| (k == "AGENT_LOOP_TOOLS_BASH_ENV_REMOVE").then(|| "C".to_string());
        let s = Settings::load(Some(&file), &env).unwrap();
        assert_eq!(s.raw("tools.bash.env_keep").unwrap().0, "A_TOKEN,B");
        assert_eq!(
            s.raw("tools.bash.env_keep").unwrap().1,
            Origin::File(format!("{}:2", file.display()))
        );
        assert_eq!(s.raw("tools.bash.env_remove").unwrap().0, "C");
    }

    #[test]
    fn bad_values_and_keys_name_their_origin() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "backend = \"demo\"\nmax_iteration = 5\n").unwrap();
        let err = Settings::load(Some(&file), &|_| None).unwrap_err();
        assert!(
            err.to_string()
                .contains("config.toml:2: unknown setting `max_iteration`"),
            "{}",
            err.to_string()
        );
        let env = |k: &str| (k == "AGENT_LOOP_MAX_ITERATIONS").then(|| "lots".to_string());
        let s = Settings::load(None, &env).unwrap();
        let err = s.get::<u32>("max_iterations").unwrap_err();
        assert_eq!(err.to_string(), "environment AGENT_LOOP_MAX_ITERATIONS: setting `max_iterations` = `lots`: invalid digit found in string");
    }

    /// A front end's settings are known only to a run that passes them: from its table, the
    /// environment and `config`'s listing; a table entry it lacks is an error naming those
    /// it has.
    #[test]
    fn a_front_ends_settings_come_with_it() {
        const BOT: FrontEndKeys = FrontEndKeys {
            keys: &[Key {
                name: "bot_users",
                flag: None,
                default: Some("none"),
                help: "who",
            }],
            table: Some("bot"),
            entries: &[("users", "bot_users")],
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "[bot]\nusers = [\"1\", \"2\"]\n").unwrap();
        let none = |_: &str| None;
        let s = Settings::load_with(Some(&file), &none, &[BOT]).unwrap();
        assert_eq!(s.raw("bot_users").unwrap().0, "1,2");
        assert!(s.describe().contains("bot_users"));
        let err = Settings::load(Some(&file), &none).unwrap_err().to_string();
        assert!(err.contains("bot.users"), "{err}");
        std::fs::write(&file, "[bot]\nwho = 1\n").unwrap();
        let err = Settings::load_with(Some(&file), &none, &[BOT])
            .unwrap_err()
            .to_string();
        assert!(err.contains("who") && err.contains("users"), "{err}");
    }

    /// A front end's settings without a table are top-level keys, which the library alone
    /// does not know.
    #[test]
    fn a_front_ends_top_level_settings() {
        const SCREEN: FrontEndKeys = FrontEndKeys {
            keys: &[Key {
                name: "screen",
                flag: Some("--screen"),
                default: Some("auto"),
                help: "how",
            }],
            table: None,
            entries: &[],
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "backend = \"demo\"\nscreen = \"plain\"\n").unwrap();
        let none = |_: &str| None;
        let mut s = Settings::load_with(Some(&file), &none, &[SCREEN]).unwrap();
        assert_eq!(
            s.raw("screen").unwrap(),
            &(
                "plain".into(),
                Origin::File(format!("{}:2", file.display()))
            )
        );
        s.flag("screen", Some("wide".into()));
        assert_eq!(s.raw("screen").unwrap().1, Origin::Flag("--screen"));
        let err = Settings::load(Some(&file), &none).unwrap_err().to_string();
        assert!(err.contains(":2: unknown setting `screen`"), "{err}");
    }
}
