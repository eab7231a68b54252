//! What a tool is and what tools run on: the [`Tool`] trait and its spec, context and output
//! (each described by a JSON schema that goes into the text preamble for CLI backends and, for
//! HTTP backends, into native tool definitions), the [`Registry`] of a run's tools, the
//! command tools of `[tools.NAME]` tables (see `custom`), and below them [`process`]
//! (children in their own process group, with capped output and a watchdog), [`tls`] (the one
//! TLS setup of every HTTP client), [`sse`] (the one reading of server-sent events, for the
//! HTTP backends and MCP's Streamable HTTP alike, so MCP needs no backend), files created
//! privately and opened beneath a root, and the environment policy.
//!
//! The built-in tools (bash, read, write, edit, ls, grep, read_url, web_search) are the crate
//! `agent-loop-builtins`, above this one and beside the backends: a change to one of them
//! rebuilds neither the backends nor the MCP client. This crate depends on
//! `agent-loop-protocol` alone among agent-loop's crates: the tools take values (paths,
//! options, an environment policy), never the settings.
#![deny(clippy::print_stdout, clippy::print_stderr)]
// System calls that need it are in `process`.
#![deny(unsafe_code)]

mod api_name;
pub mod beneath;
pub mod command;
pub mod custom;
mod editor;
mod env;
mod error;
pub mod fs;
pub mod lines;
pub mod private;
#[allow(unsafe_code)]
pub mod process;
mod progress;
mod root;
pub mod sse;
pub mod tls;
pub mod tool;
pub mod web;

pub use api_name::api_name;
pub use beneath::{
    method as confinement_method, open_read, replace, Method as ConfinementMethod, Opened,
};
pub use editor::{Editor, Files, Terminal};
pub use env::{secret_name, EnvPolicy};
pub use error::{EditorError, FileError, RegistryError, RootError};
pub use fs::{write_atomic, write_new};
pub use progress::{Progress, ProgressReports, ProgressSink, Throttle, ToolLog, ToolLogs};
pub use root::Root;
pub use tool::{
    Change, Effect, Subject, TextSource, Tool, ToolContext, ToolKind, ToolOutput, ToolSpec,
};
pub use web::WebOptions;

use agent_loop_protocol::{plural, redact, BoxFuture};

/// The web search provider the environment sets up, in a few words (`agent-loop backends`
/// and `config`), or what to set for one.
pub fn web_search_status() -> String {
    match web::provider::Provider::from_env() {
        Some(provider) => format!("web_search: {}", provider.describe()),
        None => format!(
            "web_search: not offered; set {} (or {} for a SearXNG instance)",
            web::provider::BRAVE_KEY_ENV,
            web::provider::SEARXNG_ENV
        ),
    }
}

/// The set of tools that exist for this run.
pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
    specs: Vec<ToolSpec>,
    /// `--tools`, when given: MCP tools added later must be listed too.
    only: Option<Vec<String>>,
}

/// Whether `--tools` lists `name`: by name, or by a prefix ending in `.*` (`mcp.notes.*` for
/// every tool of the `notes` server, `mcp.*` for every MCP tool).
fn listed(only: &[String], name: &str) -> bool {
    only.iter().any(|n| {
        n == name
            || n.strip_suffix('*')
                .is_some_and(|prefix| prefix.ends_with('.') && name.starts_with(prefix))
    })
}

impl Registry {
    /// The built-in tools (agent-loop-builtins' list), each built-in named in `confirm`
    /// asking for approval or not as it says, then the enabled command tools of
    /// `[tools.NAME]`; limited to `only` when given (`--tools bash,read`), and MCP tools added
    /// later then to the `mcp.` names in it. An unknown name is an error that lists the known
    /// ones.
    pub fn configured(
        builtins: Vec<Box<dyn Tool>>,
        only: Option<&[String]>,
        custom: Vec<custom::CommandDef>,
        confirm: &[(String, bool)],
    ) -> Result<Self, RegistryError> {
        let all: Vec<Box<dyn Tool>> = builtins
            .into_iter()
            .map(
                |tool| match confirm.iter().find(|(n, _)| *n == tool.spec().name) {
                    Some((_, asks)) => {
                        let mut spec = tool.spec().clone();
                        spec.mutating = *asks;
                        Box::new(custom::Confirmed { inner: tool, spec }) as Box<dyn Tool>
                    }
                    None => tool,
                },
            )
            .chain(
                custom
                    .into_iter()
                    .filter(custom::CommandDef::enabled)
                    .map(|def| Box::new(custom::CommandTool::new(def)) as Box<dyn Tool>),
            )
            .collect();
        if let Some(names) = only {
            for name in names {
                if name == "web_search" && !all.iter().any(|t| t.spec().name == *name) {
                    return Err(RegistryError::NoSearchProvider);
                }
                if !all.iter().any(|t| t.spec().name == *name) && !name.starts_with("mcp.") {
                    return Err(RegistryError::UnknownTool {
                        name: name.clone(),
                        known: all.iter().map(|t| t.spec().name.clone()).collect(),
                    });
                }
            }
        }
        let tools: Vec<Box<dyn Tool>> = all
            .into_iter()
            .filter(|t| only.is_none_or(|names| names.iter().any(|n| *n == t.spec().name)))
            .collect();
        let specs = tools.iter().map(|t| t.spec().clone()).collect();
        Ok(Registry {
            tools,
            specs,
            only: only.map(<[String]>::to_vec),
        })
    }

