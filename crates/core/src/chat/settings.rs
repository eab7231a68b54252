//! The library's settings, typed: each one parsed once from the text of config.toml, the
//! environment or its built-in default ([`Layers`]), with where it came from, then replaced
//! by a front end's flag with its typed value ([`Setting::flag`]). [`Chat::open`] reads them
//! from here, and `agent-loop config` lists them ([`RunSettings::shown`]).
//!
//! [`Chat::open`]: super::Chat::open

use std::path::Path;
use std::time::Duration;

use crate::agent::{AllowRule, ApprovalMode};
use crate::config::bool_setting::Flag;
use crate::config::settings::{Layers, List, Setting, Shown};
use crate::config::ConfigError;
use crate::context::{ContextMode, CountTokens, SystemMode};
use crate::tools::{EnvPolicy, WebOptions};

/// Tool calls of one answer that run when the settings do not say (the built-in default of
/// [`KEYS`](crate::config::settings::KEYS) says the same).
const DEFAULT_MAX_TOOL_CALLS: u32 = 64;

/// Every setting of [`KEYS`](crate::config::settings::KEYS), typed, with its origin; `None` when nothing sets it (no
/// built-in default either).
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The backend (`a,b,c`: several at once); a flag's wins over a resumed session's.
    pub backend: Option<Setting<String>>,
    /// The model; a flag's wins over a resumed session's.
    pub model: Option<Setting<String>>,
    pub max_iterations: Option<Setting<u32>>,
    /// Tool calls of one answer that run, at least 1.
    pub max_tool_calls: Option<Setting<u32>>,
    /// `--yes` sets it to `never`.
    pub approval: Option<Setting<ApprovalMode>>,
    pub allow: Option<Setting<List<AllowRule>>>,
    pub context: Option<Setting<ContextMode>>,
    /// At least the minimum a backend entry is held to.
    pub max_context_tokens: Option<Setting<u64>>,
    pub tool_result_max_chars: Option<Setting<usize>>,
    pub count_tokens: Option<Setting<CountTokens>>,
    /// `tools.bash.env_keep`.
    pub env_keep: Option<Setting<List<String>>>,
    /// `tools.bash.env_remove`.
    pub env_remove: Option<Setting<List<String>>>,
    pub system_prompt: Option<Setting<String>>,
    pub system_mode: Option<Setting<SystemMode>>,
    pub skill_dirs: Option<Setting<List<String>>>,
    /// Seconds.
    pub web_connect_timeout: Option<Setting<u64>>,
    /// Seconds.
    pub web_timeout: Option<Setting<u64>>,
    pub web_max_bytes: Option<Setting<usize>>,
    pub web_keep_chrome: Option<Setting<Flag>>,
    pub debug: Option<Setting<Flag>>,
}

impl RunSettings {
    /// The settings of config.toml at `file` (if it exists) and the environment as `env`
    /// reports it, over the built-in defaults.
    pub fn load(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        RunSettings::read(&Layers::load(file, env)?)
    }

    /// Each setting parsed from the layers; the first bad value is an error naming where it
    /// came from. A whole number is read from the least that works: a limit of 0 calls,
    /// characters, bytes or seconds would stop every turn or read at once.
    pub fn read(layers: &Layers) -> Result<Self, ConfigError> {
        let settings = RunSettings {
            backend: layers.setting("backend")?,
            model: layers.setting("model")?,
            max_iterations: layers.whole("max_iterations", 1)?,
            max_tool_calls: layers.whole("max_tool_calls", 1)?,
            approval: layers.setting("approval")?,
            allow: layers.list("allow")?,
            context: layers.setting("context")?,
            max_context_tokens: layers.whole("max_context_tokens", 0)?,
            tool_result_max_chars: layers.whole("tool_result_max_chars", 1)?,
            count_tokens: layers.setting("count_tokens")?,
            env_keep: layers.list("tools.bash.env_keep")?,
            env_remove: layers.list("tools.bash.env_remove")?,
            system_prompt: layers.setting("system_prompt")?,
            system_mode: layers.setting("system_mode")?,
            skill_dirs: layers.list("skill_dirs")?,
            web_connect_timeout: layers.whole("web_connect_timeout", 1)?,
            web_timeout: layers.whole("web_timeout", 1)?,
            web_max_bytes: layers.whole("web_max_bytes", 1)?,
            web_keep_chrome: layers.setting("web_keep_chrome")?,
            debug: layers.setting("debug")?,
        };
        if let Some(Setting { value, origin }) = &settings.max_context_tokens {
            if let Some(why) = crate::context::modes::context_tokens_too_small(*value) {
                return Err(ConfigError::BadSetting {
                    origin: origin.clone(),
                    name: "max_context_tokens".into(),
                    value: value.to_string(),
                    why,
                });
            }
        }
        Ok(settings)
    }

    /// `max_tool_calls`, or its default.
    pub fn max_tool_calls(&self) -> u32 {
        self.max_tool_calls
            .as_ref()
            .map_or(DEFAULT_MAX_TOOL_CALLS, |s| s.value)
    }

