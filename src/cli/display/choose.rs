//! Which display a run gets, decided once at start-up from settings already merged from
//! flags, environment variables and config.toml (the display's own settings, defined here)
//! and from facts about the terminal, so the decision itself is a pure function.

use std::io::IsTerminal;

use crate::cli::display::caps::Caps;
use agent_loop::settings::{FrontEndKeys, Key};
use agent_loop::Error;

/// `--display`: how text output is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DisplayMode {
    /// Terminfo when stdout and stderr are terminals, TERM is set and not `dumb`, and its
    /// terminfo entry loads; plain otherwise.
    #[default]
    Auto,
    /// Append-only lines: no escape byte, no carriage return, safe on any terminal and in logs.
    Plain,
    /// Colours and a spinner redrawn in place, with control sequences from the terminfo entry
    /// of TERM only.
    Terminfo,
    /// In the REPL, a screen of three parts: the conversation (scrolled with PgUp and PgDn),
    /// a status line and the input line; terminfo otherwise, or where the entry lacks what
    /// it needs.
    View,
}

/// `--output`: text for people or JSON lines for programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// The display chosen by --display.
    #[default]
    Text,
    /// One JSON object per event on stdout, and nothing else.
    Jsonl,
}

/// Names as on the command line (`plain`, `jsonl`), for the settings layers and
/// `agent-loop config`.
macro_rules! named {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let value = clap::ValueEnum::to_possible_value(self).expect("no skipped variants");
                f.write_str(value.get_name())
            }
        }

        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                <$t as clap::ValueEnum>::from_str(s, true).map_err(|_| {
                    let names: Vec<String> = <$t as clap::ValueEnum>::value_variants()
                        .iter()
                        .map(ToString::to_string)
                        .collect();
                    format!("`{s}` is not one of {}", names.join(", "))
                })
            }
        }
    )*};
}

named!(DisplayMode, OutputFormat);

/// The settings of the display, which the library does not know: top-level keys of
/// config.toml, `AGENT_LOOP_DISPLAY` and `AGENT_LOOP_OUTPUT`, and the flags.
pub const SETTINGS: FrontEndKeys = FrontEndKeys {
    keys: &[
        Key {
            name: "display",
            flag: Some("--display"),
            default: Some("auto"),
            help: "how the conversation is shown: auto, plain, terminfo, view",
        },
        Key {
            name: "output",
            flag: Some("--output"),
            default: Some("text"),
            help: "text for people, or jsonl for programs",
        },
    ],
    table: None,
    entries: &[],
};

/// The merged settings that decide the display.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub display: DisplayMode,
    pub output: OutputFormat,
    /// `--quiet`: the final answer alone on stdout.
    pub quiet: bool,
    /// `NO_COLOR` is set: no colour in any mode.
    pub no_color: bool,
}

/// What the process is attached to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Terminal {
    pub stdout_tty: bool,
    pub stderr_tty: bool,
    /// `TERM`, if set.
    pub term: Option<String>,
}

impl Terminal {
    /// The terminal of this process.
    pub fn detect() -> Terminal {
        Terminal {
            stdout_tty: std::io::stdout().is_terminal(),
            stderr_tty: std::io::stderr().is_terminal(),
            term: std::env::var("TERM").ok(),
        }
    }
}

/// Whether `NO_COLOR` asks for no colour: set and not empty (no-color.org).
pub fn no_color_requested(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// The display a run gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Plain,
    /// With the capabilities of the entry (colours already removed for `NO_COLOR`).
    Terminfo(Box<Caps>),
    /// The view, with the entry's capabilities.
    View(Box<Caps>),
    Jsonl,
    Quiet,
}

