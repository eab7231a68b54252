//! Settings and where each one came from. Layers, lowest first: built-in defaults, the user's
//! `$XDG_CONFIG_HOME/agent-loop/config.toml`, `AGENT_LOOP_*` environment variables, flags.
//! The first three are text, read here into [`Layers`]; each setting is parsed from it once
//! into a typed [`Setting`] (the library's into `chat::RunSettings`, a front end's into its
//! own types), which a flag then replaces with its typed value. [`table`] is what
//! `agent-loop config` prints of them.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use super::ConfigError;

mod whole;
pub use whole::{whole_number, NotWhole, Whole};

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
        // Written in one string: every start asks this of every key.
        let mut env = String::with_capacity("AGENT_LOOP_".len() + self.name.len());
        env.push_str("AGENT_LOOP_");
        env.extend(self.name.chars().map(|c| match c {
            '.' => '_',
            c => c.to_ascii_uppercase(),
        }));
        env
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
        name: "max_tool_calls",
        flag: None,
        default: Some("64"),
        help: "tool calls run of one answer; the rest are answered as not run",
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
/// it passes to [`Layers::load_with`]: the library knows none of them. In config.toml they
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

/// A setting's typed value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    pub value: T,
    pub origin: Origin,
}

impl<T> Setting<T> {
    /// A value a command-line flag gave.
    pub fn flag(value: T, flag: &'static str) -> Self {
        Setting {
            value,
            origin: Origin::Flag(flag),
        }
    }

    /// Whether a command-line flag set it.
    pub fn is_flag(&self) -> bool {
        self.origin.is_flag()
    }
}

/// A value a command-line flag gave, if it gave one, replaces the setting: a flag wins over
/// everything.
pub fn by_flag<T>(setting: &mut Option<Setting<T>>, value: Option<T>, flag: &'static str) {
    if let Some(value) = value {
        *setting = Some(Setting::flag(value, flag));
    }
}

impl<T: std::fmt::Display> Setting<T> {
    /// A setting's value and origin in its row of [`table`], if it is set.
    pub fn shown(setting: &Option<Self>) -> Shown {
        setting
            .as_ref()
            .map(|s| (s.value.to_string(), s.origin.clone()))
    }
}

/// A setting's value as [`table`] shows it, and its origin; `None` when it is unset.
pub type Shown = Option<(String, Origin)>;

/// A comma-separated list (`allow`, `skill_dirs`; an array in config.toml), its items
/// trimmed and the empty ones left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct List<T>(pub Vec<T>);

impl<T: FromStr> FromStr for List<T> {
    type Err = T::Err;
    fn from_str(s: &str) -> Result<Self, T::Err> {
        s.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map(List)
    }
}

impl<T: std::fmt::Display> std::fmt::Display for List<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// The text of the settings config.toml, the environment and the built-in defaults give, and
/// where each came from; typed by [`Layers::setting`].
#[derive(Debug, Clone, Default)]
pub struct Layers {
    values: BTreeMap<&'static str, (String, Origin)>,
    /// The items of the settings config.toml gives as arrays, each kept whole (an item may
    /// hold a comma, as a glob's `{a,b}` does); the text above joins them for display.
    items: BTreeMap<&'static str, Vec<String>>,
    /// The front end's own settings, known besides [`KEYS`].
    front_ends: &'static [FrontEndKeys],
    /// The config file read, if any.
    pub file: Option<String>,
}

impl Layers {
    /// Built-in defaults, then `file` (if it exists), then the environment as `env` reports it.
    pub fn load(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        Layers::load_with(file, env, &[])
    }

