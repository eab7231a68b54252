//! The facts of a UnifyWeaver spec as backends.toml tables:
//!
//! - `agent_backend(Name, Props)`: `type(cli)` is a CLI backend (`command`, `args`,
//!   `tool_pattern`/`token_pattern` as `tool_call_regex`/`tokens_regex`, their positional
//!   groups named in order); `type(api)` an HTTP backend whose wire format comes from the
//!   `endpoint` (else the `auth_header`) and whose `base_url` is the endpoint less the API's
//!   path; the key variable is the provider's usual one, none with `auth_required(false)`.
//! - `tool_spec(Name, Props)`: a built-in tool takes `confirmation_required` as `confirm`;
//!   another becomes a `[tools.NAME]` table with its parameters and an empty `command` to be
//!   filled in (the tool is not offered until it is).
//! - `loop_config(Props)`: `max_context_tokens` and `trim_strategy(oldest_first)` go to every
//!   backend, `confirm_destructive_tools` to bash, write and edit; `display_*(true)` is what
//!   agent-loop does anyway.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::term::{Clause, Term};
use crate::Error;

/// The translation: the backends.toml text, and a warning per thing left as a comment.
#[derive(Debug, Clone)]
pub struct Imported {
    pub toml: String,
    pub warnings: Vec<String>,
}

/// Lines of one output table, its leading comments and keys in order.
#[derive(Default)]
struct Table {
    header: String,
    lines: Vec<String>,
}

impl Table {
    fn key(&mut self, key: &str, value: impl Into<toml::Value>) {
        self.lines.push(format!("{key} = {}", value.into()));
    }

    fn comment(&mut self, text: &str) {
        self.lines.push(format!("# {text}"));
    }
}

struct Translator<'a> {
    source: &'a str,
    warnings: Vec<String>,
}

impl Translator<'_> {
    /// Leaves `term` as a comment in `table` and warns about it.
    fn unsupported(&mut self, table: &mut Table, line: usize, what: &str, term: &Term, why: &str) {
        table.comment(&format!("not imported: {term} ({why})"));
        self.warnings.push(format!(
            "{}:{line}: {what}: {term} is not supported ({why}); left as a comment",
            self.source
        ));
    }

    fn error(&self, line: usize, message: String) -> Error {
        Error::config(format!("{}:{line}: {message}", self.source))
    }
}

/// The built-in tools a `tool_spec` may configure.
const BUILTIN_TOOLS: [&str; 6] = ["bash", "read", "write", "edit", "ls", "grep"];
/// The built-in tools that change things.
const DESTRUCTIVE: [&str; 3] = ["bash", "write", "edit"];

