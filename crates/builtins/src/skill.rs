//! skill: activates an Agent Skill of the catalog (its instructions, folder and files), or
//! reads one file of its folder. It asks no approval: it only reads, and only beneath the
//! skill's folder, which may lie outside `--root` (`~/.agents/skills`): a path that leaves
//! the folder (`..`, an absolute path, a symbolic link) is refused, so no other file outside
//! the root is reached through it. Running a skill's script is bash's, with bash's approval.

use std::io::Read as _;
use std::path::{Component, Path};

use agent_loop_skills::{activation, Shared, Skill as Found};
use serde::Deserialize;

use super::beneath;
use super::tool::{Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};

/// Bytes of a skill's file returned at most.
const MAX_BYTES: u64 = 256 * 1024;

/// The tool, with the run's skills (the context manager reads the same library).
pub struct Skill {
    pub library: Shared,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    name: String,
    path: Option<String>,
}

impl Builtin for Skill {
    const NAME: &'static str = agent_loop_skills::TOOL;
    const DESCRIPTION: &'static str =
        "Activate a skill of the catalog in the system prompt: returns its instructions and \
        the list of its files. With path, returns that file of the skill's folder instead.";
    const MAIN_PARAM: &'static str = "name";
    const KIND: ToolKind = ToolKind::Read;
    // Its `path` is inside the skill's folder, not the root: no PATH_PARAM.
    const EFFECT: Effect = Effect::Reads;
    const PARAMS: &'static [Param] = &[
        Param::required(
            "name",
            "string",
            "The skill's name, as the catalog gives it.",
        ),
        Param::optional(
            "path",
            "string",
            "A file of the skill, relative to its folder (scripts/x.py, references/y.md).",
        ),
    ];
    type Args = Args;

    async fn run(&self, args: Args, _ctx: &ToolContext) -> ToolOutput {
        let found = match self.library.read() {
            Ok(library) => match library.get(&args.name) {
                Some(skill) => Ok(skill.clone()),
                None => Err(library
                    .skills()
                    .iter()
                    .map(|s| s.name().to_string())
                    .collect::<Vec<_>>()),
            },
            Err(_) => Err(Vec::new()),
        };
        let skill = match found {
            Ok(skill) => skill,
            Err(names) => {
                return ToolOutput::error(format!(
                    "no skill is named `{}`; the skills are: {}",
                    args.name,
                    names.join(", ")
                ))
            }
        };
        match args.path.as_deref().filter(|p| !p.is_empty()) {
            None => match skill.body() {
                Ok(body) => ToolOutput::ok(activation(&skill, &body)),
                Err(why) => ToolOutput::error(why.to_string()),
            },
            Some(path) => read(&skill, path),
        }
    }
}

/// Whether a part of `rel` in `dir` is a symbolic link.
fn through_link(dir: &Path, rel: &Path) -> bool {
    let mut at = dir.to_path_buf();
    rel.components().any(|part| {
        at.push(part);
        at.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// The text of `path` in the skill's folder.
fn read(skill: &Found, path: &str) -> ToolOutput {
    let rel = Path::new(path);
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return ToolOutput::error(format!(
            "{path}: a skill's file is named by its path inside the skill's folder, without \
             `..` or a leading `/`"
        ));
    }
    let resolved = skill.dir.join(rel);
    let mut file = match beneath::open_read(&skill.dir, &resolved, path, false) {
        Ok(beneath::Opened::File(file)) => file,
        Ok(beneath::Opened::Dir(_)) => unreachable!("folders are refused"),
        // A link that was there all along, not one that appeared: said as what it is.
        Err(_) if through_link(&skill.dir, rel) => {
            return ToolOutput::error(format!(
                "refused: {path} is a symbolic link, or inside one: a skill's files are read \
                 in its folder, following no link"
            ))
        }
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let mut bytes = Vec::new();
    if let Err(e) = file.by_ref().take(MAX_BYTES + 1).read_to_end(&mut bytes) {
        return ToolOutput::error(format!("cannot read {path}: {e}"));
    }
    let cut = bytes.len() as u64 > MAX_BYTES;
    if cut {
        // Not inside a character: back to the last whole one.
        let mut end = MAX_BYTES as usize;
        while end > 0 && (bytes[end] & 0xC0) == 0x80 {
            end -= 1;
        }
        bytes.truncate(end);
    }
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if cut {
                text.push_str(&format!("\n[{path} goes on past {} KB]", MAX_BYTES / 1024));
            }
            ToolOutput::ok(text)
        }
        Err(_) => ToolOutput::error(format!(
            "{path} is a binary file (not UTF-8 text); use it by its path, {}",
            resolved.display()
        )),
    }
}
