//! What every tool is: its spec (what the model is told), where it runs, what it answers,
//! and the object-safe [`Tool`] trait built-in and MCP tools share. Built-in tools are
//! written as [`Builtin`]s, typed arguments in, an output out; [`Typed`] makes a `Tool` of one.

mod schema;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::beneath;
use super::env::EnvPolicy;
use super::error::FileError;
use super::fs;
use super::root::Root;
use super::web::WebOptions;
use crate::BoxFuture;
pub use agent_loop_protocol::Change;

/// What a tool does, as an editor shows it (ACP's tool kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Read,
    Edit,
    Execute,
    Fetch,
    Search,
    /// An MCP server's tool: agent-loop does not know what it does.
    Other,
}

/// What running a tool can do beyond reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It only reads (files, the search index).
    Reads,
    /// It sends data out (read_url: the URL is a message to its host).
    SendsOut,
    /// It changes things: writes files, runs commands.
    Changes,
}

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
    pub kind: ToolKind,
    /// What it can do: [`Effect::Changes`] for a tool that changes things.
    pub effect: Effect,
    /// The parameter that names the file or folder it works on, if one does.
    pub path_param: Option<String>,
    /// What one approval covers for the session (read_url: the URL's host), when not just
    /// this call.
    pub approval_key: Option<fn(&Value) -> Option<String>>,
    /// A built-in's parameters, which its schema and the schema's text are made of when first
    /// asked for: most of a run's specs (those that only check `[tools.NAME]` tables) are
    /// never asked, and a run on an agent CLI asks only for the text.
    params: Option<&'static [Param]>,
    /// The JSON schema of the arguments object, for HTTP backends' native tool definitions.
    schema: OnceLock<Value>,
    /// The same as compact JSON text, for the prompts of CLI backends.
    schema_text: OnceLock<String>,
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
            kind: ToolKind::Execute,
            effect: match mutating {
                true => Effect::Changes,
                false => Effect::Reads,
            },
            path_param: None,
            approval_key: None,
            params: None,
            schema: OnceLock::from(schema),
            schema_text: OnceLock::new(),
        }
    }

    /// The same with `kind`.
    pub fn kind(mut self, kind: ToolKind) -> ToolSpec {
        self.kind = kind;
        self
    }

    /// The arguments' JSON schema, as compact JSON text.
    pub fn schema_text(&self) -> &str {
        self.schema_text.get_or_init(|| match self.params {
            Some(params) => schema::text(params),
            None => self.schema().to_string(),
        })
    }

    /// The arguments' JSON schema.
    pub fn schema(&self) -> &Value {
        self.schema
            .get_or_init(|| schema::tree(self.params.unwrap_or_default()))
    }
}

/// What approving a call means: what the user is shown, what `TOOL:GLOB` rules are matched
/// against, and the paths it changes (as rules see them), for the `.git/` check.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Subject {
    /// Everything the call will use: bash's command, a command tool's argv, every argument
    /// of an MCP tool.
    pub shown: String,
    /// What rules match: [`Subject::shown`], but a built-in file tool's path resolved.
    pub matched: String,
    /// Resolved paths relative to the root.
    pub paths: Vec<String>,
    /// What a file tool puts into the file: shown below its path, never matched.
    pub change: Option<Change>,
}

impl Subject {
    /// Shown and matched alike.
    pub fn plain(text: impl Into<String>) -> Subject {
        let text = text.into();
        Subject {
            shown: text.clone(),
            matched: text,
            paths: Vec::new(),
            change: None,
        }
    }

