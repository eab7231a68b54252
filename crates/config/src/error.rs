//! What can be wrong with the configuration (`backends.toml`, `config.toml`, the
//! environment's settings, a backend asked for by name), each mistake naming the file and
//! line, the backend, server, tool or setting, and the key; a file that cannot be read or
//! parsed keeps the I/O or TOML error as its `source()`.

use std::path::PathBuf;

use super::settings::Origin;
use crate::{Error, ErrorKind};

/// A configuration that cannot be loaded or used as asked. `at` is always `file:line`.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A configuration file that exists could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file is not TOML, or not the schema. `message` says where (the file, the line when
    /// known, the backend, tool or MCP server that line is in, and the key when it helps)
    /// and what, the parser's message in a newcomer's words; `source` is that message's.
    #[error("{message}")]
    Syntax {
        message: String,
        source: toml::de::Error,
    },
    /// `--backend`, a setting or a list names a backend that is not configured; `near` is the
    /// configured name it was most likely meant to be.
    #[error(
        "no backend named `{name}`{}; configured backends: {} (docs/backends-and-presets.md, \
         \"Adding an agent CLI\", shows how to add one)",
        near.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default(),
        known.join(", ")
    )]
    UnknownBackend {
        name: String,
        near: Option<String>,
        known: Vec<String>,
    },
    /// `auto_order` lists a backend that is not configured.
    #[error("auto_order names `{name}`, which is not a configured backend")]
    AutoOrder { name: String },
    /// A key of a backend entry whose value cannot be used, or that this type does not read.
    #[error("{at}: backend `{backend}`: key `{key}`: {why}")]
    BadKey {
        at: String,
        backend: String,
        key: String,
        why: String,
    },
    /// A backend's regex key that does not compile.
    #[error("{at}: backend `{backend}`: key `{key}`: invalid regex: {source}")]
    BadRegex {
        at: String,
        backend: String,
        key: String,
        source: regex::Error,
    },
    /// A backend entry that runs a program but names none.
    #[error("{at}: backend `{backend}` has no `command` (the program to run, found through PATH)")]
    NoCommand { at: String, backend: String },
    /// A backend's program is not found through PATH; `description` says what it is, to say
    /// how to install it.
    #[error(
        "backend `{backend}`: command `{command}` is not on PATH; install it{}, or fix \
         `command` ({at})",
        match description.as_str() { "" => String::new(), d => format!(" ({d})") }
    )]
    NotOnPath {
        backend: String,
        command: String,
        description: String,
        at: String,
        source: which::Error,
    },
    /// A CLI backend's `args` need `{model}` and no model is set.
    #[error(
        "backend `{backend}` ({at}): `args` uses {{model}} but no model is set; set `model` in \
         its entry, or move the model flag to `model_args`"
    )]
    NoModel { backend: String, at: String },
    /// An `[mcp.servers.NAME]` table that cannot be used.
    #[error("{at}: MCP server `{server}`: {why}")]
    BadServer {
        at: String,
        server: String,
        why: String,
    },
    /// An `[mcp.servers.NAME]` table with neither a program nor an address.
    #[error(
        "{at}: MCP server `{server}` has neither `command` (a program speaking MCP on stdio) \
         nor `url` (a Streamable HTTP address)"
    )]
    NoTransport { at: String, server: String },
    /// A key of a `[tools.NAME]` table whose value cannot be used.
    #[error("{at}: tool `{tool}`: key `{key}`: {why}")]
    BadToolKey {
        at: String,
        tool: String,
        key: String,
        why: String,
    },
    /// A `[tools.NAME]` table whose name the APIs would refuse.
    #[error(
        "{at}: tool `{tool}`: a tool's name is 1 to 64 letters, digits, `_` or `-` (what the \
         APIs accept)"
    )]
    BadToolName { at: String, tool: String },
    /// `config.toml` sets a key that is no setting.
    #[error("{at}: unknown setting `{name}`; the settings are {}", known.join(", "))]
    UnknownSetting {
        at: String,
        name: String,
        known: Vec<&'static str>,
    },
    /// `config.toml` sets a key in a table (`[telegram]`) that the table does not have.
    #[error(
        "{at}: unknown setting `{name}` in [{table}]; its settings are {}",
        known.join(", ")
    )]
    UnknownTableSetting {
        at: String,
        table: &'static str,
        name: String,
        known: Vec<&'static str>,
    },
    /// A setting whose value is not of its type; `origin` is the file and line, the
    /// environment variable or the flag that gave it.
    #[error("{origin}: setting `{name}`{}: {why}", said(.value))]
    BadSetting {
        origin: Origin,
        name: String,
        value: String,
        why: String,
    },
}

/// ` = `VALUE`` after a setting's name; nothing for a setting given no value (its error says so).
fn said(value: &str) -> String {
    match value {
        "" => String::new(),
        value => format!(" = `{value}`"),
    }
}

impl ConfigError {
    /// A key of the backend entry `backend` (at `at`) that cannot be used, and why.
    pub(crate) fn key(
        at: impl Into<String>,
        backend: &str,
        key: &str,
        why: impl Into<String>,
    ) -> Self {
        ConfigError::BadKey {
            at: at.into(),
            backend: backend.to_string(),
            key: key.to_string(),
            why: why.into(),
        }
    }

