//! The bot's settings: the library knows none of them. In config.toml they are the entries
//! of a `[telegram]` table; as environment variables and in `agent-loop config` they are
//! `telegram_*` like any other setting. Read typed, with the bot's flags on top.

use agent_loop::settings::{by_flag, FrontEndKeys, Key, Layers, List, Setting};
use agent_loop::Error;

use crate::cli::args::Telegram;

pub const SETTINGS: FrontEndKeys = FrontEndKeys {
    keys: &[
        Key {
            name: "telegram_users",
            flag: Some("--allow-user"),
            default: None,
            help: "Telegram user ids the bot answers, comma-separated",
        },
        Key {
            name: "telegram_token_env",
            flag: None,
            default: Some("TELEGRAM_BOT_TOKEN"),
            help: "environment variable holding the Telegram bot's token",
        },
        Key {
            name: "telegram_max_concurrent",
            flag: Some("--max-concurrent"),
            default: Some("4"),
            help: "Telegram chats whose turns run at once",
        },
    ],
    table: Some("telegram"),
    entries: &[
        ("allowed_users", "telegram_users"),
        ("token_env", "telegram_token_env"),
        ("max_concurrent", "telegram_max_concurrent"),
    ],
};

/// The bot's settings, read from config.toml and the environment, the flags' on top.
pub struct BotSettings {
    /// Who the bot answers.
    pub users: Vec<i64>,
    /// The variable holding the token.
    pub token_env: String,
    /// Chats whose turns run at once, at least one (a 0 is refused where it is read).
    pub max_concurrent: usize,
}

impl BotSettings {
    pub fn read(layers: &Layers, bot: &Telegram) -> Result<Self, Error> {
        let mut users: Option<Setting<List<UserId>>> = layers.list("telegram_users")?;
        let flagged = bot.allow_user.iter().copied().map(UserId).collect();
        by_flag(
            &mut users,
            (!bot.allow_user.is_empty()).then_some(List(flagged)),
            "--allow-user",
        );
        let mut max_concurrent: Option<Setting<usize>> =
            layers.whole("telegram_max_concurrent", 1)?;
        let flagged = bot.max_concurrent.map(|n| n as usize);
        by_flag(&mut max_concurrent, flagged, "--max-concurrent");
        let token_env: Option<Setting<String>> = layers.setting("telegram_token_env")?;
        Ok(BotSettings {
            users: users.map_or(Vec::new(), |u| u.value.0.into_iter().map(|u| u.0).collect()),
            token_env: token_env.map_or_else(|| "TELEGRAM_BOT_TOKEN".into(), |t| t.value),
            max_concurrent: max_concurrent.map_or(4, |n| n.value),
        })
    }
}

/// A Telegram user id, as `--allow-user` and `telegram_users` give it.
#[derive(Debug, Clone, Copy)]
pub struct UserId(pub i64);

impl std::str::FromStr for UserId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        crate::cli::args::parse_user(s).map(UserId)
    }
}

impl std::fmt::Display for UserId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
