//! Custom command tools, declared as data in a `[tools.NAME]` table of any backends.toml
//! (checked by `config::tools`): a description, typed parameters, and an argv whose elements
//! take the arguments through `{param}` placeholders, never through a shell. Such a tool is
//! offered to every backend like a built-in and runs with bash's process handling
//! (`tools::command`). A parameter of type `path` is resolved and checked against `--root`,
//! and refused when it is there and is neither a regular file nor a folder (a FIFO would block
//! the program until its timeout), then given to the program by name: the program opens it
//! itself, following links, so a link swapped in after the check is not caught as the file
//! tools' opens catch it.
//! A value that would be read as an option (`-oProxyCommand=...` where the template has a
//! host) is refused unless the parameter says `option = true` or a `--` comes before it.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use super::command;
use super::tool::{Subject, Tool, ToolContext, ToolOutput, ToolSpec};
use crate::BoxFuture;

/// The type of one parameter, as written in `type = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    String,
    Integer,
    Number,
    Boolean,
    /// A string naming a file or folder, checked against `--root` and passed resolved.
    Path,
}

impl ParamType {
    pub const NAMES: &'static str = "string, integer, number, boolean, path";

    pub fn parse(name: &str) -> Option<ParamType> {
        Some(match name {
            "string" => ParamType::String,
            "integer" => ParamType::Integer,
            "number" => ParamType::Number,
            "boolean" => ParamType::Boolean,
            "path" => ParamType::Path,
            _ => return None,
        })
    }

    /// The JSON schema type the model is told.
    fn json_type(self) -> &'static str {
        match self {
            ParamType::String | ParamType::Path => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
        }
    }
}

/// One parameter of a custom tool.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub kind: ParamType,
    pub description: String,
    pub required: bool,
    /// A value starting with `-` may stand where the program reads options (`option = true`).
    pub option: bool,
}

/// A checked `[tools.NAME]` definition of a command tool.
#[derive(Debug, Clone)]
pub struct CommandDef {
    pub name: String,
    pub description: String,
    /// The program, then its arguments; `{param}` in an element is replaced by the argument.
    /// Empty: declared but not filled in, so the tool is not offered.
    pub command: Vec<String>,
    /// Whether approval asks before it runs (as for bash).
    pub confirm: bool,
    pub timeout: Duration,
    /// Where it runs, relative to `--root`; `None`: the working directory.
    pub cwd: Option<String>,
    pub params: Vec<Param>,
    /// Where it is defined (`file:line`), for messages.
    pub defined_at: String,
}

impl CommandDef {
    /// Whether it can be offered: its command is filled in.
    pub fn enabled(&self) -> bool {
        !self.command.is_empty()
    }

    /// What the model is told of it.
    pub fn spec(&self) -> ToolSpec {
        let mut properties = Map::new();
        for p in &self.params {
            let mut description = p.description.clone();
            if p.kind == ParamType::Path {
                description.push_str(" (a path inside the working folder)");
            }
            properties.insert(
                p.name.clone(),
                serde_json::json!({"description": description.trim(), "type": p.kind.json_type()}),
            );
        }
        let required: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| p.name.as_str())
            .collect();
        let main = self
            .params
            .iter()
            .find(|p| p.required)
            .or(self.params.first())
            .map_or(String::new(), |p| p.name.clone());
        let mut spec = ToolSpec::new(
            self.name.clone(),
            self.description.clone(),
            main,
            self.confirm,
            serde_json::json!({"properties": properties, "required": required, "type": "object"}),
        );
        // It runs a command, whether or not it asks first.
        spec.effect = crate::Effect::Changes;
        spec.path_param = self
            .params
            .iter()
            .find(|p| p.kind == ParamType::Path)
            .map(|p| p.name.clone());
        spec
    }
}

