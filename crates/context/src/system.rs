//! The user's system prompt: `--system FILE`, else `system_prompt = "..."` in config.toml,
//! else `system.md` in agent-loop's config folder. It extends the built-in preamble (`append`,
//! the default: after agent-loop's own instructions) or takes the place of its opening
//! (`replace`). For CLI backends the tool-call format and the tool list always follow, since
//! agent-loop can only read calls written in that format; HTTP backends get their tools
//! natively, so there the text is the whole instruction. `AGENTS.md` comes after either way:
//! the project's notes are more specific than the user's general ones, so they come last.
//! `{date}`, `{cwd}` and `{tools}` in the text are filled in for each request.

use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;

use super::ContextError;
use crate::tools::ToolSpec;
use crate::UnknownValue;

/// How the user's text combines with the built-in preamble.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SystemMode {
    /// After the built-in instructions, under `# Instructions`.
    #[default]
    Append,
    /// In place of the built-in opening.
    Replace,
}

impl std::fmt::Display for SystemMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SystemMode::Append => "append",
            SystemMode::Replace => "replace",
        })
    }
}

impl FromStr for SystemMode {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        match s {
            "append" => Ok(SystemMode::Append),
            "replace" => Ok(SystemMode::Replace),
            _ => Err(UnknownValue {
                what: "system_mode",
                value: s.to_string(),
                expected: "the modes are append, replace",
            }),
        }
    }
}

/// The user's system prompt, as written (placeholders not yet filled in).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SystemPrompt {
    pub text: String,
    pub mode: SystemMode,
    /// Where it came from, for `/system`.
    pub source: String,
}

impl SystemPrompt {
    /// The text with `{date}` (today, UTC, YYYY-MM-DD), `{cwd}` and `{tools}` (the tools'
    /// names, comma-separated) filled in.
    pub fn render(&self, cwd: &Path, tools: &[ToolSpec]) -> String {
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        self.text
            .replace("{date}", &now[..10])
            .replace("{cwd}", &cwd.display().to_string())
            .replace("{tools}", &names.join(", "))
            .trim_end()
            .to_string()
    }

    /// Reads the user's system prompt: `flag` (`--system FILE`), else `setting`
    /// (`system_prompt`), else `system.md` in `dir` if there is one.
    pub fn load(
        flag: Option<&Path>,
        setting: Option<(String, String)>,
        dir: Option<&Path>,
        mode: SystemMode,
    ) -> Result<Option<SystemPrompt>, ContextError> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|source| ContextError::ReadSystemPrompt {
                path: path.to_path_buf(),
                source,
            })
        };
        let (text, source) = if let Some(path) = flag {
            (read(path)?, format!("--system {}", path.display()))
        } else if let Some((text, origin)) = setting {
            (text, format!("system_prompt ({origin})"))
        } else if let Some(path) = dir.map(|d| d.join("system.md")).filter(|p| p.is_file()) {
            (read(&path)?, path.display().to_string())
        } else {
            return Ok(None);
        };
        Ok(Some(SystemPrompt { text, mode, source }))
    }
}

/// The opening of the built-in preamble of a CLI backend, or the user's text in its place.
pub(super) fn write_opening(
    out: &mut String,
    system: Option<&SystemPrompt>,
    tools: &[ToolSpec],
    cwd: &Path,
) {
    match system {
        Some(system) if system.mode == SystemMode::Replace => {
            let _ = writeln!(out, "{}\n", system.render(cwd, tools));
        }
        _ => {
            let _ = writeln!(
                out,
                "You are a coding agent driven by agent-loop. The working directory is {}.",
                cwd.display()
            );
        }
    }
}

/// The user's text after the built-in preamble, in `append` mode.
pub(super) fn write_appended(
    out: &mut String,
    system: Option<&SystemPrompt>,
    tools: &[ToolSpec],
    cwd: &Path,
) {
    if let Some(system) = system.filter(|s| s.mode == SystemMode::Append) {
        let _ = writeln!(out, "\n# Instructions\n{}", system.render(cwd, tools));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native_system;
    use crate::window::Window;
    use crate::Memory;

    fn system(mode: SystemMode) -> SystemPrompt {
        SystemPrompt {
            text: "Be brief. Tools: {tools}. Here: {cwd}. Today: {date}.\n".into(),
            mode,
            source: "test".into(),
        }
    }

    fn today() -> String {
        humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10]
            .to_string()
    }

    #[test]
    fn native_append_and_replace_with_memory_last() {
        let tools = agent_loop_builtins::registry(Some(&["ls".into(), "read".into()])).unwrap();
        let memory = Memory {
            path: "/w/AGENTS.md".into(),
            text: "* tabs\n".into(),
        };
        let append = system(SystemMode::Append);
        let window = Window {
            memory: Some(&memory),
            system: Some(&append),
            ..Window::default()
        };
        let memory_part = "\n# Memory\nNotes kept in AGENTS.md in the working directory; follow them.\n\n* tabs\n";
        assert_eq!(
            native_system("BUILT-IN".into(), &window, tools.specs(), Path::new("/w")),
            format!(
                "BUILT-IN\n# Instructions\nBe brief. Tools: read, ls. Here: /w. Today: {}.{memory_part}",
                today()
            )
        );
        let replace = system(SystemMode::Replace);
        let window = Window {
            system: Some(&replace),
            ..window
        };
        assert_eq!(
            native_system("BUILT-IN".into(), &window, tools.specs(), Path::new("/w")),
            format!(
                "Be brief. Tools: read, ls. Here: /w. Today: {}.{memory_part}",
                today()
            )
        );
    }

    #[test]
    fn load_prefers_the_flag_then_the_setting_then_system_md() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("system.md"), "from file").unwrap();
        let flag = dir.path().join("flag.md");
        std::fs::write(&flag, "from flag").unwrap();
        let setting = || Some(("from setting".to_string(), "config.toml:1".to_string()));
        let load = |f: Option<&Path>, s| {
            SystemPrompt::load(f, s, Some(dir.path()), SystemMode::Append)
                .unwrap()
                .unwrap()
                .text
        };
        assert_eq!(load(Some(&flag), setting()), "from flag");
        assert_eq!(load(None, setting()), "from setting");
        assert_eq!(load(None, None), "from file");
        let missing = dir.path().join("nope.md");
        let err = SystemPrompt::load(Some(&missing), None, None, SystemMode::Append).unwrap_err();
        assert!(
            err.to_string().starts_with("cannot read the system prompt"),
            "{}",
            err.to_string()
        );
        assert_eq!(
            "sideways".parse::<SystemMode>().unwrap_err().to_string(),
            "unknown system_mode `sideways`; the modes are append, replace"
        );
    }
}
