//! ls: the entries of one folder, sorted, folders marked with a trailing `/`.

use serde::Deserialize;

use std::os::fd::AsRawFd;

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
        "List a folder: one entry a line, sorted, folders ending in / and files with \
        their size in bytes.";
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
                match entry.metadata() {
                    Ok(m) if m.is_dir() => format!("{name}/"),
                    Ok(m) => format!(
                        "{name}  ({})",
                        crate::plural::count(m.len(), "byte", "bytes")
                    ),
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