    /// A file that is not TOML or not the schema, at `place`; `key`, when the line's key is
    /// known, sets the least whole number a message about one asks for (some keys' is 1).
    pub(crate) fn syntax(place: String, key: Option<&str>, source: toml::de::Error) -> Self {
        let min = u64::from(key.is_some_and(|k| FROM_ONE.contains(&k)));
        ConfigError::Syntax {
            message: format!("{place}: {}", plain_words(source.message(), min)),
            source,
        }
    }

    /// Every one is a configuration, a command line or an environment to fix: exit 2.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Config
    }
}

/// serde's message in a newcomer's words. Its unknown key lists every key the table takes (85
/// for a backend) and suggests none; here the nearest is suggested, as a misspelt backend name
/// gets, and the keys are listed only when they are few. Its `u64` is Rust's name for a
/// whole number, here one from `min`.
fn plain_words(message: &str, min: u64) -> String {
    let Some((name, expected)) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once("`, "))
    else {
        return whole_numbers(message, min);
    };
    // `expected one of `a`, `b``, `expected `a` or `b``: the names are every other piece.
    let keys: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let mut out = format!("unknown field `{name}`");
    if let Some(near) = crate::closest(name, keys.iter().copied()) {
        out.push_str(&format!(" (did you mean `{near}`?)"));
    }
    if keys.len() <= MAX_KEYS_LISTED {
        out.push_str(&format!(", {expected}"));
    } else {
        out.push_str(
            "; a backend's keys are in docs/backends-and-presets.md, docs/http.md and \
             docs/pty.md",
        );
    }
    out
}

/// The most keys an unknown-key message lists: a short table's every key (the top level's
/// five, a tool's ten) is worth reading; a backend's 85 is a paragraph nobody reads.
const MAX_KEYS_LISTED: usize = 16;

/// The whole-number keys of backend and tool tables that must be at least 1: each is
/// refused at 0 when its entry is checked, so a `-1` is told the same least value.
const FROM_ONE: &[&str] = &[
    "timeout_s",
    "connect_timeout_s",
    "progress_s",
    "max_output_bytes",
    "max_tokens",
    "requests_per_minute",
    "tokens_per_minute",
    "tool_result_max_chars",
];

/// `…, expected u32` in words: a whole number from `min`, the largest one named when the
/// number was too large, and without quotes when it was written in them.
fn whole_numbers(message: &str, min: u64) -> String {
    let types = [
        ("u64", u64::MAX),
        ("u32", u64::from(u32::MAX)),
        ("u16", u64::from(u16::MAX)),
        ("u8", u64::from(u8::MAX)),
        ("usize", usize::MAX as u64),
    ];
    for (ty, max) in types {
        let Some(written) = message.strip_suffix(&format!(", expected {ty}")) else {
            continue;
        };
        let too_large = written
            .strip_prefix("invalid value: integer `")
            .and_then(|n| n.strip_suffix('`')?.parse::<i64>().ok())
            .is_some_and(|n| n > 0);
        let mut out = format!("{written}, expected a whole number from {min}");
        if too_large {
            out.push_str(&format!(" to {max}"));
        }
        if written.starts_with("invalid type: string") {
            out.push_str(", written without quotes");
        }
        return out;
    }
    message.to_string()
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}

#[cfg(test)]
mod tests {
    use super::plain_words;

    #[test]
    fn an_unknown_key_gets_the_nearest_and_a_short_list() {
        assert_eq!(
            plain_words("unknown field `sever`, expected `servers`", 0),
            "unknown field `sever` (did you mean `servers`?), expected `servers`"
        );
        assert_eq!(
            plain_words("unknown field `x`, expected one of `a`, `b`", 0),
            "unknown field `x`, expected one of `a`, `b`"
        );
        let many: Vec<String> = (0..20).map(|i| format!("`key{i}`")).collect();
        let long = plain_words(
            &format!("unknown field `ky3`, expected one of {}", many.join(", ")),
            0,
        );
        assert!(
            long.starts_with("unknown field `ky3` (did you mean `key3`?); "),
            "{long}"
        );
        assert!(!long.contains("key19"), "{long}");
    }

    #[test]
    fn rust_integer_names_become_words() {
        assert_eq!(
            plain_words("invalid type: string \"5\", expected u64", 0),
            "invalid type: string \"5\", expected a whole number from 0, written without quotes"
        );
        assert_eq!(
            plain_words("invalid value: integer `-1`, expected u64", 1),
            "invalid value: integer `-1`, expected a whole number from 1"
        );
        assert_eq!(
            plain_words("invalid type: floating point `1.5`, expected u64", 1),
            "invalid type: floating point `1.5`, expected a whole number from 1"
        );
        assert_eq!(
            plain_words("invalid value: integer `99999999999`, expected u32", 0),
            "invalid value: integer `99999999999`, expected a whole number from 0 to 4294967295"
        );
    }
}
