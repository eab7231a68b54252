//! A boolean setting as config.toml and the environment write it (`debug`,
//! `web_keep_chrome`).

/// `1`, `true`, `yes`, `on` (and their opposites).
pub struct Flag(pub bool);

impl std::str::FromStr for Flag {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Flag(true)),
            "0" | "false" | "no" | "off" | "" => Ok(Flag(false)),
            _ => Err("expected true or false".into()),
        }
    }
}