    /// Each setting's row of `agent-loop config`, in the order of
    /// [`KEYS`](crate::config::settings::KEYS).
    pub fn shown(&self) -> Vec<(&'static str, Shown)> {
        vec![
            ("backend", Setting::shown(&self.backend)),
            ("model", Setting::shown(&self.model)),
            ("max_iterations", Setting::shown(&self.max_iterations)),
            ("max_tool_calls", Setting::shown(&self.max_tool_calls)),
            ("approval", Setting::shown(&self.approval)),
            ("allow", Setting::shown(&self.allow)),
            ("context", Setting::shown(&self.context)),
            (
                "max_context_tokens",
                Setting::shown(&self.max_context_tokens),
            ),
            (
                "tool_result_max_chars",
                Setting::shown(&self.tool_result_max_chars),
            ),
            ("count_tokens", Setting::shown(&self.count_tokens)),
            ("tools.bash.env_keep", Setting::shown(&self.env_keep)),
            ("tools.bash.env_remove", Setting::shown(&self.env_remove)),
            ("system_prompt", Setting::shown(&self.system_prompt)),
            ("system_mode", Setting::shown(&self.system_mode)),
            ("skill_dirs", Setting::shown(&self.skill_dirs)),
            (
                "web_connect_timeout",
                Setting::shown(&self.web_connect_timeout),
            ),
            ("web_timeout", Setting::shown(&self.web_timeout)),
            ("web_max_bytes", Setting::shown(&self.web_max_bytes)),
            ("web_keep_chrome", Setting::shown(&self.web_keep_chrome)),
            ("debug", Setting::shown(&self.debug)),
        ]
    }

    /// `debug`.
    pub fn debug(&self) -> bool {
        self.debug.as_ref().is_some_and(|d| d.value.0)
    }

    /// `approval`, or its default.
    pub fn approval(&self) -> ApprovalMode {
        self.approval.as_ref().map(|a| a.value).unwrap_or_default()
    }

    /// `web_connect_timeout`, `web_timeout` (seconds), `web_max_bytes` and `web_keep_chrome`,
    /// for the web tools.
    pub fn web_options(&self) -> WebOptions {
        let mut web = WebOptions::default();
        if let Some(s) = &self.web_connect_timeout {
            web.connect_timeout = Duration::from_secs(s.value.max(1));
        }
        if let Some(s) = &self.web_timeout {
            web.timeout = Duration::from_secs(s.value.max(1));
        }
        if let Some(n) = &self.web_max_bytes {
            web.max_bytes = n.value.max(1);
        }
        if let Some(keep) = &self.web_keep_chrome {
            web.keep_chrome = keep.value.0;
        }
        web
    }

    /// The policy of config.toml's `[tools.bash]` for these backends' key variables.
    pub fn env_policy(&self, backend_keys: Vec<String>) -> EnvPolicy {
        let list = |setting: &Option<Setting<List<String>>>| {
            setting.as_ref().map_or(Vec::new(), |s| s.value.0.clone())
        };
        EnvPolicy::new(backend_keys, list(&self.env_keep), list(&self.env_remove))
    }
}

impl Default for RunSettings {
    /// The built-in defaults alone.
    fn default() -> Self {
        Layers::load(None, &|_| None)
            .and_then(|layers| RunSettings::read(&layers))
            .expect("the built-in defaults parse")
    }
}

/// Whether a flag of the front end set this setting.
pub(super) fn flagged<T>(setting: &Option<Setting<T>>) -> bool {
    setting.as_ref().is_some_and(Setting::is_flag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::{Origin, KEYS};

    #[test]
    fn every_key_has_its_field_in_order_and_the_defaults_parse() {
        let settings = RunSettings::default();
        let names: Vec<&str> = settings.shown().iter().map(|(name, _)| *name).collect();
        let keys: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
        assert_eq!(names, keys);
        assert_eq!(settings.approval(), ApprovalMode::OnWrite);
        assert_eq!(
            settings.max_iterations,
            Some(Setting {
                value: 10,
                origin: Origin::Default
            })
        );
    }

    #[test]
    fn a_flag_replaces_a_value_typed() {
        let env = |k: &str| (k == "AGENT_LOOP_ALLOW").then(|| "read, bash:ls*".to_string());
        let mut settings = RunSettings::load(None, &env).unwrap();
        let allow = settings.allow.as_ref().unwrap();
        assert_eq!(allow.value.to_string(), "read,bash:ls*");
        assert_eq!(allow.origin, Origin::Env("AGENT_LOOP_ALLOW".into()));
        settings.approval = Some(Setting::flag(ApprovalMode::Never, "--yes"));
        let shown = settings.shown();
        let approval = shown.iter().find(|(name, _)| *name == "approval").unwrap();
        assert_eq!(
            approval.1,
            Some(("never".to_string(), Origin::Flag("--yes")))
        );
    }

    /// An array of config.toml is taken item by item: a glob's `{a,b}` stays one rule.
    #[test]
    fn a_files_array_keeps_its_items_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "allow = [\"bash:{ls,cat} *\", \"read\"]\n").unwrap();
        let settings = RunSettings::load(Some(&file), &|_| None).unwrap();
        let rules = settings.allow.unwrap().value.0;
        let rules: Vec<String> = rules.iter().map(ToString::to_string).collect();
        assert_eq!(rules, ["bash:{ls,cat} *", "read"]);
    }

    #[test]
    fn too_small_a_budget_names_its_origin() {
        let env = |k: &str| (k == "AGENT_LOOP_MAX_CONTEXT_TOKENS").then(|| "10".to_string());
        let err = RunSettings::load(None, &env).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "environment AGENT_LOOP_MAX_CONTEXT_TOKENS: setting `max_context_tokens` = `10`"
            ),
            "{err}"
        );
    }
}
