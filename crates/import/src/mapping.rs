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
use super::translator::{boolean, key, string, Table, Translator};
use crate::ImportError;

/// The built-in tools a `tool_spec` may configure.
const BUILTIN_TOOLS: [&str; 6] = ["bash", "read", "write", "edit", "ls", "grep"];
/// The built-in tools that change things.
const DESTRUCTIVE: [&str; 3] = ["bash", "write", "edit"];
/// The translation: the backends.toml text, and a warning per thing left as a comment.
#[derive(Debug, Clone)]
pub struct Imported {
    pub toml: String,
    pub warnings: Vec<String>,
}

pub(super) fn translate(clauses: &[Clause], source: &str) -> Result<Imported, ImportError> {
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
    // `confirm` of built-ins, by name: from tool_spec, else from confirm_destructive_tools,
    // with what set it and on which line.
    let mut confirm: BTreeMap<&str, (bool, String, usize)> = BTreeMap::new();
    let mut destructive: Option<(bool, usize)> = None;
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
                check_name(&t, line, "agent_backend", name, true)?;
                backends.push(super::backends::backend(&mut t, line, name, props)?);
            }
            Some(("tool_spec", [name, Term::List(props)])) => {
                let name = name.text().ok_or_else(|| {
                    t.error(line, format!("tool_spec: the name {name} is not an atom"))
                })?;
                check_name(&t, line, "tool_spec", name, false)?;
                if let Some(builtin) = BUILTIN_TOOLS.iter().find(|b| **b == name) {
                    for prop in props {
                        match prop.functor() {
                            Some(("confirmation_required", [flag])) => {
                                let flag = boolean(&t, line, prop, flag)?;
                                let from = format!("tool_spec({name}): {prop}");
                                confirm.insert(builtin, (flag, from, line));
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
                            destructive = Some((boolean(&t, line, prop, flag)?, line));
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
    if let Some((flag, line)) = destructive {
        for tool in DESTRUCTIVE {
            confirm.entry(tool).or_insert((
                flag,
                format!("loop_config: confirm_destructive_tools({flag})"),
                line,
            ));
        }
    }
    // Said now, not only at each start with the file: the spec may be anyone's.
    for (name, (flag, from, line)) in &confirm {
        if !flag && DESTRUCTIVE.contains(name) {
            t.warn_unasked(*line, from, name);
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
    for (name, (flag, from, _)) in &confirm {
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

/// Refuses a name agent-loop could not load (a newline in it, a space, a comma) with the
/// spec's line, rather than writing a file it would refuse at every start: a tool's name is
/// what backends.toml takes, 1 to 64 letters, digits, `_` and `-`; a backend's the same, of
/// any length and `.` too (what `--backend a,b` and a TOML key take plainly).
fn check_name(
    t: &Translator,
    line: usize,
    what: &str,
    name: &str,
    backend: bool,
) -> Result<(), ImportError> {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || (backend && c == '.');
    let short = backend || name.len() <= 64;
    if !name.is_empty() && short && name.chars().all(ok) {
        return Ok(());
    }
    let allowed = match backend {
        true => "letters, digits, `_`, `-` and `.`",
        false => "1 to 64 letters, digits, `_` and `-`",
    };
    Err(t.error(line, format!("{what}({name}): the name must be {allowed}")))
}

fn write_table(out: &mut String, table: &Table) {
    let _ = writeln!(out, "\n{}", table.header);
    for line in &table.lines {
        let _ = writeln!(out, "{line}");
    }
}

/// One `tool_spec(Name, Props)` of a tool that is not built in, its parameters' tables
/// after its own.
fn custom_tool(
    t: &mut Translator,
    line: usize,
    name: &str,
    props: &[Term],
) -> Result<Table, ImportError> {
    let what = format!("tool_spec({name})");
    let mut left_out = Table::default();
    let mut params = Vec::new();
    let mut description = None;
    let mut confirm = None;
    for prop in props {
        match prop.functor() {
            Some(("description", [arg])) => description = Some(string(t, line, &what, prop, arg)?),
            Some(("confirmation_required", [flag])) => {
                confirm = Some(boolean(t, line, prop, flag)?);
                if confirm == Some(false) {
                    t.warn_unasked(line, &format!("{what}: {prop}"), name);
                }
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
) -> Result<(String, Table), ImportError> {
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

#[cfg(test)]
mod tests {
    use super::super::import;
    use crate::ImportError;

    #[test]
    fn api_format_from_auth_header_and_keys_by_provider() {
        let spec = "agent_backend(x, [type(api), endpoint(\"https://proxy.example/llm\"), auth_header(\"x-api-key\")]).\n\
                    agent_backend(r, [type(api), endpoint(\"https://openrouter.ai/api/v1/chat/completions\")]).\n\
                    agent_backend(l, [type(api), endpoint(\"http://h:8080/v1/chat/completions\"), auth_required(false)]).\n\
                    agent_backend(m, [type(api), endpoint(\"https://api.mistral.ai/v1/chat/completions\")]).\n";
        let out = import(spec, "s.pl").unwrap();
        assert!(out.toml.contains("[backends.x]\ntype = \"anthropic\"\nbase_url = \"https://proxy.example/llm\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n"), "{}", out.toml);
        assert!(out.toml.contains("base_url = \"https://openrouter.ai/api/v1\"\napi_key_env = \"OPENROUTER_API_KEY\"\n"), "{}", out.toml);
        assert!(
            out.toml
                .contains("api_key_env = \"MISTRAL_API_KEY\"\ntool_call_ids = \"alnum9\"\n"),
            "{}",
            out.toml
        );
        assert!(
            out.toml
                .contains("[backends.l]\ntype = \"openai\"\nbase_url = \"http://h:8080/v1\"\n"),
            "{}",
            out.toml
        );
        assert!(
            !out.toml.contains("api_key_env = \"OPENAI_API_KEY\""),
            "{}",
            out.toml
        );
        assert_eq!(out.warnings, ["s.pl:1: agent_backend(x): the endpoint's path is not a known API's; base_url is the whole endpoint, check it"]);
    }

    #[test]
    fn custom_tools_unknown_facts_and_errors() {
        let spec = "tool_spec(fmt, [description(\"Format\"), parameters([param(file, path, required, \"f\"), param(n, int, optional, \"n\")]), confirmation_required(false)]).\n\
                    helper(x).\n";
        let out = import(spec, "s.pl").unwrap();
        assert!(out.toml.contains(
            "[tools.fmt]\ndescription = \"Format\"\n\
             # TODO: fill in the program and its arguments, e.g. [\"PROGRAM\", \"{file}\", \"{n}\"]; until then the tool is not offered\n\
             command = []\nconfirm = false\n\n[tools.fmt.parameters.file]\ntype = \"path\"\ndescription = \"f\"\nrequired = true\n\n\
             [tools.fmt.parameters.n]\ntype = \"integer\"\ndescription = \"n\"\nrequired = false\n"
        ), "{}", out.toml);
        assert!(out.toml.contains(
            "# not imported: helper(x) (not agent_backend/2, tool_spec/2 or loop_config/1)"
        ));
        assert_eq!(out.warnings.len(), 2);
        let err = import("\n\nagent_backend(b, [command(\"b\")]).\n", "s.pl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.pl:3: agent_backend(b): no type(cli) or type(api)"
        );
        assert!(matches!(err, ImportError::Fact { line: 3, .. }), "{err:?}");
        assert_eq!(err.kind(), agent_loop_protocol::ErrorKind::Config);
        let err = import("agent_backend(b, [type(cli)]", "s.pl").unwrap_err();
        assert_eq!(err.to_string(), "s.pl:1:29: expected `,` or `)`");
        let ImportError::Syntax { error, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!((error.line, error.column), (1, 29));
        let source = std::error::Error::source(&err).expect("the syntax error as the source");
        assert_eq!(source.to_string(), "1:29: expected `,` or `)`");
    }

    /// A name agent-loop could not load is refused naming the line (it was written as a
    /// quoted key that the config then refused, a newline in it at every start); a spec
    /// that lets a tool change things without asking is said at import.
    #[test]
    fn odd_names_are_refused_and_unasked_tools_warned_of() {
        let spec = "\nagent_backend('x\"]\\n[backends.pwn]', [type(cli), command(\"c\")]).\n";
        let err = import(spec, "s.pl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.pl:2: agent_backend(x\"]\\n[backends.pwn]): the name must be letters, digits, \
             `_`, `-` and `.`"
        );
        let err = import("tool_spec('a b', []).", "s.pl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.pl:1: tool_spec(a b): the name must be 1 to 64 letters, digits, `_` and `-`"
        );
        let ok = import(
            "agent_backend('my.cli-2', [type(cli), command(\"c\")]).",
            "s.pl",
        );
        assert!(ok.is_ok(), "{ok:?}");
        let spec = "tool_spec(bash, [confirmation_required(false)]).\n\
                    tool_spec(ls, [confirmation_required(false)]).\n\
                    loop_config([confirm_destructive_tools(false)]).\n\
                    tool_spec(edit, [confirmation_required(true)]).\n";
        let out = import(spec, "s.pl").unwrap();
        assert!(out.toml.contains("[tools.bash]\n"), "{}", out.toml);
        assert_eq!(
            out.warnings,
            [
                "s.pl:1: tool_spec(bash): confirmation_required(false): bash will change things \
                 without asking (written as [tools.bash] confirm = false)",
                "s.pl:3: loop_config: confirm_destructive_tools(false): write will change things \
                 without asking (written as [tools.write] confirm = false)",
            ]
        );
    }
}
