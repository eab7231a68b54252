//! ACP agent entries of `backends.toml` (`type = "acp"`): an agent that speaks the Agent
//! Client Protocol on its stdin and stdout (see `backend::acp`). The agent keeps its own
//! conversation, tools and prompts, so an entry says only how to start it.

use std::collections::BTreeMap;

use super::keys::located_pattern;
use super::launch::{Kind, Launch};
use super::raw::{RawBackend, RawGuard};
use super::ConfigError;
use crate::parse::Pattern;

/// The `type` value of these entries.
pub const ACP_TYPE: &str = "acp";

/// A fully resolved ACP agent.
#[derive(Debug, Clone)]
pub struct AcpDef {
    /// How it starts; its `model` is chosen with `session/set_model` where the agent offers
    /// models (`--model`).
    pub launch: Launch,
    /// The agent's own mode in which it asks no permission, set with `session/set_mode`
    /// under `--approval never` (`auto_mode`).
    pub auto_mode: Option<String>,
    /// The agent's own mode in which it asks before it changes things, set with
    /// `session/set_mode` before every prompt under any other approval (`ask_mode`): the
    /// mode a session starts in may be one the agent remembered from an earlier run.
    pub ask_mode: Option<String>,
    /// A message of the agent's that this matches whole is a notice, not answer text
    /// (`notice_regex`): codex-acp sends its warnings as answer text.
    pub notice: Option<Pattern>,
    /// The enabled `[mcp.servers.NAME]`, which the agent is given to connect to itself.
    pub mcp_servers: Vec<super::mcp::ServerDef>,
    /// What keeps the agent asking whatever its own settings allow (`[backends.NAME.guard]`),
    /// passed when agent-loop's approval asks: its settings files can allow edits and
    /// commands without a question, and outrank its mode.
    pub guard: Option<Guard>,
}

/// Settings of higher precedence than the agent's own files, which make it ask before it
/// edits or runs a command: arguments, variables, a file agent-loop writes for it (its path
/// is `{file}` in `args` and `env`), and what `session/new` and `session/load` carry in
/// `_meta`. Each agent takes them its own way, so each preset says how.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Guard {
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub file: Option<String>,
    /// The file's name (agents read some files by their extension), in a private folder.
    pub file_name: String,
    /// The file that `file` takes the place of (a system settings file, when a variable
    /// names `{file}`): its settings are kept, `file` merged over them (JSON).
    pub replaces: Option<String>,
    /// An object merged into the `_meta` of `session/new` and `session/load`.
    pub meta: Option<toml::Table>,
    /// Paths relative to a project folder: where one is found (`backend::guard::refused`),
    /// the agent is not started, for it would run what they hold unasked and nothing it can
    /// be passed turns that off.
    pub refuse: Vec<String>,
    /// Settings files (JSON) relative to a project folder, each with keys (dotted paths):
    /// where one of them is set in such a file found so, likewise (gemini's
    /// `.gemini/settings.json` `hooks`).
    pub refuse_keys: BTreeMap<String, Vec<String>>,
    /// Variables passed as you set them (`keep_env`): where neither agent-loop's environment
    /// nor the entry's `env` has one, it is set to what the first of `keep_env_from` (your
    /// own dotenv files) that exists gives it, or to nothing. An agent that reads a
    /// project's `.env` for what is not set already then takes none of these from it: a
    /// provider's address there would receive your key and the conversation.
    pub keep_env: Vec<String>,
    pub keep_env_from: Vec<String>,
    /// Arguments added for each name under a table of your own TOML files (`per_name`).
    pub per_name: Option<PerName>,
}

