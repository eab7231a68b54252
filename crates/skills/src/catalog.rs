//! What the model is told of skills: the catalog in the system prompt (each skill's name,
//! description and location, about 50–100 tokens a skill), and what activating one returns
//! (its instructions, its folder and the list of its files). Both wrap their parts in the
//! tags the agentskills.io guide shows, so the model tells a skill's text from the rest.

use std::fmt::Write as _;
use std::path::Path;

use crate::discover::{Skill, SKILL_FILE};

/// The most files an activation lists; a skill with more says how many are left out.
pub const MAX_RESOURCES: usize = 100;
/// How deep the list of files goes below the skill's folder.
const MAX_DEPTH: usize = 4;

/// `<`, `>` and `&` as XML writes them: a description cannot close its tag.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The catalog of `skills` for the system prompt, or `None` when there is none (then
/// neither the catalog nor the `skill` tool is offered).
pub fn catalog(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut out = String::from(
        "# Skills\nSkills are folders of instructions for particular tasks. When a task \
         matches a skill's description, call the `skill` tool with its name before you start, \
         and follow the instructions it returns. A skill's files (scripts, references, \
         assets) are read with the `skill` tool too, with their `path` inside the skill's \
         folder; run its scripts with bash.\n\n<available_skills>\n",
    );
    for skill in skills {
        let _ = writeln!(
            out,
            "<skill>\n<name>{}</name>\n<description>{}</description>\n<location>{}</location>\n</skill>",
            skill.name(),
            escape(&skill.front.description),
            escape(&skill.file.display().to_string())
        );
    }
    out.push_str("</available_skills>");
    Some(out)
}

/// What activating `skill` returns: its instructions `body`, its folder and its files.
pub fn activation(skill: &Skill, body: &str) -> String {
    let mut out = format!(
        "<skill_content name=\"{}\">\n{}\n</skill_content>\n\nSkill folder: {} (the paths in \
         the instructions are relative to it).",
        skill.name(),
        body.trim_end(),
        skill.dir.display()
    );
    let (files, more) = resources(&skill.dir);
    if files.is_empty() {
        out.push_str("\nThe skill has no other files.");
        return out;
    }
    out.push_str(" Read one with the `skill` tool and its `path`.\n<skill_resources>\n");
    for file in &files {
        let _ = writeln!(out, "<file>{}</file>", escape(file));
    }
    out.push_str("</skill_resources>");
    if more > 0 {
        let _ = write!(out, "\n({more} more files are not listed.)");
    }
    out
}

/// The files of a skill's folder, relative to it with `/`, sorted, at most
/// [`MAX_RESOURCES`] (and how many more there are), `SKILL.md` and hidden files left out.
pub fn resources(dir: &Path) -> (Vec<String>, usize) {
    let mut files = Vec::new();
    walk(dir, "", 0, &mut files);
    files.sort();
    let more = files.len().saturating_sub(MAX_RESOURCES);
    files.truncate(MAX_RESOURCES);
    (files, more)
}

fn walk(dir: &Path, prefix: &str, depth: usize, files: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || (depth == 0 && name == SKILL_FILE) {
            continue;
        }
        // Links are not followed: a listed file is one the skill holds.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = format!("{prefix}{name}");
        if kind.is_dir() {
            if depth + 1 < MAX_DEPTH {
                walk(&entry.path(), &format!("{path}/"), depth + 1, files);
            }
        } else if kind.is_file() {
            files.push(path);
        }
        // A runaway folder (node_modules) stops the walk well past what is listed.
        if files.len() > MAX_RESOURCES * 10 {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::{Library, Origin, Places};

    fn library(root: &Path) -> Library {
        let dir = root.join("pdf-forms");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::create_dir_all(dir.join("references/deep")).unwrap();
        std::fs::write(
            dir.join(SKILL_FILE),
            "---\nname: pdf-forms\ndescription: Fill <PDF> forms & more.\n---\n\nRun \
             scripts/fill.py.\n",
        )
        .unwrap();
        std::fs::write(dir.join("scripts/fill.py"), "print(1)\n").unwrap();
        std::fs::write(dir.join("references/deep/notes.md"), "n\n").unwrap();
        std::fs::write(dir.join(".hidden"), "h\n").unwrap();
        Library::load(Places {
            folders: vec![(root.to_path_buf(), Origin::Project)],
        })
    }

    #[test]
    fn the_catalog_names_describes_and_locates_each_skill() {
        let tmp = tempfile::tempdir().unwrap();
        let library = library(tmp.path());
        let text = catalog(library.skills()).unwrap();
        let file = tmp.path().join("pdf-forms").join(SKILL_FILE);
        assert!(text.starts_with("# Skills\n"), "{text}");
        assert!(
            text.ends_with(&format!(
                "<available_skills>\n<skill>\n<name>pdf-forms</name>\n<description>Fill \
                 &lt;PDF&gt; forms &amp; more.</description>\n<location>{}</location>\n\
                 </skill>\n</available_skills>",
                file.display()
            )),
            "{text}"
        );
        assert_eq!(catalog(&[]), None);
    }

    #[test]
    fn activation_returns_the_body_the_folder_and_the_files() {
        let tmp = tempfile::tempdir().unwrap();
        let library = library(tmp.path());
        let skill = &library.skills()[0];
        let text = activation(skill, &skill.body().unwrap());
        assert_eq!(
            text,
            format!(
                "<skill_content name=\"pdf-forms\">\nRun scripts/fill.py.\n</skill_content>\n\n\
                 Skill folder: {} (the paths in the instructions are relative to it). Read one \
                 with the `skill` tool and its `path`.\n<skill_resources>\n\
                 <file>references/deep/notes.md</file>\n<file>scripts/fill.py</file>\n\
                 </skill_resources>",
                skill.dir.display()
            )
        );
    }

    #[test]
    fn the_list_of_files_is_capped() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..(MAX_RESOURCES + 5) {
            std::fs::write(tmp.path().join(format!("f{i:03}")), "x").unwrap();
        }
        let (files, more) = resources(tmp.path());
        assert_eq!((files.len(), more), (MAX_RESOURCES, 5));
        assert_eq!(files[0], "f000");
    }
}
