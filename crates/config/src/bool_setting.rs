//! A boolean setting as config.toml and the environment write it (`debug`,
//! `web_keep_chrome`).

/// `1`, `true`, `yes`, `on` (and their opposites).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flag(pub bool);

impl std::fmt::Display for Flag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A value that is neither true nor false.
#[derive(Debug, thiserror::Error)]
#[error("expected true or false")]
pub struct NotBool;

impl std::str::FromStr for Flag {
    type Err = NotBool;
    fn from_str(s: &str) -> Result<Self, NotBool> {
        match s.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Flag(true)),
            "0" | "false" | "no" | "off" | "" => Ok(Flag(false)),
            _ => Err(NotBool),
        }
    }
}
