//! `[tools.NAME]` tables in any backends.toml: custom command tools (see `tools::custom`), and
//! `confirm` for a built-in tool. Layered like backends (a later file overrides single keys;
//! `parameters` as a whole) and checked at load, each mistake reported with the file, the line,
//! the tool and the key: a missing required key, an unknown `{placeholder}`, an unknown
//! parameter type, a name that clashes with a built-in tool.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::source::{Lines, Overlay};
use super::ConfigError;
use agent_loop_tools::custom::{placeholders, CommandDef, Param, ParamType};
use agent_loop_tools::{Effect, ToolSpec};

/// The timeout of a command tool that sets none (bash's).
const DEFAULT_TIMEOUT_S: u64 = 120;

/// One `[tools.NAME]` table as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTool {
    pub description: Option<Spanned<String>>,
    pub command: Option<Spanned<Vec<String>>>,
    pub confirm: Option<Spanned<bool>>,
    pub timeout_s: Option<Spanned<u64>>,
    pub cwd: Option<Spanned<String>>,
    pub parameters: Option<Spanned<BTreeMap<Spanned<String>, RawParam>>>,
    /// `file:line` of each key set, by key (`parameters.NAME.type` for a parameter's).
    #[serde(skip)]
    at: BTreeMap<String, String>,
    /// The parameters' names in the order they are written (the map sorts them).
    #[serde(skip)]
    order: Vec<String>,
}

/// One `[tools.NAME.parameters.PARAM]` table.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParam {
    #[serde(rename = "type")]
    pub kind: Option<Spanned<String>>,
    pub description: Option<String>,
    pub required: Option<bool>,
    /// Whether a value may start with `-` where it would be read as an option.
    pub option: Option<bool>,
}

impl RawTool {
    /// Records the file and line of every key set.
    pub(crate) fn locate(&mut self, lines: &Lines) {
        let mut at = |key: String, start: usize| {
            self.at
                .insert(key, format!("{}:{}", lines.name(), lines.line(start)));
        };
        let spans = [
            (
                "description",
                self.description.as_ref().map(|s| s.span().start),
            ),
            ("command", self.command.as_ref().map(|s| s.span().start)),
            ("confirm", self.confirm.as_ref().map(|s| s.span().start)),
            ("timeout_s", self.timeout_s.as_ref().map(|s| s.span().start)),
            ("cwd", self.cwd.as_ref().map(|s| s.span().start)),
            (
                "parameters",
                self.parameters.as_ref().map(|s| s.span().start),
            ),
        ];
        for (key, start) in spans {
            if let Some(start) = start {
                at(key.to_string(), start);
            }
        }
        let mut order = Vec::new();
        for (name, param) in self.parameters.iter().flat_map(|p| p.get_ref()) {
            if let Some(kind) = &param.kind {
                at(
                    format!("parameters.{}.type", name.get_ref()),
                    kind.span().start,
                );
            }
            order.push((name.span().start, name.get_ref().clone()));
        }
        order.sort();
        self.order = order.into_iter().map(|(_, name)| name).collect();
    }

    /// `file:line` of `key`, else of the table.
    fn at<'a>(&'a self, key: &str, table: &'a str) -> &'a str {
        self.at.get(key).map_or(table, String::as_str)
    }

    /// The keys set other than `confirm`.
    fn keys_beyond_confirm(&self) -> Vec<&'static str> {
        [
            ("description", self.description.is_some()),
            ("command", self.command.is_some()),
            ("timeout_s", self.timeout_s.is_some()),
            ("cwd", self.cwd.is_some()),
            ("parameters", self.parameters.is_some()),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| k)
        .collect()
    }
}

impl Overlay for RawTool {
    fn overlay(&mut self, other: RawTool) {
        macro_rules! take {
            ($($field:ident),*) => { $( if other.$field.is_some() { self.$field = other.$field; } )* };
        }
        take!(description, command, confirm, timeout_s, cwd);
        if other.parameters.is_some() {
            self.parameters = other.parameters;
            self.order = other.order;
        }
        self.at.extend(other.at);
    }
}

/// Every `[tools.NAME]` table, checked.
#[derive(Debug, Clone, Default)]
pub struct ToolDefs {
    /// Command tools, by name (enabled or not: one whose command is empty is not offered).
    pub commands: BTreeMap<String, CommandDef>,
    /// `confirm` of built-in tools, by name.
    pub confirm: BTreeMap<String, bool>,
    /// What is allowed but worth saying (`[tools.bash] confirm = false`), for the front end.
    pub warnings: Vec<String>,
}