    /// Adds a tool from elsewhere (an MCP server), unless `--tools` leaves it out; a name
    /// already taken is an error, and so is one that an HTTP API would know by the same name
    /// as a tool already there ([`api_name`]: `mcp.s.a.b` and `mcp.s.a__b`).
    pub fn add(&mut self, tool: Box<dyn Tool>) -> Result<(), RegistryError> {
        let name = &tool.spec().name;
        if self.only.as_ref().is_some_and(|only| !listed(only, name)) {
            return Ok(());
        }
        if self.get(name).is_some() {
            return Err(RegistryError::Duplicate { name: name.clone() });
        }
        let api = api_name(name);
        if let Some(other) = self.specs.iter().find(|s| api_name(&s.name) == api) {
            return Err(RegistryError::SameApiName {
                name: name.clone(),
                other: other.name.clone(),
                api: api.into_owned(),
            });
        }
        self.specs.push(tool.spec().clone());
        self.tools.push(tool);
        Ok(())
    }

    /// The `mcp.` names in `--tools` that no tool added so far answers to.
    pub fn unmatched(&self) -> Vec<&str> {
        let Some(only) = &self.only else {
            return Vec::new();
        };
        only.iter()
            .filter(|n| n.starts_with("mcp."))
            .filter(|n| {
                !self
                    .specs
                    .iter()
                    .any(|s| listed(std::slice::from_ref(n), &s.name))
            })
            .map(String::as_str)
            .collect()
    }

    /// Keeps only the tools whose spec passes `keep`.
    pub fn retain(&mut self, keep: impl Fn(&ToolSpec) -> bool) {
        self.tools.retain(|t| keep(t.spec()));
        self.specs.retain(|s| keep(s));
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|t| t.spec().name == name)
            .map(|t| t.as_ref())
    }

    /// Finds a tool by name, ignoring case (`Bash` from a CLI's own notation is `bash`).
    pub fn resolve(&self, name: &str) -> Option<&dyn Tool> {
        self.get(name).or_else(|| {
            self.tools
                .iter()
                .find(|t| t.spec().name.eq_ignore_ascii_case(name))
                .map(|t| t.as_ref())
        })
    }

    pub fn names(&self) -> Vec<&str> {
        self.specs.iter().map(|s| s.name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec made from a tree (an MCP tool's) shows the tree's own text.
    #[test]
    fn spec_from_a_tree() {
        let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let spec = ToolSpec::new("t".into(), "d".into(), "q".into(), false, schema.clone());
        assert_eq!(spec.schema(), &schema);
        // Compared as values: the text's key order depends on serde_json's `preserve_order`,
        // which the workspace's other crates turn on and this crate alone does not.
        let text: serde_json::Value = serde_json::from_str(spec.schema_text()).unwrap();
        assert_eq!(text, schema);
        assert!(!spec.schema_text().contains(' '), "{}", spec.schema_text());
    }

    struct Named(ToolSpec);

    impl Tool for Named {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn run<'a>(
            &'a self,
            _: serde_json::Value,
            _: &'a ToolContext,
        ) -> BoxFuture<'a, ToolOutput> {
            Box::pin(std::future::ready(ToolOutput::ok("")))
        }
    }

    fn named(name: &str) -> Box<dyn Tool> {
        let schema = serde_json::json!({"type": "object"});
        Box::new(Named(ToolSpec::new(
            name.into(),
            String::new(),
            String::new(),
            true,
            schema,
        )))
    }

    /// Two tools an HTTP API would know by one name: the request would hold it twice and a
    /// call would run the first, so the second is refused as a second of one name is.
    #[test]
    fn a_tool_whose_api_name_is_taken_is_refused() {
        let mut registry = Registry::configured(Vec::new(), None, Vec::new(), &[]).unwrap();
        registry.add(named("mcp.s.a.b")).unwrap();
        assert!(matches!(
            registry.add(named("mcp.s.a.b")),
            Err(RegistryError::Duplicate { .. })
        ));
        let refused = registry.add(named("mcp.s.a__b")).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "tools `mcp.s.a.b` and `mcp.s.a__b` would both be called `mcp__s__a__b` by an HTTP API"
        );
        registry.add(named("mcp.s.a_b")).unwrap();
        assert_eq!(registry.names(), ["mcp.s.a.b", "mcp.s.a_b"]);
    }
}
