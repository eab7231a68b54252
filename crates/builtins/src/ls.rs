//! ls: the entries of one folder, sorted, folders marked with a trailing `/`. A symbolic
//! link shows as one (`name -> target`) with what it leads to when that is inside the root,
//! so the model does not take a link to a folder for a file; of a link leading outside, only
//! its own text, which is inside the root, is told.

use serde::Deserialize;

use std::os::fd::AsRawFd;
use std::path::Path;

use super::beneath;
use super::tool::{Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};

const MAX_ENTRIES: usize = 1000;

pub struct Ls;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[serde(default = "super::fs::working_dir")]
    path: String,
}

impl Builtin for Ls {
    const NAME: &'static str = "ls";
    const DESCRIPTION: &'static str =
        "List a folder: one entry a line, sorted, folders ending in /, files with their \
        size in bytes, symbolic links as `name -> target`.";
    const MAIN_PARAM: &'static str = "path";
    const KIND: ToolKind = ToolKind::Read;
    const EFFECT: Effect = Effect::Reads;
    const PATH_PARAM: Option<&'static str> = Some("path");
    const PARAMS: &'static [Param] = &[Param::optional(
        "path",
        "string",
        "Folder to list (default: the working directory).",
    )];
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let dir = match ctx.path(&args.path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        // Opened beneath the root, then listed through its descriptor: a folder swapped
        // for a link after the check is never listed.
        let fd = match beneath::open_read(ctx.root.dir(), &dir, &args.path, true) {
            Ok(beneath::Opened::Dir(fd)) => fd,
            Ok(beneath::Opened::File(_)) => {
                return ToolOutput::error(format!("{} is a file, not a folder", args.path))
            }
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        let by_fd = format!("/proc/self/fd/{}", fd.as_raw_fd());
        // Without /proc (rare), the checked path itself.
        let entries = match std::fs::read_dir(&by_fd).or_else(|_| std::fs::read_dir(&dir)) {
            Ok(rd) => rd,
            Err(e) => return ToolOutput::error(format!("cannot list {}: {e}", args.path)),
        };
        let mut lines: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                // Not followed: a link's own metadata.
                match entry.metadata() {
                    Ok(m) if m.is_symlink() => link(&dir, &name, ctx),
                    Ok(m) if m.is_dir() => format!("{name}/"),
                    Ok(m) => format!("{name}  ({})", size(m.len())),
                    Err(_) => name,
                }
            })
            .collect();
        lines.sort();
        let total = lines.len();
        if total == 0 {
            return ToolOutput::ok(format!("{} is empty", args.path));
        }
        lines.truncate(MAX_ENTRIES);
        let mut out = lines.join("\n");
        if total > MAX_ENTRIES {
            out.push_str(&format!(
                "\n[{} not shown]",
                crate::plural::count(total - MAX_ENTRIES, "more entry", "more entries")
            ));
        }
        ToolOutput::ok(out)
    }
}

fn size(bytes: u64) -> String {
    crate::plural::count(bytes, "byte", "bytes")
}

/// The line of the link `name` in the folder `dir` (resolved): its text, and what it
/// leads to when that is inside the root (looked at as the file tools would open it).
fn link(dir: &Path, name: &str, ctx: &ToolContext) -> String {
    // Its text only: reading it follows nothing.
    let target = match std::fs::read_link(dir.join(name)) {
        Ok(target) => target,
        Err(_) => return format!("{name}  (a symbolic link that cannot be read)"),
    };
    let text = target.to_string_lossy().into_owned();
    // A target holding a line break would read as more entries.
    let text = if text.chars().any(char::is_control) {
        format!("{text:?}")
    } else {
        text
    };
    const OUTSIDE: &str = "a link outside the root: the file tools cannot follow it";
    let what = match ctx.root.check(&dir.join(name), name) {
        Err(agent_loop_tools::FileError::Outside { .. }) => OUTSIDE.to_string(),
        // Leading nowhere: where its text points says which, not whether anything is there
        // outside the root.
        Err(_) if !lexically_inside(&dir.join(&target), ctx.root.dir()) => OUTSIDE.to_string(),
        Err(_) => "a broken link".to_string(),
        Ok(target) => match crate::beneath::stat(ctx.root.dir(), &target) {
            Ok(meta) if meta.is_dir() => "a link to a folder".to_string(),
            Ok(meta) if meta.is_file() => format!("a link to a file, {}", size(meta.len())),
            // A link swapped in since the check shows as one, not as what it leads to.
            Ok(meta) if meta.is_symlink() => "a broken link".to_string(),
            Ok(_) => "a link to something that is neither a file nor a folder".to_string(),
            Err(_) => "a broken link".to_string(),
        },
    };
    format!("{name} -> {text}  ({what})")
}

/// Whether `path` is beneath `root` by its names alone, `..` taken as the parent (a link's
/// text, joined to its folder: an absolute text replaces the folder).
fn lexically_inside(path: &Path, root: &Path) -> bool {
    let mut out = std::path::PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.starts_with(root)
}