impl ToolDefs {
    /// The command tools, for `tools::Registry::configured`.
    pub fn command_defs(&self) -> Vec<CommandDef> {
        self.commands.values().cloned().collect()
    }

    /// The built-ins' `confirm`, for `tools::Registry::configured`.
    pub fn confirms(&self) -> Vec<(String, bool)> {
        self.confirm.iter().map(|(n, c)| (n.clone(), *c)).collect()
    }

    /// The `agent-loop config` lines: one per tool table.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for (name, confirm) in &self.confirm {
            out.push_str(&format!("{name:<16} built-in, confirm = {confirm}\n"));
        }
        for (name, def) in &self.commands {
            let state = if def.enabled() {
                shell_words(&def.command)
            } else {
                "(disabled: no command yet)".into()
            };
            let params: Vec<String> = def
                .params
                .iter()
                .map(|p| format!("{}{}", p.name, if p.required { "" } else { "?" }))
                .collect();
            out.push_str(&format!(
                "{name:<16} ({}) confirm = {}: {state}  [{}]\n",
                params.join(", "),
                def.confirm,
                def.defined_at
            ));
        }
        out
    }
}

/// An argv shown as one line, each element quoted when it has to be.
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty() || a.contains([' ', '\'', '"', '\\']) {
                format!("{a:?}")
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks every merged table: `(name, (table, file:line of the table))`, against the
/// built-in tools' specs (what each declares of itself: its name, whether it changes things).
pub fn resolve(
    tables: BTreeMap<String, (RawTool, String)>,
    builtins: &[ToolSpec],
) -> Result<ToolDefs, ConfigError> {
    let mut defs = ToolDefs::default();
    for (name, (raw, at)) in tables {
        if let Some(builtin) = builtins.iter().find(|spec| spec.name == name) {
            if let Some(key) = raw.keys_beyond_confirm().first() {
                return Err(ConfigError::BadToolKey {
                    at: raw.at(key, &at).to_string(),
                    why: format!("`{name}` is a built-in tool, so only `confirm` can be set for it; give your own tool another name"),
                    tool: name,
                    key: key.to_string(),
                });
            }
            if let Some(confirm) = &raw.confirm {
                let confirm = *confirm.get_ref();
                if !confirm && builtin.effect == Effect::Changes {
                    defs.warnings.push(format!(
                        "{}: [tools.{name}] confirm = false: {name} will change things without asking",
                        raw.at("confirm", &at)
                    ));
                }
                defs.confirm.insert(name, confirm);
            }
            continue;
        }
        let def = command_def(&name, raw, at)?;
        defs.commands.insert(name, def);
    }
    Ok(defs)
}

fn command_def(name: &str, raw: RawTool, at: String) -> Result<CommandDef, ConfigError> {
    let err = |where_: &str, key: &str, why: String| ConfigError::BadToolKey {
        at: where_.to_string(),
        tool: name.to_string(),
        key: key.to_string(),
        why,
    };
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(ConfigError::BadToolName {
            at,
            tool: name.to_string(),
        });
    }
    let missing = |key: &str| {
        err(
            &at,
            key,
            "missing; a command tool needs `description` and `command`".to_string(),
        )
    };
    let description = raw
        .description
        .clone()
        .ok_or_else(|| missing("description"))?;
    let command = raw.command.clone().ok_or_else(|| missing("command"))?;
    let command_at = raw.at("command", &at).to_string();
    let mut params = Vec::new();
    let mut written: BTreeMap<String, RawParam> = raw
        .parameters
        .clone()
        .map(Spanned::into_inner)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.into_inner(), v))
        .collect();
    for pname in &raw.order {
        let Some(p) = written.remove(pname) else {
            continue;
        };
        let pname = pname.clone();
        let key = format!("parameters.{pname}.type");
        let where_ = raw.at(&key, raw.at("parameters", &at)).to_string();
        let kind = p.kind.ok_or_else(|| {
            err(
                &where_,
                &key,
                format!("missing; the types are {}", ParamType::NAMES),
            )
        })?;
        let kind = ParamType::parse(kind.get_ref()).ok_or_else(|| {
            err(
                &where_,
                &key,
                format!(
                    "unknown type `{}`; the types are {}",
                    kind.get_ref(),
                    ParamType::NAMES
                ),
            )
        })?;
        if !pname.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || pname.is_empty() {
            return Err(err(
                &where_,
                &format!("parameters.{pname}"),
                "a parameter's name is letters, digits and `_`".into(),
            ));
        }
        params.push(Param {
            name: pname,
            kind,
            description: p.description.unwrap_or_default(),
            required: p.required.unwrap_or(false),
            option: p.option.unwrap_or(false),
        });
    }
    let command = command.into_inner();
    if let Some(program) = command.first() {
        if !placeholders(program).is_empty() {
            return Err(err(
                &command_at,
                "command",
                format!("the program `{program}` cannot be a placeholder; it is the first element, the arguments follow"),
            ));
        }
    }
    for element in command.iter().skip(1) {
        for placeholder in placeholders(element) {
            if !params.iter().any(|p| p.name == placeholder) {
                let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                return Err(err(
                    &command_at,
                    "command",
                    format!(
                        "unknown placeholder `{{{placeholder}}}`; the parameters are {}",
                        if names.is_empty() {
                            "(none)".to_string()
                        } else {
                            names.join(", ")
                        }
                    ),
                ));
            }
        }
    }
    let timeout_s = raw
        .timeout_s
        .as_ref()
        .map_or(DEFAULT_TIMEOUT_S, |t| *t.get_ref());
    if timeout_s == 0 {
        return Err(err(
            raw.at("timeout_s", &at),
            "timeout_s",
            "must be at least 1".into(),
        ));
    }
    Ok(CommandDef {
        name: name.to_string(),
        description: description.into_inner(),
        command,
        confirm: raw.confirm.is_none_or(|c| *c.get_ref()),
        timeout: Duration::from_secs(timeout_s),
        cwd: raw.cwd.map(Spanned::into_inner),
        params,
        defined_at: at,
    })
}

