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
mod skill;
pub mod web;
mod web_search;
mod write;

use agent_loop_protocol::plural;
use agent_loop_tools::custom::CommandDef;
use agent_loop_tools::tool::Typed;
use agent_loop_tools::{beneath, command, fs, lines, tls, tool, Registry, RegistryError, Tool};

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

/// What each built-in tool declares of itself (its name, kind, path parameter, whether it
/// changes things), for checking `[tools.NAME]` tables and for what front ends show.
pub fn specs() -> Vec<tool::ToolSpec> {
    all().iter().map(|tool| tool.spec().clone()).collect()
}

/// The built-in tools, limited to `only` when given (`--tools bash,read`); MCP tools added
/// later are then limited to the `mcp.` names in it. An unknown built-in name is an error
/// that lists the known ones.
pub fn registry(only: Option<&[String]>) -> Result<Registry, RegistryError> {
    configured(only, Vec::new(), &[], None)
}

/// The built-in tools with `confirm` and the command tools of `[tools.NAME]` (see
/// [`Registry::configured`]), and the `skill` tool when the run found skills (`skills`).
pub fn configured(
    only: Option<&[String]>,
    custom: Vec<CommandDef>,
    confirm: &[(String, bool)],
    skills: Option<&agent_loop_skills::Shared>,
) -> Result<Registry, RegistryError> {
    let mut builtins = all();
    if let Some(library) = skills {
        builtins.push(Typed::boxed(skill::Skill {
            library: library.clone(),
        }));
    }
    Registry::configured(builtins, only, custom, confirm)
}

/// Which charsets read_url decodes, for `agent-loop config`.
pub fn read_url_status() -> String {
    format!("read_url decodes: {}", web::charset::DECODED)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool written as the docs say (docs/library.md, "A new built-in tool"): what it
    /// declares is in its spec, where the configuration and the front ends read it.
    #[test]
    fn a_new_builtin_declares_its_facts_once() {
        use agent_loop_tools::tool::{Builtin, Param, ToolContext, ToolOutput};
        use agent_loop_tools::{Effect, ToolKind};

        struct Touch;
        impl Builtin for Touch {
            const NAME: &'static str = "touch";
            const DESCRIPTION: &'static str = "Create an empty file.";
            const MAIN_PARAM: &'static str = "path";
            const KIND: ToolKind = ToolKind::Edit;
            const EFFECT: Effect = Effect::Changes;
            const PATH_PARAM: Option<&'static str> = Some("path");
            const PARAMS: &'static [Param] = &[Param::required("path", "string", "The file.")];
            type Args = serde_json::Value;
            async fn run(&self, _: serde_json::Value, _: &ToolContext) -> ToolOutput {
                ToolOutput::ok("")
            }
        }
        let tool = Typed::boxed(Touch);
        let spec = tool.spec();
        assert_eq!(spec.kind, ToolKind::Edit);
        assert_eq!(spec.effect, Effect::Changes);
        assert_eq!(spec.path_param.as_deref(), Some("path"));
        assert!(spec.mutating, "a tool that changes things asks first");
        let registry = Registry::configured(vec![tool], None, Vec::new(), &[]).unwrap();
        assert_eq!(registry.names(), ["touch"]);
    }

    /// What each built-in declares holds together: its path parameter is one of its
    /// parameters, and a tool that edits or executes changes things.
    #[test]
    fn the_builtins_facts_are_consistent() {
        use agent_loop_tools::{Effect, ToolKind};
        for spec in specs() {
            if let Some(path) = &spec.path_param {
                assert!(
                    spec.schema()["properties"].get(path).is_some(),
                    "{}: {path}",
                    spec.name
                );
            }
            let changes = matches!(spec.kind, ToolKind::Edit | ToolKind::Execute);
            assert_eq!(changes, spec.effect == Effect::Changes, "{}", spec.name);
            assert_eq!(spec.mutating, spec.effect != Effect::Reads, "{}", spec.name);
        }
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
        // Key order follows serde_json's `preserve_order`, on in the workspace's build (the
        // binary's); this crate tested alone sorts its keys, and then only the content compares.
        let probe = serde_json::json!({"b": 0, "a": 0});
        let ordered = probe.to_string().starts_with(r#"{"b""#);
        for spec in registry.specs() {
            assert_eq!(spec.schema()["type"], "object", "{}", spec.name);
            if ordered {
                assert_eq!(
                    spec.schema_text(),
                    spec.schema().to_string(),
                    "{}",
                    spec.name
                );
            }
            let parsed: serde_json::Value = serde_json::from_str(spec.schema_text()).unwrap();
            assert_eq!(&parsed, spec.schema(), "{}", spec.name);
        }
    }
}
