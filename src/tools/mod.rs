//! The tools agent-loop runs locally on the model's behalf (bash, read, write, edit, ls, grep,
//! read_url, and web_search when a search provider is set up), each described by a JSON schema that goes into the text preamble for CLI backends and, for
//! HTTP backends, into native tool definitions.

mod bash;
mod edit;
mod fs;
mod grep;
mod ls;
mod read;
mod read_url;
mod root;
pub mod web;
mod web_search;
mod write;

pub use fs::write_atomic;
pub use root::Root;
pub use web::WebOptions;

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::BoxFuture;

/// What the model is told about a tool, and what the loop needs to know to run it.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The parameter a bare argument maps to when a backend prints `bash(ls -la)` rather
    /// than JSON.
    pub main_param: String,
    /// Whether it changes anything or sends data out (and so asks for approval).
    pub mutating: bool,
    /// What one approval covers for the session (read_url: the URL's host), when not just
    /// this call.
    pub approval_key: Option<fn(&Value) -> Option<String>>,
    /// The JSON schema of the arguments object, for HTTP backends' native tool definitions.
    schema: Value,
    /// The same as compact JSON text, for the prompts of CLI backends.
    schema_text: String,
}

impl ToolSpec {
    pub fn new(
        name: String,
        description: String,
        main_param: String,
        mutating: bool,
        schema: Value,
    ) -> ToolSpec {
        ToolSpec {
            name,
            description,
            main_param,
            mutating,
            approval_key: None,
            schema_text: schema.to_string(),
            schema,
        }
    }

    /// The arguments' JSON schema, as compact JSON text.
    pub fn schema_text(&self) -> &str {
        &self.schema_text
    }

    /// The arguments' JSON schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

/// Where a tool runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Relative paths and bash commands start here.
    pub cwd: PathBuf,
    /// Where the file tools may go (`--root`).
    pub root: Root,
    /// How read_url fetches, and the URLs allow rules name.
    pub web: WebOptions,
}

impl ToolContext {
    /// A path from the model, relative to the working directory unless absolute, resolved and
    /// checked against the root; the error is a result for the model.
    pub fn path(&self, path: &str) -> Result<PathBuf, ToolOutput> {
        let joined = fs::resolve(&self.cwd, path);
        self.root.check(&joined, path).map_err(ToolOutput::error)
    }

    /// A text file's content for `tool`; a missing, unreadable, binary or out-of-root file
    /// is an error result that says which.
    pub async fn read_text(&self, tool: &str, path: &str) -> Result<(PathBuf, String), ToolOutput> {
        let resolved = self.path(path)?;
        let bytes = tokio::fs::read(&resolved)
            .await
            .map_err(|e| ToolOutput::error(format!("cannot read {path}: {e}")))?;
        let text = fs::as_text(bytes).ok_or_else(|| {
            ToolOutput::error(format!(
                "{path} is a binary file (not UTF-8 text); {tool} refuses it"
            ))
        })?;
        Ok((resolved, text))
    }
}

/// A tool's answer to the model. A failure (`ok == false`) is a result for the model, not an
/// error of the loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub ok: bool,
    pub output: String,
    pub exit_code: Option<i32>,
}

impl ToolOutput {
    pub fn ok(output: impl Into<String>) -> Self {
        ToolOutput {
            ok: true,
            output: output.into(),
            exit_code: None,
        }
    }

    pub fn error(output: impl Into<String>) -> Self {
        ToolOutput {
            ok: false,
            output: output.into(),
            exit_code: None,
        }
    }
}

/// One tool. Object-safe so built-in and MCP tools share the registry.
pub trait Tool: Send + Sync {
    fn spec(&self) -> &ToolSpec;
    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput>;
}

/// The built-in tools, in the order they are offered: the one list of them.
fn builtins() -> Vec<Box<dyn Tool>> {
    let mut tools: Vec<Box<dyn Tool>> = vec![
        Typed::boxed(bash::Bash),
        Typed::boxed(read::Read),
        Typed::boxed(write::Write),
        Typed::boxed(edit::Edit),
        Typed::boxed(ls::Ls),
        Typed::boxed(grep::Grep),
        Typed::boxed(read_url::ReadUrl),
    ];
    if let Some(provider) = web::search::Provider::from_env() {
        tools.push(Typed::boxed(web_search::WebSearch { provider }));
    }
    tools
}

/// The names of the built-in tools, in the order they are offered.
pub fn builtin_names() -> Vec<String> {
    builtins().iter().map(|t| t.spec().name.clone()).collect()
}

