//! `agent_backend(Name, Props)` facts as `[backends.NAME]` tables: `type(cli)` as a CLI
//! backend, `type(api)` as an HTTP backend whose wire format, `base_url` and key variable come
//! from its endpoint (see `mapping` for the rest of the spec).

use super::regex::name_groups;
use super::term::Term;
use super::translator::{boolean, key, string, strings, Table, Translator};
use crate::ImportError;

/// One `agent_backend(Name, Props)`.
pub(super) fn backend(
    t: &mut Translator,
    line: usize,
    name: &str,
    props: &[Term],
) -> Result<Table, ImportError> {
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
) -> Result<(), ImportError> {
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
) -> Result<(), ImportError> {
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
        let warning = format!(
            "{}:{line}: {what}: the endpoint's path is not a known API's; base_url is the whole endpoint, check it",
            t.source
        );
        t.warnings
            .push(super::term::printable(&warning).into_owned());
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
    // Mistral's API refuses any tool-call id but 9 letters or digits (the `mistral` preset's).
    if base_url.contains("api.mistral.ai") {
        table.key("tool_call_ids", "alnum9");
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
