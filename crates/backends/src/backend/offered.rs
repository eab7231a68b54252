//! The guard against an agent CLI's own tools in `loop` mode. There agent-loop runs every
//! tool, with its approval and confinement, and a preset's `loop_args` turn the CLI's own
//! tools off; but a CLI's tool set grows with its versions (Qwen Code 0.24.4 added eight that
//! the qwen preset's flags of then did not name), and a tool the flags miss would run unasked.
//! Claude Code and Qwen Code list the tools they offer their model in their init record
//! (`json_offered_tools`): a tool listed there ends the turn with an error that names them.
//! In a stream (`output = "jsonl"`) the record is read as it comes, before the model's first
//! answer, and the CLI's process group is killed at once; a single JSON document (qwen's
//! `json`) can only be read once the CLI has ended, when its model may have called them, and
//! the error says so. A tool a CLI uses without listing it is not seen (docs/security.md).

use crate::config::BackendDef;
use crate::parse::OutputFormat;
use crate::Error;

use super::BackendError;

/// Whether a run's stream is read for the tools as it comes: `loop` mode, a JSONL stream,
/// and `json_offered_tools` set. Outside `loop` mode the CLI's own tools are wanted.
pub(super) fn watched(def: &BackendDef) -> bool {
    !def.parsers.own_tools
        && def.parsers.output == OutputFormat::Jsonl
        && def.parsers.json.offered_tools.is_some()
}

/// The error that ends the turn: `stopped`, the CLI was killed as soon as it listed them.
pub(super) fn error(def: &BackendDef, tools: &[String], stopped: bool) -> Error {
    let when = if stopped {
        "It was stopped as soon as it listed them, before its model could call them."
    } else {
        "Its output is read when it has ended: its model may have called them already, so \
         check what it did."
    };
    BackendError::OwnToolsOffered {
        backend: def.name.clone(),
        tools: tools.join(", "),
        when,
        at: def.defined_at.clone(),
        command: def.command.clone(),
    }
    .into()
}
