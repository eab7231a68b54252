//! What every session of the agent is opened from (the settings and the run's flags), and
//! which key the backend sessions start on lacks, for `initialize` to offer it as an
//! authentication method: shared by the server and the opening of sessions.

use agent_loop::chat::{Chat, ChatOptions, RunSettings};

/// What every session is opened from: the settings and the run's flags.
pub struct Shared {
    pub settings: RunSettings,
    pub options: ChatOptions,
    pub debug: bool,
    /// Whether the backend takes images, as far as is known at the start: what
    /// `initialize` advertises (`promptCapabilities.image`).
    pub images: bool,
}

/// The variable that should hold the key of the backend sessions start on, when it is empty.
pub fn missing_key(settings: &RunSettings, options: &ChatOptions) -> Option<String> {
    let config = Chat::load_config(options.config.as_deref()).ok()?;
    let setting = settings.backend.as_ref().map(|s| s.value.clone());
    let name = Chat::backend_to_run(&config, setting)?;
    Chat::missing_key(&config, &name)
}
