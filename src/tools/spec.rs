//! What every tool is: its spec (what the model is told), where it runs, what it answers,
//! and the object-safe [`Tool`] trait built-in and MCP tools share. Built-in tools are
//! written as [`Builtin`]s, typed arguments in, an output out; [`Typed`] makes a `Tool` of one.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::beneath;
use super::env::EnvPolicy;
use super::fs;
use super::root::Root;
use super::web::WebOptions;
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
    /// What bash does not inherit, and whose values no result shows.
    pub env: std::sync::Arc<EnvPolicy>,
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

    /// A text file's content for `tool`; a missing, unreadable, binary, special (FIFO,
    /// device) or out-of-root file is an error result that says which.
    pub async fn read_text(&self, tool: &str, path: &str) -> Result<(PathBuf, String), ToolOutput> {
        let resolved = self.path(path)?;
        let mut file = match beneath::open_read(self.root.dir(), &resolved, path, false) {
            Ok(beneath::Opened::File(file)) => file,
            Ok(beneath::Opened::Dir(_)) => unreachable!("folders are refused"),
            Err(e) => return Err(ToolOutput::error(e)),
        };
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes)
            .map_err(|e| ToolOutput::error(format!("cannot read {path}: {e}")))?;
        let text = fs::as_text(bytes).ok_or_else(|| {
            ToolOutput::error(format!(
                "{path} is a binary file (not UTF-8 text); {tool} refuses it"
            ))
        })?;
        Ok((resolved, text))
    }

    /// Replaces the file at `resolved` (from [`ToolContext::path`]) beneath the root.
    pub fn replace(
        &self,
        resolved: &std::path::Path,
        shown: &str,
        content: &[u8],
    ) -> Result<(), ToolOutput> {
        beneath::replace(self.root.dir(), resolved, shown, content).map_err(ToolOutput::error)
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

/// A built-in tool: what the model is told of it, its typed arguments, and what it does with
/// them. [`Typed`] makes a [`Tool`] of it.
pub(super) trait Builtin: Send + Sync + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// The parameter a bare argument maps to (`bash(ls -la)`).
    const MAIN_PARAM: &'static str;
    /// Whether it changes anything or sends data out (and so asks for approval).
    const MUTATING: bool;
    /// What one approval covers for the session, from the call's arguments (see
    /// [`ToolSpec::approval_key`]).
    const APPROVAL_KEY: Option<fn(&Value) -> Option<String>> = None;
    /// Its parameters, for the JSON schema the model sees: those `Args` reads.
    const PARAMS: &'static [Param];
    type Args: DeserializeOwned + Send;

    fn run(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl std::future::Future<Output = ToolOutput> + Send;
}

/// One parameter of a built-in tool.
pub(super) struct Param {
    name: &'static str,
    /// Its JSON schema type: `string`, `integer`, `boolean`.
    kind: &'static str,
    description: &'static str,
    required: bool,
}

impl Param {
    pub(super) const fn required(
        name: &'static str,
        kind: &'static str,
        description: &'static str,
    ) -> Param {
        Param {
            name,
            kind,
            description,
            required: true,
        }
    }

    pub(super) const fn optional(
        name: &'static str,
        kind: &'static str,
        description: &'static str,
    ) -> Param {
        Param {
            required: false,
            ..Param::required(name, kind, description)
        }
    }
}

/// The JSON schema of an arguments object with these parameters.
fn schema(params: &[Param]) -> Value {
    let properties: serde_json::Map<String, Value> = params
        .iter()
        .map(|p| {
            let property = serde_json::json!({"description": p.description, "type": p.kind});
            (p.name.to_string(), property)
        })
        .collect();
    let mut schema = serde_json::json!({"properties": properties, "type": "object"});
    let required: Vec<&str> = params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    if !required.is_empty() {
        schema["required"] = serde_json::json!(required);
    }
    schema
}

/// A built-in tool with its spec; its JSON arguments are parsed into the tool's `Args`, and
/// arguments that do not fit are a result for the model naming the tool and the problem.
pub(super) struct Typed<T> {
    tool: T,
    spec: ToolSpec,
}

impl<T: Builtin> Typed<T> {
    pub(super) fn boxed(tool: T) -> Box<dyn Tool> {
        let mut spec = ToolSpec::new(
            T::NAME.into(),
            T::DESCRIPTION.into(),
            T::MAIN_PARAM.into(),
            T::MUTATING,
            schema(T::PARAMS),
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
            Ok(args) => Box::pin(self.tool.run(args, ctx)),
            Err(e) => {
                let error = ToolOutput::error(format!("invalid arguments for {}: {e}", T::NAME));
                Box::pin(std::future::ready(error))
            }
        }
    }
}