pub(super) fn translate(clauses: &[Clause], source: &str) -> Result<Imported, Error> {
    let mut t = Translator {
        source,
        warnings: Vec::new(),
    };
    let mut backends = Vec::new();
    let mut tools = Vec::new();
    let mut notes = Table {
        header: "# Notes".into(),
        ..Table::default()
    };
    let mut per_backend = Table::default();
    // `confirm` of built-ins, by name: from tool_spec, else from confirm_destructive_tools.
    let mut confirm: BTreeMap<&str, (bool, String)> = BTreeMap::new();
    let mut destructive: Option<bool> = None;
    for clause in clauses {
        let line = clause.line;
        if clause.directive {
            match clause.term.functor() {
                Some(("module", _)) => {}
                _ => t.unsupported(
                    &mut notes,
                    line,
                    "directive",
                    &clause.term,
                    "only `:- module(...)` is read",
                ),
            }
            continue;
        }
        match clause.term.functor() {
            Some(("agent_backend", [name, Term::List(props)])) => {
                let name = name.text().ok_or_else(|| {
                    t.error(
                        line,
                        format!("agent_backend: the name {name} is not an atom"),
                    )
                })?;
                backends.push(backend(&mut t, line, name, props)?);
            }
            Some(("tool_spec", [name, Term::List(props)])) => {
                let name = name.text().ok_or_else(|| {
                    t.error(line, format!("tool_spec: the name {name} is not an atom"))
                })?;
                if let Some(builtin) = BUILTIN_TOOLS.iter().find(|b| **b == name) {
                    for prop in props {
                        match prop.functor() {
                            Some(("confirmation_required", [flag])) => {
                                let flag = boolean(&t, line, prop, flag)?;
                                confirm
                                    .insert(builtin, (flag, format!("tool_spec({name}): {prop}")));
                            }
                            // The model is told agent-loop's own description and schema.
                            Some(("description" | "parameters", _)) => {}
                            _ => {
                                let mut table = Table::default();
                                t.unsupported(
                                    &mut table,
                                    line,
                                    &format!("tool_spec({name})"),
                                    prop,
                                    "a built-in tool takes only confirmation_required",
                                );
                                notes.lines.extend(table.lines);
                            }
                        }
                    }
                } else {
                    tools.push(custom_tool(&mut t, line, name, props)?);
                }
            }
            Some(("loop_config", [Term::List(props)])) => {
                for prop in props {
                    match prop.functor() {
                        Some(("max_context_tokens", [Term::Int(n)])) if *n > 0 => {
                            per_backend.comment(&format!("loop_config: {prop}"));
                            per_backend.key("max_context_tokens", *n);
                        }
                        Some(("trim_strategy", [Term::Atom(s)])) if s == "oldest_first" => {
                            per_backend.comment(&format!(
                                "loop_config: {prop} (continue trims the oldest messages first)"
                            ));
                            per_backend.key("context", "continue");
                        }
                        Some(("confirm_destructive_tools", [flag])) => {
                            destructive = Some(boolean(&t, line, prop, flag)?);
                        }
                        Some((name, [Term::Atom(on)]))
                            if name.starts_with("display_") && on == "true" =>
                        {
                            notes.comment(&format!(
                                "loop_config: {prop}: agent-loop shows this by default"
                            ));
                        }
                        _ => t.unsupported(
                            &mut notes,
                            line,
                            "loop_config",
                            prop,
                            "agent-loop has no such setting",
                        ),
                    }
                }
            }
            _ => t.unsupported(
                &mut notes,
                line,
                "fact",
                &clause.term,
                "not agent_backend/2, tool_spec/2 or loop_config/1",
            ),
        }
    }
    if let Some(flag) = destructive {
        for tool in DESTRUCTIVE {
            confirm.entry(tool).or_insert((
                flag,
                format!("loop_config: confirm_destructive_tools({flag})"),
            ));
        }
    }
    let mut out = format!(
        "# backends.toml imported from {source} by `agent-loop import-spec`.\n\
         # An entry named like a built-in preset overrides that preset's keys one by one.\n"
    );
    for mut table in backends {
        table.lines.extend(per_backend.lines.iter().cloned());
        write_table(&mut out, &table);
    }
    for (name, (flag, from)) in &confirm {
        let mut table = Table {
            header: format!("[tools.{name}]"),
            ..Table::default()
        };
        table.comment(from);
        table.key("confirm", *flag);
        write_table(&mut out, &table);
    }
    for table in tools {
        write_table(&mut out, &table);
    }
    if !notes.lines.is_empty() {
        write_table(&mut out, &notes);
    }
    Ok(Imported {
        toml: out,
        warnings: t.warnings,
    })
}

fn write_table(out: &mut String, table: &Table) {
    let _ = writeln!(out, "\n{}", table.header);
    for line in &table.lines {
        let _ = writeln!(out, "{line}");
    }
}

/// A table key: bare when it can be.
fn key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_string()
    } else {
        toml::Value::from(name).to_string()
    }
}

fn boolean(t: &Translator, line: usize, prop: &Term, flag: &Term) -> Result<bool, Error> {
    match flag {
        Term::Atom(s) if s == "true" => Ok(true),
        Term::Atom(s) if s == "false" => Ok(false),
        _ => Err(t.error(line, format!("{prop}: expected true or false"))),
    }
}