    /// [`Layers::load`], knowing the settings of `front_ends` too.
    pub fn load_with(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
        front_ends: &'static [FrontEndKeys],
    ) -> Result<Self, ConfigError> {
        let mut settings = Layers {
            front_ends,
            ..Layers::default()
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
                settings.items.remove(key.name);
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
            let number = e.span().map(|s| super::source::line_of(&text, s.start));
            if let Some(key) = number.and_then(|n| super::source::key_without_value(&text, n)) {
                return ConfigError::BadSetting {
                    origin: Origin::File(format!("{name}:{}", number.unwrap_or_default())),
                    name: key.to_string(),
                    value: String::new(),
                    why: super::source::NO_VALUE.into(),
                };
            }
            let line = number.map_or(String::new(), |n| format!(":{n}"));
            ConfigError::syntax(format!("{name}{line}"), None, e)
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
            toml::Value::Array(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| i.to_string())
                    })
                    .collect();
                let text = items.join(",");
                self.items.insert(key.name, items);
                text
            }
            other => other.to_string(),
        };
        self.values.insert(key.name, (value, Origin::File(at)));
        Ok(())
    }

    /// Every setting known: the library's, then the front end's.
    fn keys(&self) -> impl Iterator<Item = &'static Key> + 'static {
        let front_ends = self.front_ends;
        KEYS.iter()
            .chain(front_ends.iter().flat_map(|front_end| front_end.keys))
    }

    /// A setting's text and origin as read, for the tests of the reading itself.
    #[cfg(test)]
    pub(crate) fn raw(&self, name: &str) -> Option<&(String, Origin)> {
        self.values.get(name)
    }

    /// The typed value and its origin; a bad value is an error naming where it came from.
    pub fn setting<T: FromStr>(&self, name: &str) -> Result<Option<Setting<T>>, ConfigError>
    where
        T::Err: std::fmt::Display,
    {
        let Some(text) = self.values.get(name) else {
            return Ok(None);
        };
        typed(name, text, text.0.parse()).map(Some)
    }

    /// A whole-number setting, at least `min`; a value that is not one says what is
    /// expected, in words.
    pub fn whole<T: Whole>(&self, name: &str, min: u64) -> Result<Option<Setting<T>>, ConfigError> {
        let Some(text) = self.values.get(name) else {
            return Ok(None);
        };
        typed(name, text, whole_number(&text.0, min)).map(Some)
    }

    /// A list setting, typed item by item: config.toml's array as its items, the text of
    /// the environment or a default split at commas.
    pub fn list<T: FromStr>(&self, name: &str) -> Result<Option<Setting<List<T>>>, ConfigError>
    where
        T::Err: std::fmt::Display,
    {
        let (Some(items), Some(text)) = (self.items.get(name), self.values.get(name)) else {
            return self.setting(name);
        };
        let parsed = items
            .iter()
            .map(|item| item.trim())
            .filter(|item| !item.is_empty())
            .map(str::parse)
            .collect::<Result<Vec<T>, _>>();
        typed(name, text, parsed.map(List)).map(Some)
    }

    /// The rows of [`table`] for these settings (a front end's), as the layers give them.
    pub fn shown<'a>(
        &'a self,
        names: impl IntoIterator<Item = &'a str> + 'a,
    ) -> impl Iterator<Item = (&'a str, Shown)> + 'a {
        names
            .into_iter()
            .map(|name| (name, self.values.get(name).cloned()))
    }
}

/// The setting `name`, given as `text` at its origin, with its value `parsed`; a value that
/// did not parse is an error naming all three.
fn typed<T, E: std::fmt::Display>(
    name: &str,
    (text, origin): &(String, Origin),
    parsed: Result<T, E>,
) -> Result<Setting<T>, ConfigError> {
    match parsed {
        Ok(value) => Ok(Setting {
            value,
            origin: origin.clone(),
        }),
        Err(e) => Err(ConfigError::BadSetting {
            origin: origin.clone(),
            name: name.to_string(),
            value: text.clone(),
            why: e.to_string(),
        }),
    }
}

/// The `agent-loop config` table of settings, values and origins, its columns as wide as
/// their longest entry.
pub fn table<'a>(settings: impl IntoIterator<Item = (&'a str, Shown)>) -> String {
    let rows: Vec<(&str, String, String)> = settings
        .into_iter()
        .map(|(name, shown)| match shown {
            Some((v, o)) => (name, v, o.to_string()),
            None => (name, "(unset)".to_string(), "-".to_string()),
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

/// The line (from 1) where `key` is set in `text`.
fn line_of_key(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with(key))
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests;