/// JSON lines win over `--quiet`, which wins over `--display`. `load` reads a terminfo entry
/// by name ([`Caps::load`] outside tests). An explicit `--display terminfo` whose entry cannot
/// be loaded is a configuration error; `auto` then falls back to plain.
pub fn choose(
    settings: &Settings,
    terminal: &Terminal,
    load: impl FnOnce(&str) -> Result<Caps, String>,
) -> Result<Choice, Error> {
    if settings.output == OutputFormat::Jsonl {
        return Ok(Choice::Jsonl);
    }
    if settings.quiet {
        return Ok(Choice::Quiet);
    }
    let term = terminal.term.as_deref().filter(|t| !t.is_empty());
    let view = settings.display == DisplayMode::View;
    let caps = match settings.display {
        DisplayMode::Plain => return Ok(Choice::Plain),
        DisplayMode::Auto => {
            let usable = terminal.stdout_tty && terminal.stderr_tty;
            match term.filter(|t| usable && *t != "dumb").map(load) {
                Some(Ok(caps)) => caps,
                _ => return Ok(Choice::Plain),
            }
        }
        DisplayMode::Terminfo | DisplayMode::View => {
            let mode = settings.display;
            let term = term.ok_or_else(|| {
                Error::config(format!(
                    "--display {mode} needs TERM to name a terminfo entry, and TERM is not set; \
                     use --display plain"
                ))
            })?;
            load(term).map_err(|e| {
                Error::config(format!(
                    "--display {mode}: {e}; use --display plain, or set TERMINFO to the \
                     folder that holds the entry"
                ))
            })?
        }
    };
    let caps = Box::new(if settings.no_color {
        caps.without_colour()
    } else {
        caps
    });
    Ok(match view {
        true => Choice::View(caps),
        false => Choice::Terminfo(caps),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tty(term: Option<&str>) -> Terminal {
        Terminal {
            stdout_tty: true,
            stderr_tty: true,
            term: term.map(str::to_string),
        }
    }

    fn entry(name: &str) -> Result<Caps, String> {
        match name {
            "xterm" => Ok(Caps {
                name: name.into(),
                bold: Some(b"B".to_vec()),
                sgr0: Some(b"0".to_vec()),
                ..Caps::default()
            }),
            _ => Err(format!("no entry {name}")),
        }
    }

    fn settings(display: DisplayMode) -> Settings {
        Settings {
            display,
            ..Settings::default()
        }
    }

    #[test]
    fn auto_uses_terminfo_only_on_a_terminal_with_a_real_entry() {
        let auto = settings(DisplayMode::Auto);
        let xterm = choose(&auto, &tty(Some("xterm")), entry).unwrap();
        assert!(matches!(xterm, Choice::Terminfo(c) if c.name == "xterm"));
        for terminal in [
            tty(None),
            tty(Some("")),
            tty(Some("dumb")),
            tty(Some("unknown")),
            Terminal {
                stdout_tty: false,
                ..tty(Some("xterm"))
            },
            Terminal {
                stderr_tty: false,
                ..tty(Some("xterm"))
            },
        ] {
            assert_eq!(
                choose(&auto, &terminal, entry).unwrap(),
                Choice::Plain,
                "{terminal:?}"
            );
        }
    }

    #[test]
    fn explicit_modes_and_precedence() {
        let pipe = Terminal::default();
        let plain = settings(DisplayMode::Plain);
        assert_eq!(
            choose(&plain, &tty(Some("xterm")), entry).unwrap(),
            Choice::Plain
        );
        let terminfo = settings(DisplayMode::Terminfo);
        let forced = choose(
            &terminfo,
            &Terminal {
                term: Some("xterm".into()),
                ..pipe.clone()
            },
            entry,
        );
        assert!(matches!(forced, Ok(Choice::Terminfo(_))));
        let missing = choose(&terminfo, &tty(Some("unknown")), entry).unwrap_err();
        assert!(missing.message.contains("no entry unknown"), "{missing}");
        assert_eq!(crate::cli::outcome::exit_code(&missing), 2);
        assert!(choose(&terminfo, &tty(None), entry).is_err());
        let quiet = Settings {
            quiet: true,
            ..terminfo.clone()
        };
        assert_eq!(choose(&quiet, &tty(None), entry).unwrap(), Choice::Quiet);
        let jsonl = Settings {
            output: OutputFormat::Jsonl,
            ..quiet
        };
        assert_eq!(choose(&jsonl, &tty(None), entry).unwrap(), Choice::Jsonl);
    }

    #[test]
    fn no_color_strips_colours_from_the_entry() {
        let settings = Settings {
            no_color: true,
            ..Settings::default()
        };
        let Choice::Terminfo(caps) = choose(&settings, &tty(Some("xterm")), entry).unwrap() else {
            panic!("not terminfo");
        };
        assert_eq!(caps.bold(), None);
        assert!(no_color_requested(Some("1".as_ref())));
        assert!(!no_color_requested(Some("".as_ref())) && !no_color_requested(None));
    }
}