fn string(
    t: &Translator,
    line: usize,
    what: &str,
    prop: &Term,
    arg: &Term,
) -> Result<String, Error> {
    arg.text()
        .map(str::to_string)
        .ok_or_else(|| t.error(line, format!("{what}: {prop}: expected a string")))
}

fn strings(
    t: &Translator,
    line: usize,
    what: &str,
    prop: &Term,
    arg: &Term,
) -> Result<Vec<String>, Error> {
    match arg {
        Term::List(items) => items
            .iter()
            .map(|i| string(t, line, what, prop, i))
            .collect(),
        _ => Err(t.error(line, format!("{what}: {prop}: expected a list of strings"))),
    }
}

/// One `agent_backend(Name, Props)`.
fn backend(t: &mut Translator, line: usize, name: &str, props: &[Term]) -> Result<Table, Error> {
    let what = format!("agent_backend({name})");
    let kind = props.iter().find_map(|p| match p.functor() {
        Some(("type", [Term::Atom(k)])) => Some(k.as_str()),
        _ => None,
    });
    let mut table = Table {
        header: format!("[backends.{}]", key(name)),
        ..Table::default()
    };
    match kind {
        Some("cli") => cli_backend(t, line, &what, props, &mut table)?,
        Some("api") => api_backend(t, line, &what, props, &mut table)?,
        Some(other) => {
            return Err(t.error(
                line,
                format!("{what}: unknown type({other}); the types are cli and api"),
            ))
        }
        None => return Err(t.error(line, format!("{what}: no type(cli) or type(api)"))),
    }
    Ok(table)
}

fn cli_backend(
    t: &mut Translator,
    line: usize,
    what: &str,
    props: &[Term],
    table: &mut Table,
) -> Result<(), Error> {
    table.key("type", "cli");
    for prop in props {
        let Some((functor, args)) = prop.functor() else {
            t.unsupported(table, line, what, prop, "not a property");
            continue;
        };
        match (functor, args) {
            ("type", _) => {}
            ("command", [arg]) => table.key("command", string(t, line, what, prop, arg)?),
            ("args", [arg]) => table.key("args", strings(t, line, what, prop, arg)?),
            ("model" | "default_model", [arg]) => {
                table.key("model", string(t, line, what, prop, arg)?)
            }
            ("tool_pattern", [arg]) => {
                let pattern = string(t, line, what, prop, arg)?;
                table.key("tool_call_regex", name_groups(&pattern, &["name", "args"]));
            }
            ("token_pattern", [arg]) => {
                let pattern = string(t, line, what, prop, arg)?;
                table.key("tokens_regex", name_groups(&pattern, &["input", "output"]));
            }
            ("context_format", [Term::Atom(f)]) => match cli_format(f) {
                Some(format) => table.key("context_format", format),
                None => t.unsupported(
                    table,
                    line,
                    what,
                    prop,
                    "the formats are plain, markdown, json, xml",
                ),
            },
            ("timeout", [Term::Int(n)]) if *n > 0 => table.key("timeout_s", *n),
            _ => t.unsupported(table, line, what, prop, "a CLI backend has no such setting"),
        }
    }
    Ok(())
}

/// A CLI `context_format`: the spec's `conversation_history` is agent-loop's plain text.
fn cli_format(name: &str) -> Option<&'static str> {
    Some(match name {
        "conversation_history" | "plain" => "plain",
        "markdown" => "markdown",
        "messages_array" | "json" => "json",
        "xml" => "xml",
        _ => return None,
    })
}

/// The wire formats, each with the path its endpoint ends in and its key variable.
const WIRES: [(&str, &str); 3] = [
    ("anthropic", "/v1/messages"),
    ("openai", "/chat/completions"),
    ("ollama", "/api/chat"),
];