/// The placeholders in one argv element, in order: `{name}` where name is letters, digits
/// and `_`; `{{` and `}}` stand for literal braces.
pub fn placeholders(element: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = element;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(stripped) = after.strip_prefix('{') {
            rest = stripped;
            continue;
        }
        match after.find('}') {
            Some(close) if is_ident(&after[..close]) => {
                found.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    found
}

fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `element` with each placeholder replaced by its value and `{{`/`}}` unescaped.
fn fill(element: &str, values: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(element.len());
    let mut rest = element;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if let Some(close) = tail
            .find('}')
            .filter(|&c| tail.starts_with('{') && is_ident(&tail[1..c]))
        {
            if let Some(Value::String(v)) = values.get(&tail[1..close]) {
                out.push_str(v);
            }
            rest = &tail[close + 1..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The arguments of one call as argv text, by parameter name.
#[derive(Default)]
struct Values {
    /// What the program is given.
    given: Map<String, Value>,
    /// What approval shows and rules match: paths relative to the root.
    shown: Map<String, Value>,
    /// The path arguments, relative to the root.
    paths: Vec<String>,
}

/// `arg` as a shell would need it written to be one word, so that the shown command line
/// says where each argument begins and ends.
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// A custom tool ready to run.
pub struct CommandTool {
    def: CommandDef,
    spec: ToolSpec,
}

impl CommandTool {
    pub fn new(def: CommandDef) -> Self {
        CommandTool {
            spec: def.spec(),
            def,
        }
    }

    /// The arguments as argv text, each checked against its parameter: what the program is
    /// given, and what approval shows and rules match (a path relative to the root, as the
    /// file tools' rules see it). The error is a result for the model.
    fn values(&self, args: &Value, ctx: &ToolContext) -> Result<Values, ToolOutput> {
        let name = &self.def.name;
        let Value::Object(args) = args else {
            return Err(ToolOutput::error(format!(
                "invalid arguments for {name}: expected a JSON object"
            )));
        };
        if let Some(unknown) = args
            .keys()
            .find(|k| !self.def.params.iter().any(|p| p.name == **k))
        {
            return Err(ToolOutput::error(format!(
                "invalid arguments for {name}: unknown parameter `{unknown}`"
            )));
        }
        let mut values = Values::default();
        for p in &self.def.params {
            let Some(value) = args.get(&p.name).filter(|v| !v.is_null()) else {
                if p.required {
                    return Err(ToolOutput::error(format!(
                        "invalid arguments for {name}: missing parameter `{}`",
                        p.name
                    )));
                }
                continue;
            };
            let text = match (p.kind, value) {
                (ParamType::String, Value::String(s)) => s.clone(),
                (ParamType::Path, Value::String(s)) => {
                    let shown = ctx.rule_path(s);
                    values.paths.push(shown.clone());
                    values.shown.insert(p.name.clone(), Value::String(shown));
                    let resolved = ctx.path(s)?;
                    if let Some(what) = super::beneath::special_kind(&resolved) {
                        return Err(ToolOutput::error(format!(
                            "refused: {s} (`{}` of {name}) is {what}; a path given to a \
                             command tool must be a regular file or a folder",
                            p.name
                        )));
                    }
                    resolved.to_string_lossy().into_owned()
                }
                (ParamType::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
                (ParamType::Number, Value::Number(n)) => n.to_string(),
                (ParamType::Boolean, Value::Bool(b)) => b.to_string(),
                _ => {
                    return Err(ToolOutput::error(format!(
                        "invalid arguments for {name}: `{}` must be {} {}, not {value}",
                        p.name,
                        if p.kind == ParamType::Integer {
                            "an"
                        } else {
                            "a"
                        },
                        p.kind.json_type()
                    )))
                }
            };
            values
                .shown
                .entry(p.name.clone())
                .or_insert_with(|| Value::String(text.clone()));
            values.given.insert(p.name.clone(), Value::String(text));
        }
        Ok(values)
    }

    /// The argv after the program: what it is given and what approval shows. An element whose
    /// placeholder names an optional parameter not given is left out; a value that would be
    /// read as an option is refused.
    fn argv(&self, values: &Values) -> Result<(Vec<String>, Vec<String>), ToolOutput> {
        let mut after_dashes = false;
        let (mut given, mut shown) = (Vec::new(), Vec::new());
        for element in &self.def.command[1..] {
            let names = placeholders(element);
            if !names.iter().all(|p| values.given.contains_key(*p)) {
                continue;
            }
            if !after_dashes {
                self.refuse_option(element, &names, values)?;
            }
            after_dashes |= element == "--";
            given.push(fill(element, &values.given));
            shown.push(fill(element, &values.shown));
        }
        Ok((given, shown))
    }

    /// An error when `element` starts with a parameter's value that starts with `-` and the
    /// parameter is not declared `option = true`: the program would read it as an option
    /// (`ssh {host}` with `-oProxyCommand=...` runs a command).
    fn refuse_option(
        &self,
        element: &str,
        names: &[&str],
        values: &Values,
    ) -> Result<(), ToolOutput> {
        let Some(first) = names
            .first()
            .filter(|n| element.starts_with(&format!("{{{n}}}")))
        else {
            return Ok(());
        };
        let starts_dash = values
            .given
            .get(*first)
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with('-'));
        let allowed = self.def.params.iter().any(|p| p.name == *first && p.option);
        if starts_dash && !allowed {
            return Err(ToolOutput::error(format!(
                "refused: `{first}` of {} starts with `-`, so {} would read it as an option, \
                 not as a {first}. Give a value that does not start with `-`.",
                self.def.name, self.def.command[0]
            )));
        }
        Ok(())
    }

    /// Where it runs: `cwd` under the root (checked like a path argument), else the working
    /// directory.
    fn cwd(&self, ctx: &ToolContext) -> Result<PathBuf, ToolOutput> {
        let Some(cwd) = &self.def.cwd else {
            return Ok(ctx.cwd.clone());
        };
        let base = match &ctx.root {
            super::Root::Dir(root) => root.clone(),
            super::Root::Anywhere => ctx.cwd.clone(),
        };
        let joined = base.join(cwd);
        ctx.root
            .check(&joined, cwd)
            .map_err(|e| ToolOutput::error(format!("{}: cwd: {e}", self.def.name)))
    }
}

impl Tool for CommandTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let argv = match self.values(&args, ctx).and_then(|v| self.argv(&v)) {
                Ok((argv, _)) => argv,
                Err(error) => return error,
            };
            let cwd = match self.cwd(ctx) {
                Ok(cwd) => cwd,
                Err(error) => return error,
            };
            let program = PathBuf::from(&self.def.command[0]);
            command::run(program, argv, cwd, ctx.env.removed(), self.def.timeout).await
        })
    }

    /// The command line it will run, each argument a shell word, path arguments relative to
    /// the root; arguments it refuses are shown as they are (the call fails anyway).
    fn subject(&self, args: &Value, ctx: &ToolContext) -> Subject {
        let Ok(values) = self.values(args, ctx) else {
            return Subject::arguments(&self.spec, args);
        };
        let Ok((_, shown)) = self.argv(&values) else {
            return Subject::arguments(&self.spec, args);
        };
        let line = std::iter::once(&self.def.command[0])
            .chain(&shown)
            .map(|a| shell_word(a))
            .collect::<Vec<_>>()
            .join(" ");
        Subject {
            paths: values.paths,
            ..Subject::plain(line)
        }
    }
}

/// A built-in tool whose approval is set by `[tools.NAME] confirm = ...`.
pub(super) struct Confirmed {
    pub inner: Box<dyn Tool>,
    pub spec: ToolSpec,
}

impl Tool for Confirmed {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        self.inner.run(args, ctx)
    }

    fn subject(&self, args: &Value, ctx: &ToolContext) -> Subject {
        self.inner.subject(args, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_filling() {
        assert_eq!(placeholders("--n={count}:{path}"), ["count", "path"]);
        assert_eq!(placeholders("{{literal}} {x y} {}"), Vec::<&str>::new());
        let mut values = Map::new();
        values.insert("count".into(), Value::String("3".into()));
        assert_eq!(fill("--n={count}", &values), "--n=3");
        assert_eq!(fill("{{count}} {", &values), "{count} {");
        assert_eq!(fill("a}}b", &values), "a}b");
    }
}