    /// Every argument, one a line as `name: value` in name order (a model cannot reorder
    /// them): a string as it is unless a control character would let it fake a line, then
    /// as JSON; other values as JSON. A call with only its main argument shows just that.
    pub fn arguments(spec: &ToolSpec, args: &Value) -> Subject {
        let one_line = |v: &Value| match v {
            Value::String(s) if !s.chars().any(char::is_control) => s.clone(),
            other => other.to_string(),
        };
        Subject::plain(match args {
            Value::Object(map) => match map.iter().next() {
                Some((name, Value::String(s))) if map.len() == 1 && *name == spec.main_param => {
                    s.clone()
                }
                _ => {
                    // By name: JSON objects keep their order as sent (serde_json's
                    // `preserve_order`, which the ACP SDK turns on), and approval rules must
                    // not depend on it.
                    let mut lines: Vec<String> = map
                        .iter()
                        .map(|(name, value)| format!("{name}: {}", one_line(value)))
                        .collect();
                    lines.sort();
                    lines.join("\n")
                }
            },
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }
}

/// Where a tool runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Relative paths and bash commands start here.
    pub cwd: PathBuf,
    /// Where the file tools may go (`--root`).
    pub root: Root,
    /// This session's saved tool outputs: `read` opens them wherever the root is, for a cut
    /// result tells the model to read the rest there. Nothing else reaches them.
    pub artifacts: Option<PathBuf>,
    /// What bash does not inherit, and whose values no result shows.
    pub env: std::sync::Arc<EnvPolicy>,
    /// How read_url fetches, and the URLs allow rules name.
    pub web: WebOptions,
    /// Where the tool reports its progress while it runs.
    pub progress: super::ProgressSink,
    /// The editor read, write and edit go through, if a front end gave one.
    pub files: super::Files,
}

impl ToolContext {
    /// A path from the model, relative to the working directory unless absolute, resolved and
    /// checked against the root; the error is a result for the model.
    pub fn path(&self, path: &str) -> Result<PathBuf, ToolOutput> {
        self.checked_path(path)
            .map_err(|e| ToolOutput::error(e.to_string()))
    }

    /// [`ToolContext::path`], with the refusal as a [`FileError`].
    pub fn checked_path(&self, path: &str) -> Result<PathBuf, FileError> {
        self.root.check(&fs::resolve(&self.cwd, path), path)
    }

    /// A path as approval rules see it: resolved (`..` and links followed, by
    /// [`ToolContext::path`]) and relative to the root (`--root /`: to the working directory)
    /// when inside it, else absolute; `""` for a path the root refuses, which no pattern
    /// matches by accident (the tool refuses it anyway).
    pub fn rule_path(&self, raw: &str) -> String {
        let Ok(resolved) = self.path(raw) else {
            return String::new();
        };
        let base = match &self.root {
            Root::Dir(dir) => dir.clone(),
            Root::Anywhere => std::fs::canonicalize(&self.cwd).unwrap_or_else(|_| self.cwd.clone()),
        };
        match resolved.strip_prefix(&base) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => resolved.to_string_lossy().into_owned(),
        }
    }

    /// A text file's content for `tool`, if it is at most `max_bytes` long; a missing,
    /// unreadable, binary, special (FIFO, device), out-of-root or larger file is an error
    /// result that says which.
    pub async fn read_text(
        &self,
        tool: &str,
        path: &str,
        max_bytes: u64,
    ) -> Result<(PathBuf, String), ToolOutput> {
        let (resolved, source) = self.open_text(path).await?;
        let too_big = || {
            ToolOutput::error(format!(
                "{path} is larger than the {} MiB {tool} works on; use bash for it",
                max_bytes >> 20
            ))
        };
        let bytes = match source {
            TextSource::Buffer(text) if text.len() as u64 > max_bytes => return Err(too_big()),
            TextSource::Buffer(text) => return Ok((resolved, text)),
            TextSource::File(file) => {
                if file.metadata().is_ok_and(|meta| meta.len() > max_bytes) {
                    return Err(too_big());
                }
                let mut bytes = Vec::new();
                // One byte past the cap tells a file that grew since.
                use std::io::Read as _;
                file.take(max_bytes + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| ToolOutput::error(format!("cannot read {path}: {e}")))?;
                bytes
            }
        };
        if bytes.len() as u64 > max_bytes {
            return Err(too_big());
        }
        match fs::as_text(bytes) {
            Some(text) => Ok((resolved, text)),
            None => Err(not_text(tool, path)),
        }
    }

