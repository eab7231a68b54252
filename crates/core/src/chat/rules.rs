//! Allow rules that can never match fail safe (the call asks), but silently: a user who
//! wrote `BASH:*` or `write:/etc/*` wonders why the question still comes. Each such rule gets
//! a warning at start saying why it matches nothing.

use crate::agent::AllowRule;
use crate::config::{Config, Definition};
use crate::tools::Registry;

/// A warning for each rule of `rules` (given at `origin`) that matches no call here: a tool
/// not offered (unless the backend runs tools of its own, whose names it chooses), an MCP
/// server not configured, an empty pattern, or an absolute path for a file tool, whose
/// patterns match paths relative to the root.
pub(super) fn unmatchable(
    rules: &[AllowRule],
    origin: &str,
    tools: &Registry,
    config: &Config,
    def: &Definition,
) -> Vec<String> {
    let own_tools = match def {
        Definition::Cli(d) => d.parsers.own_tools,
        Definition::Pty(_) | Definition::Acp(_) => true,
        Definition::Http(_) => false,
    };
    let names = tools.names();
    rules
        .iter()
        .filter_map(|rule| {
            let why = why_unmatchable(rule, tools, &names, config, own_tools)?;
            Some(format!(
                "warning: allow rule `{rule}` ({origin}) matches no call: {why}"
            ))
        })
        .collect()
}

fn why_unmatchable(
    rule: &AllowRule,
    tools: &Registry,
    names: &[&str],
    config: &Config,
    own_tools: bool,
) -> Option<String> {
    let tool = rule.tool.as_str();
    if let Some(rest) = tool.strip_prefix("mcp.") {
        let server = rest.split('.').next().unwrap_or_default();
        if !config.mcp_servers.contains_key(server) {
            return Some(format!("no MCP server `{server}` is configured"));
        }
        if tool.contains('*') {
            return Some("a tool's name is matched whole, so a `*` in it matches nothing".into());
        }
    } else if let Some(spec) = tools.get(tool).map(|t| t.spec()) {
        let pattern = rule.pattern_text()?;
        if pattern.is_empty() {
            return Some(format!(
                "its pattern is empty (`{tool}` alone allows every call)"
            ));
        }
        let file_tool = spec.path_param.as_deref() == Some(spec.main_param.as_str());
        if file_tool && pattern.starts_with('/') {
            return Some(format!(
                "{tool}'s paths are matched relative to --root (`{tool}:docs/*`), never as absolute paths"
            ));
        }
    } else if !own_tools {
        let like = names
            .iter()
            .find(|n| n.eq_ignore_ascii_case(tool))
            .copied()
            .or_else(|| crate::config::closest(tool, names.iter().copied()));
        return Some(match like {
            Some(like) => format!("no tool `{tool}` is offered here (did you mean `{like}`?)"),
            None => format!("no tool `{tool}` is offered here ({})", names.join(", ")),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(rules: &[&str], backend: &str) -> Vec<String> {
        let config = Config::from_sources(&[crate::config::Source::builtin()]).unwrap();
        let tools = crate::builtins::registry(None).unwrap();
        let rules: Vec<AllowRule> = rules.iter().map(|r| r.parse().unwrap()).collect();
        let def = config.backend(backend).unwrap();
        unmatchable(&rules, "flag --allow", &tools, &config, def)
    }

    #[test]
    fn rules_that_match_nothing_are_named_with_the_reason() {
        let said = warnings(
            &[
                "BASH:*",
                "bash:",
                "write:/etc/*",
                "nosuchtool",
                "mcp.nosrv.x",
            ],
            "demo",
        );
        let reasons: Vec<&str> = said
            .iter()
            .map(|w| w.split_once("matches no call: ").unwrap().1)
            .collect();
        assert_eq!(
            reasons,
            [
                "no tool `BASH` is offered here (did you mean `bash`?)",
                "its pattern is empty (`bash` alone allows every call)",
                "write's paths are matched relative to --root (`write:docs/*`), never as absolute paths",
                "no tool `nosuchtool` is offered here (bash, read, write, edit, ls, grep, read_url)",
                "no MCP server `nosrv` is configured",
            ],
        );
        assert!(said[0].starts_with("warning: allow rule `BASH:*` (flag --allow) "));
        let fine = [
            "bash:git status",
            "read",
            "write:docs/*",
            "read_url:https://docs.rs/*",
        ];
        assert!(warnings(&fine, "demo").is_empty());
        // An agent that runs its own tools names them: `Shell` may be one of them.
        assert!(warnings(&["Shell:git status"], "qwen-tui").is_empty());
    }
}