/// The web search provider the environment sets up, in a few words (`agent-loop backends`
/// and `config`), or what to set for one.
pub fn web_search_status() -> String {
    match web::search::Provider::from_env() {
        Some(provider) => format!("web_search: {}", provider.describe()),
        None => format!(
            "web_search: not offered; set {} (or {} for a SearXNG instance)",
            web::search::BRAVE_KEY_ENV,
            web::search::SEARXNG_ENV
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
    /// The built-in tools, limited to `only` when given (`--tools bash,read`); MCP tools
    /// added later are then limited to the `mcp.` names in it. An unknown built-in name is an
    /// error that lists the known ones.
    pub fn builtin(only: Option<&[String]>) -> Result<Self, crate::Error> {
        let all = builtins();
        if let Some(names) = only {
            for name in names {
                if name == "web_search" && !all.iter().any(|t| t.spec().name == *name) {
                    return Err(crate::Error::config(format!(
                        "--tools: web_search needs a search provider: set {} (a Brave Search API key), or {} for a SearXNG instance",
                        web::search::BRAVE_KEY_ENV,
                        web::search::SEARXNG_ENV
                    )));
                }
                if !all.iter().any(|t| t.spec().name == *name) && !name.starts_with("mcp.") {
                    return Err(crate::Error::config(format!(
                        "--tools: unknown tool `{name}`; the tools are {}, and MCP tools as mcp.SERVER.TOOL, mcp.SERVER.* or mcp.*",
                        builtin_names().join(", ")
                    )));
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
    /// already taken is an error.
    pub fn add(&mut self, tool: Box<dyn Tool>) -> Result<(), crate::Error> {
        let name = &tool.spec().name;
        if self.only.as_ref().is_some_and(|only| !listed(only, name)) {
            return Ok(());
        }
        if self.get(name).is_some() {
            return Err(crate::Error::config(format!(
                "two tools are called `{name}`"
            )));
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

/// A built-in tool: what the model is told of it, its typed arguments, and what it does with
/// them. [`Typed`] makes a [`Tool`] of it.
trait Builtin: Send + Sync + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// The parameter a bare argument maps to (`bash(ls -la)`).
    const MAIN_PARAM: &'static str;
    /// Whether it changes anything or sends data out (and so asks for approval).
    const MUTATING: bool;
    /// What one approval covers for the session, from the call's arguments (see
    /// [`ToolSpec::approval_key`]).
    const APPROVAL_KEY: Option<fn(&Value) -> Option<String>> = None;
    type Args: DeserializeOwned + Send;

    /// The JSON schema of `Args`.
    fn schema() -> Value;

    fn run<'a>(&'a self, args: Self::Args, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput>;
}

/// A built-in tool with its spec; its JSON arguments are parsed into the tool's `Args`, and
/// arguments that do not fit are a result for the model naming the tool and the problem.
struct Typed<T> {
    tool: T,
    spec: ToolSpec,
}

impl<T: Builtin> Typed<T> {
    fn boxed(tool: T) -> Box<dyn Tool> {
        let mut spec = ToolSpec::new(
            T::NAME.into(),
            T::DESCRIPTION.into(),
            T::MAIN_PARAM.into(),
            T::MUTATING,
            T::schema(),
        );
        spec.approval_key = T::APPROVAL_KEY;
        Box::new(Typed { tool, spec })
    }
}

impl<T: Builtin> Tool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        match serde_json::from_value(args) {
            Ok(args) => self.tool.run(args, ctx),
            Err(e) => {
                let error = ToolOutput::error(format!("invalid arguments for {}: {e}", T::NAME));
                Box::pin(std::future::ready(error))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in schema is valid JSON whose text is exactly what serde_json writes for
    /// it (keys in sorted order): the prompt shows the same text as when it was built from a
    /// tree, and HTTP backends get the same tree.
    #[test]
    fn builtin_schemas_are_canonical_json() {
        let registry = Registry::builtin(None).unwrap();
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

    /// A spec made from a tree (an MCP tool's) shows the tree's own text.
    #[test]
    fn spec_from_a_tree() {
        let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let spec = ToolSpec::new("t".into(), "d".into(), "q".into(), false, schema.clone());
        assert_eq!(spec.schema(), &schema);
        assert_eq!(
            spec.schema_text(),
            r#"{"properties":{"q":{"type":"string"}},"type":"object"}"#
        );
    }
}