fn api_backend(
    t: &mut Translator,
    line: usize,
    what: &str,
    props: &[Term],
    table: &mut Table,
) -> Result<(), Error> {
    let find = |name: &str| {
        props.iter().find_map(|p| match p.functor() {
            Some((f, args)) if f == name => Some((p, args)),
            _ => None,
        })
    };
    let (endpoint_prop, endpoint_args) = find("endpoint").ok_or_else(|| {
        t.error(
            line,
            format!("{what}: an api backend needs endpoint(\"URL\")"),
        )
    })?;
    let endpoint = match endpoint_args {
        [arg] => string(t, line, what, endpoint_prop, arg)?,
        _ => {
            return Err(t.error(
                line,
                format!("{what}: {endpoint_prop}: expected endpoint(\"URL\")"),
            ))
        }
    };
    let endpoint = endpoint.trim_end_matches('/');
    let auth_header = find("auth_header")
        .and_then(|(_, args)| args.first())
        .and_then(Term::text)
        .map(str::to_ascii_lowercase);
    let by_path = WIRES.iter().find(|(_, path)| endpoint.ends_with(path));
    let (format, base_url) = match (by_path, auth_header.as_deref()) {
        (Some((format, path)), _) => (*format, endpoint[..endpoint.len() - path.len()].to_string()),
        (None, Some("x-api-key")) => (WIRES[0].0, endpoint.to_string()),
        (None, Some("authorization")) => (WIRES[1].0, endpoint.to_string()),
        (None, _) => {
            return Err(t.error(
                line,
                format!("{what}: cannot tell the API from endpoint(\"{endpoint}\"): it ends in none of /v1/messages, /chat/completions, /api/chat and no auth_header says"),
            ))
        }
    };
    if by_path.is_none() {
        t.warnings.push(format!(
            "{}:{line}: {what}: the endpoint's path is not a known API's; base_url is the whole endpoint, check it",
            t.source
        ));
    }
    table.key("type", format);
    table.key("base_url", base_url.clone());
    let needs_key = format != "ollama"
        && !props.iter().any(
            |p| matches!(p.functor(), Some(("auth_required", [Term::Atom(f)])) if f == "false"),
        );
    if needs_key {
        table.key("api_key_env", key_variable(format, &base_url));
    }
    for prop in props {
        let Some((functor, args)) = prop.functor() else {
            t.unsupported(table, line, what, prop, "not a property");
            continue;
        };
        match (functor, args) {
            ("type" | "endpoint" | "auth_required", _) => {}
            ("auth_header", _) => table.comment(&format!(
                "{prop}: the {format} format sends the key this way"
            )),
            ("model" | "default_model", [arg]) => {
                table.key("model", string(t, line, what, prop, arg)?)
            }
            ("context_format", [Term::Atom(f)]) if f == "messages_array" => table.comment(
                &format!("{prop}: HTTP backends send the native message array"),
            ),
            ("supports_tools", [Term::Atom(f)]) if f == "true" => table.comment(&format!(
                "{prop}: HTTP backends are sent native tool definitions"
            )),
            ("supports_streaming", [flag]) => table.key("stream", boolean(t, line, prop, flag)?),
            ("timeout", [Term::Int(n)]) if *n > 0 => table.key("timeout_s", *n),
            _ => t.unsupported(
                table,
                line,
                what,
                prop,
                "an HTTP backend has no such setting",
            ),
        }
    }
    Ok(())
}

/// The provider's usual key variable.
fn key_variable(format: &str, base_url: &str) -> &'static str {
    if format == "anthropic" {
        return "ANTHROPIC_API_KEY";
    }
    for (host, var) in [
        ("openrouter.ai", "OPENROUTER_API_KEY"),
        ("api.deepseek.com", "DEEPSEEK_API_KEY"),
        ("api.groq.com", "GROQ_API_KEY"),
        ("api.mistral.ai", "MISTRAL_API_KEY"),
    ] {
        if base_url.contains(host) {
            return var;
        }
    }
    "OPENAI_API_KEY"
}

