//! The skills of a chat: the library found for its working directory (see agent-loop-skills
//! for the places and their order, `skill_dirs` for more), the `skill` tool over it, and
//! `/skills`, which lists each with where it came from and whether it is active.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::context::skills::activated;
use crate::context::{Conversation, SharedLibrary};
use crate::skills::{Library, Places};

/// The skills for `cwd`, when there are any, with the warnings of their reading (files
/// skipped, names clashing). With none there is no catalog and no `skill` tool: a skill
/// added during the session is found by the next one.
pub(super) fn load(cwd: &Path, skill_dirs: &[String]) -> (Option<SharedLibrary>, Vec<String>) {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let extra: Vec<PathBuf> = skill_dirs
        .iter()
        .map(|d| match (d.strip_prefix("~/"), &home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => cwd.join(d),
        })
        .collect();
    let config_dir = crate::config::config_dir();
    let places = Places::new(cwd, home.as_deref(), config_dir.as_deref(), &extra);
    let library = Library::load(places);
    let warnings = library.warnings().iter().map(ToString::to_string).collect();
    let shared = (!library.skills().is_empty()).then(|| Arc::new(RwLock::new(library)));
    (shared, warnings)
}

impl super::Chat {
    /// `/skills`.
    pub fn skills_text(&self) -> String {
        if self.agent.skills().is_none() {
            return none_loaded(&self.agent.options().cwd, &self.skill_dirs);
        }
        list(self.agent.skills(), &self.agent.conversation)
    }
}

const NO_SKILLS: &str = "no skills: put one in .agents/skills/NAME/SKILL.md (docs/skills.md)";

/// `/skills` in a chat that started with none: a skill is loaded only at the start (the
/// catalog is part of the system prompt, the `skill` tool is offered or not), so one added
/// since is found again in the usual places and the user told to restart, rather than to
/// add the file they have just added.
fn none_loaded(cwd: &Path, skill_dirs: &[String]) -> String {
    let (since, _) = load(cwd, skill_dirs);
    let names: Vec<String> = since
        .as_ref()
        .and_then(|l| l.read().ok())
        .map(|l| {
            l.skills()
                .iter()
                .map(|s| format!("{} ({})", s.name(), s.file.display()))
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        return NO_SKILLS.into();
    }
    format!(
        "no skills were found when this chat started; added since: {}. Skills are loaded at \
         the start: restart agent-loop to use them (`agent-loop -c` continues this session)",
        names.join(", ")
    )
}

/// `/skills`: each skill with its origin, whether the conversation activated it, and its
/// `SKILL.md`; then the files skipped.
fn list(library: Option<&SharedLibrary>, conversation: &Conversation) -> String {
    let Some(library) = library.and_then(|l| l.read().ok()) else {
        return NO_SKILLS.into();
    };
    let active = activated(&conversation.messages);
    let mut out = String::new();
    for skill in library.skills() {
        let state = if active.contains(skill.name()) {
            "active"
        } else {
            "available"
        };
        let _ = writeln!(
            out,
            "{}  ({}, {state})  {}",
            skill.name(),
            skill.origin,
            skill.file.display()
        );
        if skill.front.allowed_tools.is_some() {
            let _ = writeln!(
                out,
                "  allowed-tools is ignored: tools keep asking as the approval settings say"
            );
        }
    }
    for warning in library.warnings() {
        let _ = writeln!(out, "warning: {warning}");
    }
    out.trim_end().to_string()
}