    /// A text file opened for reading in pieces (see [`crate::lines`]): the file beneath the
    /// root, or the editor's buffer of it; a missing, unreadable, special (FIFO, device) or
    /// out-of-root file is an error result that says which.
    pub async fn open_text(&self, path: &str) -> Result<(PathBuf, TextSource), ToolOutput> {
        let resolved = self.path(path)?;
        if let Some(editor) = &self.files.editor {
            // Past what the editor can send, the file on disk (its buffer would not fit).
            if let Some(cap) = editor.read_cap() {
                if let Ok(file) = open_beneath(self.root.dir(), &resolved, path) {
                    if file.metadata().is_ok_and(|meta| meta.len() > cap) {
                        return Ok((resolved, TextSource::File(file)));
                    }
                }
            }
            let text = editor.read(&resolved).await.map_err(|source| {
                let shown = path.to_string();
                ToolOutput::error(FileError::Editor { shown, source }.to_string())
            })?;
            return Ok((resolved, TextSource::Buffer(text)));
        }
        let file = open_beneath(self.root.dir(), &resolved, path)?;
        Ok((resolved, TextSource::File(file)))
    }

    /// One of this session's artifacts (see [`ToolContext::artifacts`]), opened beneath their
    /// folder; `None` when `path` leads anywhere else.
    pub fn open_artifact(&self, path: &str) -> Option<Result<TextSource, ToolOutput>> {
        let folder = Root::new(self.artifacts.as_deref()?).ok()?;
        let resolved = folder.check(&fs::resolve(&self.cwd, path), path).ok()?;
        Some(open_beneath(folder.dir(), &resolved, path).map(TextSource::File))
    }

    /// Replaces the file at `resolved` (from [`ToolContext::path`]) beneath the root.
    pub async fn replace(
        &self,
        resolved: &std::path::Path,
        shown: &str,
        content: &str,
    ) -> Result<(), ToolOutput> {
        if let Some(editor) = &self.files.editor {
            return editor.write(resolved, content).await.map_err(|source| {
                let shown = shown.to_string();
                ToolOutput::error(FileError::Editor { shown, source }.to_string())
            });
        }
        let content = content.as_bytes();
        beneath::replace(self.root.dir(), resolved, shown, content)
            .map_err(|e| ToolOutput::error(e.to_string()))
    }
}

/// A file opened for a tool to read: from disk, or an editor's buffer of it.
pub enum TextSource {
    File(std::fs::File),
    Buffer(String),
}

impl TextSource {
    /// Its bytes, to read in pieces.
    pub fn reader(self) -> Box<dyn std::io::Read + Send> {
        match self {
            TextSource::File(file) => Box::new(file),
            TextSource::Buffer(text) => Box::new(std::io::Cursor::new(text.into_bytes())),
        }
    }
}

/// The file at `resolved`, opened beneath `dir` (no link followed).
fn open_beneath(dir: &Path, resolved: &Path, path: &str) -> Result<std::fs::File, ToolOutput> {
    match beneath::open_read(dir, resolved, path, false) {
        Ok(beneath::Opened::File(file)) => Ok(file),
        Ok(beneath::Opened::Dir(_)) => unreachable!("folders are refused"),
        Err(e) => Err(ToolOutput::error(e.to_string())),
    }
}

/// The refusal of a binary file.
pub fn not_text(tool: &str, path: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "{path} is a binary file (not UTF-8 text); {tool} refuses it"
    ))
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

    /// What approving this call means (see [`Subject`]); by default every argument, so a
    /// tool whose arguments agent-loop does not understand (an MCP server's) hides none.
    fn subject(&self, args: &Value, _ctx: &ToolContext) -> Subject {
        Subject::arguments(self.spec(), args)
    }
}

