//! Agent Skills (the agentskills.io specification): folders with a `SKILL.md` of YAML front
//! matter (`name`, `description`, ...) and Markdown instructions, beside optional `scripts/`,
//! `references/` and `assets/`. The model sees a catalog of names and descriptions in every
//! request, loads a skill's instructions when it activates it, and its files when the
//! instructions point at them (progressive disclosure).
//!
//! - [`front`]: the front matter, checked by the specification's rules.
//! - [`discover`]: where skills are looked for, in which order, and which wins a name clash.
//! - [`catalog`]: the catalog the system prompt carries, and what activation returns.
//!
//! This crate knows no agent-loop type: the context manager puts the catalog in the prompt,
//! the built-in `skill` tool reads a skill's files beneath its folder.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

pub mod catalog;
pub mod discover;
pub mod front;

pub use catalog::{activation, catalog, resources};
pub use discover::{BodyError, Library, Origin, Places, Skill, Warning};
pub use front::{FrontMatter, Rule};

/// The name of the built-in tool that activates a skill and reads its files.
pub const TOOL: &str = "skill";

/// The library of a run, shared by the context manager (the catalog) and the `skill` tool.
pub type Shared = std::sync::Arc<std::sync::RwLock<Library>>;