/// Arguments added once where a name is under `table` in those of `files` that exist (paths
/// as `own_files::expand` reads them; a relative one in the working folder and each above it,
/// up to the repository's root, your home left out), `{entries}` replaced by one TOML inline
/// table that holds, for each name, `entry` with `when`'s tables for the keys its entry sets:
/// codex's MCP servers turned off (`-c mcp_servers={entries}`), for it has no switch that
/// drops them all. One table, each name a quoted key: codex splits a `-c` key at every dot,
/// so `mcp_servers.NAME.enabled` cannot name `a.b`, and a second `-c mcp_servers=` would
/// replace the first. Tables merge with its files', so a server keeps its own keys; an entry
/// it has not loaded (a project it does not trust) stands complete through `when`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PerName {
    pub files: Vec<String>,
    pub table: String,
    pub args: Vec<String>,
    pub entry: toml::Table,
    pub when: BTreeMap<String, toml::Table>,
}

impl PerName {
    /// The arguments for `found`, each name with the keys its entry sets (none where
    /// nothing was found).
    pub fn args_for(&self, found: &[(String, Vec<String>)]) -> Vec<String> {
        if found.is_empty() {
            return Vec::new();
        }
        let entries: Vec<(&str, toml::Value)> = found
            .iter()
            .map(|(name, keys)| {
                let mut entry = self.entry.clone();
                for when in keys.iter().filter_map(|k| self.when.get(k)) {
                    entry.extend(when.clone());
                }
                (name.as_str(), toml::Value::Table(entry))
            })
            .collect();
        let entries = inline(&entries);
        self.args
            .iter()
            .map(|a| a.replace(GUARD_ENTRIES, &entries))
            .collect()
    }
}

/// `items` as a TOML inline table on one line, every key quoted (a name with a dot or a
/// blank stays one key).
fn inline(items: &[(&str, toml::Value)]) -> String {
    let items: Vec<String> = items
        .iter()
        .map(|(key, value)| {
            let value = match value {
                toml::Value::Table(table) => {
                    let items: Vec<_> =
                        table.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                    inline(&items)
                }
                value => value.to_string(),
            };
            format!("{}={value}", quoted(key))
        })
        .collect();
    format!("{{{}}}", items.join(","))
}