/// One `tool_spec(Name, Props)` of a tool that is not built in, its parameters' tables
/// after its own.
fn custom_tool(
    t: &mut Translator,
    line: usize,
    name: &str,
    props: &[Term],
) -> Result<Table, Error> {
    let what = format!("tool_spec({name})");
    let mut left_out = Table::default();
    let mut params = Vec::new();
    let mut description = None;
    let mut confirm = None;
    for prop in props {
        match prop.functor() {
            Some(("description", [arg])) => description = Some(string(t, line, &what, prop, arg)?),
            Some(("confirmation_required", [flag])) => {
                confirm = Some(boolean(t, line, prop, flag)?)
            }
            Some(("parameters", [Term::List(items)])) => {
                for item in items {
                    params.push(param(t, line, &what, item, &mut left_out)?);
                }
            }
            _ => t.unsupported(
                &mut left_out,
                line,
                &what,
                prop,
                "a tool has no such setting",
            ),
        }
    }
    let mut table = Table {
        header: format!("[tools.{}]", key(name)),
        ..Table::default()
    };
    table.key(
        "description",
        description.unwrap_or_else(|| name.to_string()),
    );
    let example: Vec<String> = std::iter::once("PROGRAM".to_string())
        .chain(params.iter().map(|(p, _)| format!("{{{p}}}")))
        .collect();
    table.comment(&format!(
        "TODO: fill in the program and its arguments, e.g. {}; until then the tool is not offered",
        toml::Value::from(example)
    ));
    table.key("command", toml::Value::Array(Vec::new()));
    if let Some(flag) = confirm {
        table.key("confirm", flag);
    }
    table.lines.extend(left_out.lines);
    for (pname, p) in params {
        table.lines.push(String::new());
        table
            .lines
            .push(format!("[tools.{}.parameters.{}]", key(name), key(&pname)));
        table.lines.extend(p.lines);
    }
    Ok(table)
}

/// `param(Name, Type, required|optional, Description)`: its name and its table's keys.
fn param(
    t: &mut Translator,
    line: usize,
    what: &str,
    item: &Term,
    tool: &mut Table,
) -> Result<(String, Table), Error> {
    let Some(("param", args)) = item.functor() else {
        return Err(t.error(
            line,
            format!("{what}: {item}: expected param(Name, Type, required, \"Description\")"),
        ));
    };
    let name = args.first().and_then(Term::text).ok_or_else(|| {
        t.error(
            line,
            format!("{what}: {item}: the parameter's name is not an atom"),
        )
    })?;
    let mut table = Table::default();
    let kind = match args.get(1).and_then(Term::text) {
        Some("string" | "atom") | None => "string",
        Some("integer" | "int") => "integer",
        Some("number" | "float") => "number",
        Some("boolean" | "bool") => "boolean",
        Some("path" | "file") => "path",
        Some(other) => {
            t.unsupported(
                tool,
                line,
                what,
                item,
                &format!("type {other} is read as string"),
            );
            "string"
        }
    };
    table.key("type", kind);
    if let Some(description) = args.get(3).and_then(Term::text) {
        table.key("description", description);
    }
    table.key(
        "required",
        args.get(2).and_then(Term::text) == Some("required"),
    );
    Ok((name.to_string(), table))
}

/// `pattern` with its unnamed capturing groups named `names[0]`, `names[1]`, ... in order;
/// groups past the names, and groups already named, are left alone.
pub fn name_groups(pattern: &str, names: &[&str]) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut names = names.iter();
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '[' if !in_class => {
                in_class = true;
                // `]` right after `[` or `[^` is a literal.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().unwrap_or(']'));
                }
            }
            ']' if in_class => in_class = false,
            '(' if !in_class && chars.peek() != Some(&'?') => {
                if let Some(name) = names.next() {
                    let _ = write!(out, "?P<{name}>");
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positional_groups_are_named_in_order() {
        assert_eq!(
            name_groups(r"Tokens: (\d+) input \+ (\d+) output", &["input", "output"]),
            r"Tokens: (?P<input>\d+) input \+ (?P<output>\d+) output"
        );
        assert_eq!(
            name_groups(r"\((?:x)[(](\w+)(?P<k>.)(a)(b)", &["name", "args"]),
            r"\((?:x)[(](?P<name>\w+)(?P<k>.)(?P<args>a)(b)"
        );
    }
}
