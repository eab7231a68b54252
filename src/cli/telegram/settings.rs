//! The bot's settings: the library knows none of them. In config.toml they are the entries
//! of a `[telegram]` table; as environment variables and in `agent-loop config` they are
//! `telegram_*` like any other setting.

use agent_loop::settings::{FrontEndKeys, Key};

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