/// `key` as a TOML basic string on one line (a key cannot be a multi-line string, which is
/// how the `toml` crate writes a newline).
fn quoted(key: &str) -> String {
    let mut out = String::from('"');
    for c in key.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The placeholder for the guard file's path.
pub const GUARD_FILE: &str = "{file}";

/// The placeholder for the names of the MCP servers agent-loop gives the agent (comma-separated),
/// or, where it gives none, a name no server has: what an allow-list of server names is set
/// to, so that the agent starts none of its settings' servers (a project's among them).
pub const GUARD_MCP_SERVERS: &str = "{mcp_servers}";

/// The placeholder, in `per_name.args`, for the inline table of the names found.
pub const GUARD_ENTRIES: &str = "{entries}";

impl Guard {
    /// Checks a guard table; `meta` only where the agent speaks ACP (`acp`), for only
    /// session/new and session/load carry `_meta`.
    pub(super) fn resolve(
        raw: RawGuard,
        name: &str,
        defined_at: &str,
        acp: bool,
    ) -> Result<Guard, ConfigError> {
        if raw.meta.is_some() && !acp {
            let why = "`meta` is for ACP agents (a CLI or terminal agent has no `_meta`)";
            return Err(ConfigError::key(defined_at, name, "guard", why));
        }
        let guard = Guard {
            args: raw.args.unwrap_or_default(),
            env: raw.env.unwrap_or_default(),
            file: raw.file,
            file_name: raw.file_name.unwrap_or_else(|| "guard".into()),
            replaces: raw.replaces,
            meta: raw.meta,
            refuse: raw.refuse.unwrap_or_default(),
            refuse_keys: raw.refuse_keys.unwrap_or_default(),
            keep_env: raw.keep_env.unwrap_or_default(),
            keep_env_from: raw.keep_env_from.unwrap_or_default(),
            per_name: raw.per_name.map(|p| PerName {
                files: p.files,
                table: p.table,
                args: p.args,
                entry: p.entry.unwrap_or_default(),
                when: p.when.unwrap_or_default(),
            }),
        };
        let names_file = guard
            .args
            .iter()
            .chain(guard.env.values())
            .any(|v| v.contains(GUARD_FILE));
        let why = match (&guard.file, names_file) {
            (Some(_), false) => Some("`file` is written, but no `args` or `env` names `{file}`"),
            (None, true) => Some("`{file}` is named, but there is no `file`"),
            _ if guard.file_name.contains('/') || guard.file_name.starts_with('.') => {
                Some("`file_name` is a name, not a path")
            }
            _ if guard.replaces.is_some() && !guard.env.values().any(|v| v == GUARD_FILE) => {
                Some("`replaces` is set, but no variable of `env` is `{file}`")
            }
            _ if guard.refuse.iter().chain(guard.refuse_keys.keys()).any(|p| {
                let p = std::path::Path::new(p);
                p.is_absolute() || p.components().any(|c| c.as_os_str() == "..")
            }) =>
            {
                Some("`refuse` and `refuse_keys` hold paths inside a project folder, not absolute or with `..`")
            }
            _ if !guard.keep_env_from.is_empty() && guard.keep_env.is_empty() => {
                Some("`keep_env_from` is set, but `keep_env` names no variable")
            }
            _ if guard.per_name.as_ref().is_some_and(|p| {
                p.table.is_empty() || !p.args.iter().any(|a| a.contains(GUARD_ENTRIES))
            }) =>
            {
                Some(
                    "`per_name` needs a `table` and `args` that name `{entries}`, the one \
                     table of every name (`{name}`, one name an argument, is no longer taken: \
                     `args = [\"-c\", \"mcp_servers={entries}\"]`, `entry = { enabled = false }`)",
                )
            }
            _ => None,
        };
        match why {
            Some(why) => Err(ConfigError::key(defined_at, name, "guard", why)),
            None => Ok(guard),
        }
    }
}

/// Checks a `type = "acp"` entry; every mistake names the file, the line, the backend and
/// the key.
pub(super) fn resolve(
    name: &str,
    mut raw: RawBackend,
    defined_at: String,
) -> Result<AcpDef, ConfigError> {
    let mut ignored = raw.pty_only_keys();
    ignored.extend(raw.http_only_keys());
    ignored.extend(
        raw.cli_only_keys()
            .into_iter()
            .filter(|k| !["command", "args", "env", "cwd", "progress_s", "tools"].contains(k)),
    );
    if let Some(key) = ignored.first() {
        return Err(ConfigError::key(
            &defined_at,
            name,
            key,
            "a `type = \"acp\"` backend does not read it (the agent keeps its own \
             conversation, tools and output format)",
        ));
    }
    let kind = Kind {
        agent: "an ACP agent",
        messages: "are sent over the protocol, not as arguments",
    };
    let notice = match &raw.notice_regex {
        Some(regex) => Some(located_pattern(regex, false, name, "notice_regex")?.0),
        None => None,
    };
    let (guard, at) = (raw.guard.take(), defined_at.clone());
    Ok(AcpDef {
        launch: Launch::resolve(name, &mut raw, defined_at, kind)?,
        notice,
        auto_mode: raw.auto_mode.filter(|m| !m.is_empty()),
        ask_mode: raw.ask_mode.filter(|m| !m.is_empty()),
        mcp_servers: Vec::new(),
        guard: guard
            .map(|g| Guard::resolve(g, name, &at, true))
            .transpose()?,
    })
}

impl std::ops::Deref for AcpDef {
    type Target = Launch;
    fn deref(&self) -> &Launch {
        &self.launch
    }
}

impl std::ops::DerefMut for AcpDef {
    fn deref_mut(&mut self) -> &mut Launch {
        &mut self.launch
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Config, ConfigError, Definition, Source};

    fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_sources(&[Source {
            name: "my.toml".into(),
            text: text.into(),
        }])
    }

    #[test]
    fn an_entry_is_read_and_mistakes_name_the_key() {
        let config = load(
            "[backends.a]\ntype = \"acp\"\ncommand = \"a\"\nargs = [\"--acp\"]\nauto_mode = \"yolo\"\nask_mode = \"default\"\n",
        )
        .unwrap();
        let Definition::Acp(a) = config.backend("a").unwrap() else {
            panic!("a is an ACP backend")
        };
        assert_eq!(a.args, ["--acp"]);
        assert_eq!(a.auto_mode.as_deref(), Some("yolo"));
        assert_eq!(a.ask_mode.as_deref(), Some("default"));
        let err = |text: &str| load(text).unwrap_err().to_string();
        let e = err("[backends.a]\ntype = \"acp\"\ncommand = \"a\"\ntokens_regex = \"x\"\n");
        assert!(e.contains("key `tokens_regex`: a `type = \"acp\"`"), "{e}");
        let e = err("[backends.a]\ntype = \"acp\"\ncommand = \"a\"\nsize = \"80x24\"\n");
        assert!(e.contains("key `size`"), "{e}");
        let e = err("[backends.a]\ntype = \"acp\"\n");
        assert!(e.contains("has no `command`"), "{e}");
        let e = err("[backends.a]\ntype = \"acp\"\ncommand = \"a\"\ntools = \"loop\"\n");
        assert!(e.contains("key `tools`"), "{e}");
        let e = err("[backends.a]\ncommand = \"a\"\nauto_mode = \"yolo\"\n");
        assert!(e.contains("key `auto_mode`"), "{e}");
        let e = err("[backends.a]\ncommand = \"a\"\nask_mode = \"default\"\n");
        assert!(e.contains("key `ask_mode`"), "{e}");
        let e = err("[backends.a]\ncommand = \"a\"\nnotice_regex = \"x\"\n");
        assert!(e.contains("key `notice_regex`"), "{e}");
        let e = err("[backends.a]\ntype = \"acp\"\ncommand = \"a\"\nnotice_regex = \"(\"\n");
        assert!(e.contains("notice_regex"), "{e}");
    }

    #[test]
    fn the_built_in_notice_regexes_compile() {
        let config = Config::from_sources(&[Source::builtin()]).unwrap();
        let Definition::Acp(codex) = config.backend("codex-acp").unwrap() else {
            panic!("codex-acp is an ACP backend")
        };
        let notice = codex.notice.as_ref().expect("codex-acp has a notice_regex");
        notice.warm();
    }

    #[test]
    fn per_name_names_every_name_as_one_key_of_one_table() {
        let per = super::PerName {
            args: vec!["-c".into(), "t={entries}".into()],
            entry: toml::toml! { off = true },
            when: [("cmd".to_string(), toml::toml! { cmd = "true" })].into(),
            ..Default::default()
        };
        assert!(per.args_for(&[]).is_empty());
        let names = [
            "a.b",
            "q\"uote",
            "it's",
            "new\nline",
            "back\\slash",
            "sp ace",
            "plain",
        ];
        let found: Vec<_> = names
            .iter()
            .map(|n| (n.to_string(), vec!["cmd".to_string()]))
            .collect();
        let args = per.args_for(&found);
        assert_eq!(args[0], "-c");
        // As codex reads a `-c` value: TOML, on one line.
        let value = args[1].strip_prefix("t=").unwrap();
        assert!(!value.contains('\n'), "{value}");
        let table: toml::Table = format!("v = {value}").parse().unwrap();
        let table = table["v"].as_table().unwrap();
        assert_eq!(table.len(), names.len(), "{value}");
        for name in names {
            assert_eq!(table[name], toml::toml! { off = true cmd = "true" }.into());
        }
    }
}
