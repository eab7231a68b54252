//! How a CLI backend's captured output becomes text, its `render` key: as a terminal would
//! show it (spinners and redrawn lines leave their last frame), or only stripped of escape
//! sequences and control bytes (every frame stays, one after the other).

use std::str::FromStr;

use agent_loop_protocol::UnknownValue;
use agent_loop_scan::{render_terminal, strip_ansi};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Render {
    /// `\r`, `\b`, erasing and cursor moves carried out, line by line (the default).
    #[default]
    Terminal,
    /// Escapes and control bytes removed, nothing carried out.
    Strip,
}

impl Render {
    /// The text of captured output (any bytes; invalid UTF-8 is replaced).
    pub fn text(self, bytes: &[u8]) -> String {
        match self {
            Render::Terminal => render_terminal(bytes),
            Render::Strip => strip_ansi(bytes),
        }
    }
}

impl FromStr for Render {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        match s {
            "terminal" => Ok(Render::Terminal),
            "strip" => Ok(Render::Strip),
            _ => Err(UnknownValue {
                what: "render",
                value: s.to_string(),
                expected: "use terminal (what a terminal would show) or strip (escapes removed, \
                           every frame kept)",
            }),
        }
    }
}
