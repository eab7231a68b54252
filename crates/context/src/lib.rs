//! The conversation agent-loop owns, and what each request carries of it. The backend never
//! keeps the history: every request is built here, so the backend can change
//! mid-conversation, and every request stays within the backend's token budget.
//!
//! - [`conversation`]: typed messages, each with its size, and the summary in `summarize` mode.
//! - [`image`]: images attached to a user message.
//! - [`tokens`]: token counts from measured bytes and a per-backend, calibrated ratio.
//! - [`exact`]: exact counts where the model's tokenizer is known.
//! - [`modes`]: `continue`, `fresh`, `sliding:N`, `summarize`, and the per-backend settings.
//! - [`budget`]: which messages a request carries (mode, then trimming to the budget).
//! - [`window`]: those messages, borrowed, as backends receive them.
//! - [`formats`] and [`prompt`]: the one prompt string of a CLI backend.
//! - [`summarize`]: asking the backend to summarise older messages.
//! - [`truncate`] and [`artifacts`]: long tool results cut, the full text saved as a file.
//! - [`memory`]: the `AGENTS.md` memory file.
//! - [`system`]: the user's system prompt (`system.md`, `--system`, `system_prompt`).
//! - [`skills`]: the skills' catalog, and activated skills kept in the prompt.
//! - [`metrics`]: messages, tokens and budget used, per turn and for `/tokens`.
//! - [`manager`]: all of it together, as the agent uses it.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

pub mod artifacts;
pub mod budget;
pub mod conversation;
mod error;
pub mod exact;
pub mod formats;
pub mod image;
pub mod manager;
pub mod memory;
pub use agent_loop_protocol::metrics;
pub mod modes;
pub mod prompt;
pub mod skills;
pub mod summarize;
pub mod system;
/// Conversations of known sizes, for the tests of this crate and of the agent loop.
#[doc(hidden)]
pub mod testing;
pub mod tokens;
pub mod truncate;
pub mod window;

pub use artifacts::Artifacts;
pub use budget::Plan;
pub use conversation::{Conversation, Message, Prompt, Summary, ToolCall};
pub use error::ContextError;
pub use exact::{CountTokens, Encoding, Method, Provider};
pub use formats::{ContextFormat, PromptStyle};
pub use image::Image;
pub use manager::ContextManager;
pub use memory::Memory;
pub use metrics::ContextStats;
pub use modes::{ContextMode, ContextSettings, ModeError, Recipient};
pub use prompt::{native_preamble, native_system, render_prompt};
pub use skills::{SharedLibrary, SKILL_TOOL};
pub use system::{SystemMode, SystemPrompt};
pub use window::Window;

// The layers below at the paths the modules name them by.
use agent_loop_protocol::{plural, Error, ErrorKind, UnknownValue};
use agent_loop_tools as tools;