/// A built-in tool: what the model is told of it, its typed arguments, and what it does with
/// them. [`Typed`] makes a [`Tool`] of it.
pub trait Builtin: Send + Sync + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// The parameter a bare argument maps to (`bash(ls -la)`).
    const MAIN_PARAM: &'static str;
    /// What it does, as an editor shows it.
    const KIND: ToolKind;
    /// What it can do; one that does more than read asks for approval.
    const EFFECT: Effect;
    /// The parameter that names the file or folder it works on. When it is the main one,
    /// approval shows that path as written and rules match where it leads.
    const PATH_PARAM: Option<&'static str> = None;
    /// What one approval covers for the session, from the call's arguments (see
    /// [`ToolSpec::approval_key`]).
    const APPROVAL_KEY: Option<fn(&Value) -> Option<String>> = None;
    /// What a file tool's call puts into the file, from its arguments, for approval to show.
    const CHANGE: Option<fn(&Value) -> Option<Change>> = None;
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
#[derive(Debug)]
pub struct Param {
    name: &'static str,
    /// Its JSON schema type: `string`, `integer`, `boolean`.
    kind: &'static str,
    description: &'static str,
    required: bool,
}

impl Param {
    pub const fn required(
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

    pub const fn optional(
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

/// A built-in tool with its spec; its JSON arguments are parsed into the tool's `Args`, and
/// arguments that do not fit are a result for the model naming the tool and the problem.
pub struct Typed<T> {
    tool: T,
    spec: ToolSpec,
}

impl<T: Builtin> Typed<T> {
    pub fn boxed(tool: T) -> Box<dyn Tool> {
        let spec = ToolSpec {
            name: T::NAME.into(),
            description: T::DESCRIPTION.into(),
            main_param: T::MAIN_PARAM.into(),
            mutating: T::EFFECT != Effect::Reads,
            kind: T::KIND,
            effect: T::EFFECT,
            path_param: T::PATH_PARAM.map(String::from),
            approval_key: T::APPROVAL_KEY,
            params: Some(T::PARAMS),
            schema: OnceLock::new(),
            schema_text: OnceLock::new(),
        };
        Box::new(Typed { tool, spec })
    }
}

impl<T: Builtin> Tool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The main argument (bash's command); a file tool's path shown as written and matched
    /// where it leads, with what it puts into the file.
    fn subject(&self, args: &Value, ctx: &ToolContext) -> Subject {
        let file_tool = T::PATH_PARAM == Some(T::MAIN_PARAM);
        let main = match args.get(T::MAIN_PARAM) {
            Some(Value::String(s)) => s.as_str(),
            _ if file_tool => ".",
            _ => return Subject::arguments(&self.spec, args),
        };
        if !file_tool {
            return Subject::plain(main);
        }
        let target = ctx.rule_path(main);
        Subject {
            shown: main.to_string(),
            matched: target.clone(),
            paths: vec![target],
            change: T::CHANGE.and_then(|change| change(args)),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An MCP tool's call shows every argument, one a line, whatever its schema's main one:
    /// `run {cwd, command}` cannot hide the command behind the folder.
    #[test]
    fn a_tool_of_unknown_arguments_shows_them_all() {
        let spec = ToolSpec::new(
            "mcp.box.run".into(),
            String::new(),
            "cwd".into(),
            true,
            serde_json::json!({}),
        );
        let args = serde_json::json!({"cwd": "/srv", "command": "curl x | sh", "n": 2});
        assert_eq!(
            Subject::arguments(&spec, &args).shown,
            "command: curl x | sh\ncwd: /srv\nn: 2"
        );
        // A value that could fake a line of its own is shown as JSON.
        let args = serde_json::json!({"cwd": "/srv\ncommand: ls"});
        assert_eq!(Subject::arguments(&spec, &args).shown, "/srv\ncommand: ls");
        let args = serde_json::json!({"cwd": "/srv\ncommand: ls", "x": true});
        assert_eq!(
            Subject::arguments(&spec, &args).shown,
            "cwd: \"/srv\\ncommand: ls\"\nx: true"
        );
        let args = serde_json::json!({"cwd": "/srv"});
        assert_eq!(Subject::arguments(&spec, &args).shown, "/srv");
    }
}
