//! The tools agent-loop offers the model out of the box: bash, read, write, edit, ls, grep,
//! read_url, and web_search when a search provider is set up. Each is a typed
//! [`Builtin`](agent_loop_tools::tool::Builtin) on agent-loop-tools' interface; this crate
//! lists them once ([`all`]) and builds the registry of a run from them.
//!
//! It sits beside the backends and the MCP client, not below them: a change to a tool here
//! rebuilds the crates that put a run together (core) and the binary only.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

mod bash;
mod edit;
mod grep;
mod ls;
mod read;
mod read_url;
pub mod web;
mod web_search;
mod write;

use agent_loop_protocol::plural;
use agent_loop_tools::custom::CommandDef;
use agent_loop_tools::tool::Typed;
use agent_loop_tools::{beneath, command, fs, tls, tool, Registry, RegistryError, Tool};

/// The built-in tools, in the order they are offered: the one list of them.
pub fn all() -> Vec<Box<dyn Tool>> {
    let mut tools: Vec<Box<dyn Tool>> = vec![
        Typed::boxed(bash::Bash),
        Typed::boxed(read::Read),
        Typed::boxed(write::Write),
        Typed::boxed(edit::Edit),
        Typed::boxed(ls::Ls),
        Typed::boxed(grep::Grep),
        Typed::boxed(read_url::ReadUrl),
    ];
    if let Some(provider) = web::provider::Provider::from_env() {
        tools.push(Typed::boxed(web_search::WebSearch { provider }));
    }
    tools
}

/// The built-in tools, limited to `only` when given (`--tools bash,read`); MCP tools added
/// later are then limited to the `mcp.` names in it. An unknown built-in name is an error
/// that lists the known ones.
pub fn registry(only: Option<&[String]>) -> Result<Registry, RegistryError> {
    configured(only, Vec::new(), &[])
}

/// The built-in tools with `confirm` and the command tools of `[tools.NAME]`: see
/// [`Registry::configured`].
pub fn configured(
    only: Option<&[String]>,
    custom: Vec<CommandDef>,
    confirm: &[(String, bool)],
) -> Result<Registry, RegistryError> {
    Registry::configured(all(), only, custom, confirm)
}

/// Which charsets read_url decodes, for `agent-loop config`.
pub fn read_url_status() -> String {
    format!("read_url decodes: {}", web::charset::DECODED)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The configuration checks `[tools.NAME]` tables against agent-loop-tools' list of
    /// the built-in names: it is this crate's list.
    #[test]
    fn the_names_the_configuration_knows_are_the_builtins() {
        let names: Vec<String> = all().iter().map(|t| t.spec().name.clone()).collect();
        assert_eq!(names, agent_loop_tools::builtin_names());
    }

    #[test]
    fn an_unknown_tool_names_the_known_ones_and_is_a_configuration_error() {
        let err = registry(Some(&["nope".to_string()])).err().unwrap();
        let RegistryError::UnknownTool { name, known } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(name, "nope");
        assert!(known.iter().any(|k| k == "bash"), "{known:?}");
        let err = agent_loop_protocol::Error::from(err);
        assert_eq!(err.kind, agent_loop_protocol::ErrorKind::Config);
        assert!(err
            .message
            .starts_with("--tools: unknown tool `nope`; the tools are "));
    }

    /// Every built-in schema is valid JSON whose text is exactly what serde_json writes for
    /// it (keys in sorted order): the prompt shows the same text as when it was built from a
    /// tree, and HTTP backends get the same tree.
    #[test]
    fn builtin_schemas_are_canonical_json() {
        let registry = registry(None).unwrap();
        assert_eq!(
            // web_search follows when the environment sets up a provider.
            registry.names()[..7],
            ["bash", "read", "write", "edit", "ls", "grep", "read_url"]
        );
        for spec in registry.specs() {
            assert_eq!(spec.schema()["type"], "object", "{}", spec.name);
            assert_eq!(
                spec.schema_text(),
                spec.schema().to_string(),
                "{}",
                spec.name
            );
        }
    }
}
