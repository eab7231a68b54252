//! The context settings that config.toml, the environment and flags lay over a backend's
//! own (`context`, `max_context_tokens`, `tool_result_max_chars`), kept for the whole chat
//! so that a backend switched to (`/backend`) gets its own settings with the same overrides,
//! as the first one did at start-up.

use crate::config::settings::Origin;
use crate::config::Definition;
use crate::context::modes::DEFAULT_MAX_CONTEXT_TOKENS;
use crate::context::{ContextMode, ContextSettings};

use super::RunSettings;

/// What the settings set of a backend's context settings.
#[derive(Debug, Clone, Default)]
pub(super) struct ContextOverrides {
    pub(super) mode: Option<ContextMode>,
    max_tokens: Option<u64>,
    tool_result_max_chars: Option<usize>,
    /// Where `max_context_tokens` was set, when the settings set it.
    budget_origin: Option<String>,
}

impl ContextOverrides {
    pub(super) fn from_settings(settings: &RunSettings) -> Self {
        let budget_origin = match settings.max_context_tokens.as_ref().map(|s| &s.origin) {
            Some(Origin::File(at)) => Some(format!("is set in {at}")),
            Some(Origin::Env(var)) => Some(format!("is set by the environment variable {var}")),
            _ => None,
        };
        ContextOverrides {
            mode: settings.context.as_ref().map(|s| s.value),
            max_tokens: settings.max_context_tokens.as_ref().map(|s| s.value),
            tool_result_max_chars: settings
                .tool_result_max_chars
                .as_ref()
                .map(|s| s.value.max(1)),
            budget_origin,
        }
    }

    /// `def`'s context settings with the overrides applied.
    pub(super) fn apply(&self, def: &Definition) -> ContextSettings {
        let own = def.context();
        ContextSettings {
            mode: self.mode.unwrap_or(own.mode),
            max_tokens: self.max_tokens.unwrap_or(own.max_tokens),
            tool_result_max_chars: self
                .tool_result_max_chars
                .unwrap_or(own.tool_result_max_chars),
        }
    }

    /// Where `def`'s `max_context_tokens` comes from, as the refusal of a request over it
    /// says: `config.toml` or the environment, else the backend's entry (which a terminal or
    /// ACP agent's does not read), else the default.
    pub(super) fn budget_origin(&self, def: &Definition) -> String {
        if let Some(origin) = &self.budget_origin {
            return origin.clone();
        }
        let own = matches!(def, Definition::Cli(_) | Definition::Http(_));
        if own && def.context().max_tokens != DEFAULT_MAX_CONTEXT_TOKENS {
            return format!(
                "is set in backend `{}`'s entry in backends.toml",
                def.name()
            );
        }
        format!(
            "is the built-in default (set it in config.toml{})",
            if own {
                " or in the backend's entry in backends.toml"
            } else {
                ""
            }
        )
    }
}
