//! Agent Skills in the requests: the catalog (name, description, location of each skill) in
//! the system prompt of every request that carries agent-loop's tools, read again when a
//! `SKILL.md` changes; and the instructions of every activated skill kept there too once
//! its activation has left the window, so no trimming, sliding or summary loses them.
//!
//! A skill is active when the conversation holds a call of the `skill` tool for it (not one
//! for a file of it): the conversation is the record, so a resumed session keeps its
//! skills. Agents that bring their own tools (CLI backends with `own_tools`, ACP and
//! terminal agents) read skills themselves and are sent none of this.

use std::collections::BTreeSet;

use agent_loop_skills::{activation, catalog, Warning};
pub use agent_loop_skills::{Shared as SharedLibrary, TOOL as SKILL_TOOL};

use super::Message;

/// The names of the skills the `skill` tool activated in `messages`.
pub fn activated<'a>(messages: impl IntoIterator<Item = &'a Message>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for message in messages {
        if let Message::Assistant { tool_calls, .. } = message {
            for call in tool_calls.iter().filter(|c| c.name == SKILL_TOOL) {
                let path = call.args.get("path").and_then(|p| p.as_str());
                if let (Some(name), None | Some("")) =
                    (call.args.get("name").and_then(|n| n.as_str()), path)
                {
                    names.insert(name.to_string());
                }
            }
        }
    }
    names
}

/// Reads the library again if a `SKILL.md` changed; returns the new warnings.
pub fn refresh(library: &SharedLibrary) -> Vec<Warning> {
    library.write().map(|mut l| l.refresh()).unwrap_or_default()
}

/// What the system prompt carries of skills: the catalog, then the instructions of each skill
/// activated in `all` (the conversation) whose activation is not among `sent` (the window).
pub fn section<'a>(
    library: &SharedLibrary,
    all: impl IntoIterator<Item = &'a Message>,
    sent: impl IntoIterator<Item = &'a Message>,
) -> Option<String> {
    let library = library.read().ok()?;
    let mut text = catalog(library.skills())?;
    let in_window = activated(sent);
    for name in activated(all).difference(&in_window) {
        let Some(skill) = library.get(name) else {
            continue;
        };
        if let Ok(body) = skill.body() {
            text.push_str(&format!(
                "\n\n# Active skill: {name}\nYou activated this skill earlier in the \
                 conversation; its instructions still apply.\n{}",
                activation(skill, &body)
            ));
        }
    }
    Some(text)
}

/// Bytes the skills add to every request's fixed part: the catalog, and every activated
/// skill's `SKILL.md` (counted whether its activation is still in the window or not, so the
/// budget never falls short when a trim moves it out).
pub fn fixed_bytes<'a>(
    library: &SharedLibrary,
    all: impl IntoIterator<Item = &'a Message>,
) -> usize {
    let Ok(library) = library.read() else {
        return 0;
    };
    let Some(catalog) = catalog(library.skills()) else {
        return 0;
    };
    catalog.len()
        + activated(all)
            .iter()
            .filter_map(|name| library.get(name))
            .map(|s| s.size as usize + 200)
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, RwLock};

    use agent_loop_skills::{Library, Origin, Places};

    use super::*;
    use crate::testing::chat;
    use crate::{Artifacts, ContextManager, ContextSettings, Conversation, ToolCall};
    use crate::{ContextFormat, PromptStyle, Window};

    fn library(root: &std::path::Path) -> SharedLibrary {
        let dir = root.join("deploy");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: deploy\ndescription: Ship it.\n---\nRun make deploy.\n",
        )
        .unwrap();
        Arc::new(RwLock::new(Library::load(Places {
            folders: vec![(root.to_path_buf(), Origin::Project)],
        })))
    }

    /// The first exchange activates `deploy` (and reads a file of it, which activates
    /// nothing), then `turns` long exchanges follow.
    fn activated_then(turns: usize) -> Conversation {
        let mut c = Conversation::new();
        c.push(Message::user("deploy please"));
        let calls = [
            serde_json::json!({"name": "deploy"}),
            serde_json::json!({"name": "other", "path": "x.md"}),
        ];
        for args in calls {
            let id = c.next_call_id();
            c.push(Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: id.clone(),
                    name: SKILL_TOOL.into(),
                    args,
                }],
            });
            c.push(Message::ToolResult {
                call_id: id,
                name: SKILL_TOOL.into(),
                ok: true,
                output: "<skill_content name=\"deploy\">...".into(),
            });
        }
        for message in chat(turns).messages {
            c.push(message);
        }
        c
    }

    #[test]
    fn an_activated_skill_stays_in_the_prompt_when_the_budget_trims_its_activation() {
        let tmp = tempfile::tempdir().unwrap();
        let library = library(tmp.path());
        let conversation = activated_then(30);
        assert_eq!(
            activated(&conversation.messages)
                .into_iter()
                .collect::<Vec<_>>(),
            ["deploy"]
        );
        let settings = ContextSettings {
            max_tokens: 2_000,
            ..ContextSettings::default()
        };
        let mut manager = ContextManager::new(settings, Artifacts::new(tmp.path()), &[]);
        manager.set_skills(Some(library.clone()));
        let plan = manager.plan(&conversation, "b").unwrap();
        assert!(plan.trimmed && plan.start > 4, "{plan:?}");
        let window = Window::planned(&conversation, &plan, None);
        let section = manager.skills_section(&conversation, &window).unwrap();
        let (catalog, active) = section.split_once("\n\n# Active skill: deploy\n").unwrap();
        assert!(catalog.contains("<name>deploy</name>"), "{catalog}");
        assert!(
            active.contains("<skill_content name=\"deploy\">\nRun make deploy.\n</skill_content>"),
            "{active}"
        );
        // The budget counted the catalog and the skill's file, so the request stays within it.
        let file = std::fs::metadata(tmp.path().join("deploy/SKILL.md")).unwrap();
        assert!(
            fixed_bytes(&library, &conversation.messages) > catalog.len() + file.len() as usize
        );
        assert!(plan.tokens <= 2_000, "{plan:?}");
        // With its activation in the window, the prompt carries the catalog alone.
        let all = Window::all(&conversation);
        let section = skills_section_of(&library, &conversation, &all);
        assert!(!section.contains("# Active skill"), "{section}");
    }

    fn skills_section_of(
        library: &SharedLibrary,
        conversation: &Conversation,
        window: &Window<'_>,
    ) -> String {
        section(
            library,
            &conversation.messages,
            window.messages.iter().copied(),
        )
        .unwrap()
    }

    #[test]
    fn an_agent_with_its_own_tools_gets_no_catalog() {
        let tmp = tempfile::tempdir().unwrap();
        let library = library(tmp.path());
        let conversation = chat(0);
        let mut window = Window::all(&conversation);
        let section = skills_section_of(&library, &conversation, &window);
        window.skills = Some(&section);
        let cwd = std::path::Path::new("/w");
        let style = |own_tools| PromptStyle {
            tool_call_format: "<tool_call>{json}</tool_call>".into(),
            format: ContextFormat::Plain,
            own_tools,
        };
        let ours = crate::render_prompt(&window, &[], &style(false), cwd);
        assert!(ours.contains("<available_skills>"), "{ours}");
        let theirs = crate::render_prompt(&window, &[], &style(true), cwd);
        assert!(!theirs.contains("skill"), "{theirs}");
    }
}