#[cfg(test)]
mod tests {
    use crate::{Config, Source};

    fn source(name: &str, text: &str) -> Source {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }

    /// A later file overrides single keys; parameters keep the order they are written in.
    #[test]
    fn layered_tables_and_parameter_order() {
        let first = source(
            "a.toml",
            "[tools.t]\ndescription = \"d\"\ncommand = [\"x\", \"{zeta}\", \"{alpha}\"]\n\
             [tools.t.parameters.zeta]\ntype = \"string\"\nrequired = true\n\
             [tools.t.parameters.alpha]\ntype = \"integer\"\n",
        );
        let second = source("b.toml", "[tools.t]\nconfirm = false\ntimeout_s = 5\n");
        let config = Config::from_sources(&[Source::builtin(), first, second]).unwrap();
        let def = &config.tools.commands["t"];
        assert!(!def.confirm);
        assert_eq!(def.timeout.as_secs(), 5);
        assert_eq!(def.defined_at, "b.toml:1");
        let names: Vec<&str> = def.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        assert_eq!(def.spec().main_param, "zeta");
        assert!(config.tools.warnings.is_empty());
    }

    /// A built-in's table sets only `confirm`; turning it off for a tool that declares it
    /// changes things is allowed, with a warning.
    #[test]
    fn builtins_are_known_by_what_they_declare() {
        use agent_loop_tools::ToolSpec;
        let spec = |name: &str, changes: bool| {
            ToolSpec::new(
                name.into(),
                "d".into(),
                "path".into(),
                changes,
                serde_json::json!({"type": "object"}),
            )
        };
        let builtins = [spec("scribble", true), spec("peek", false)];
        let text = "[tools.scribble]\nconfirm = false\n[tools.peek]\nconfirm = false\n";
        let config =
            Config::from_sources_with(&[Source::builtin(), source("a.toml", text)], &builtins)
                .unwrap();
        assert_eq!(config.tools.confirms().len(), 2);
        assert_eq!(
            config.tools.warnings,
            ["a.toml:2: [tools.scribble] confirm = false: scribble will change things without asking"]
        );
        let mine = "[tools.peek]\ndescription = \"mine\"\n";
        let err = Config::from_sources_with(&[source("b.toml", mine)], &builtins).unwrap_err();
        assert!(
            err.to_string().contains("`peek` is a built-in tool"),
            "{err}"
        );
    }
}
