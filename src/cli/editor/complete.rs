//! What Tab completes, one source for the REPL's line editor and the view's input line: the
//! names of the slash commands the REPL offers, then their arguments by kind (from the
//! library's command table): backend names after `/backend` and `/all`, saved session names
//! after `/load`, file paths after `/image` and `/export`, the context modes, `on`/`off`.
//!
//! One Tab completes as far as the candidates agree (a unique one gets a space after it, a
//! folder a `/`); a second Tab with nothing more to add lists them.

use std::path::{Path, PathBuf};

use agent_loop::chat::commands::{offered, ArgKind, FrontEnd};

use super::line::Line;

/// The context modes `/context` takes.
const CONTEXT_MODES: [&str; 4] = ["continue", "fresh", "sliding:", "summarize"];

#[derive(Debug, Clone, Default)]
pub struct Completer {
    /// Every configured backend.
    pub backends: Vec<String>,
    /// The folder of saved sessions, read at each Tab (a `/save` adds one).
    pub sessions: Option<PathBuf>,
}

/// What one Tab did.
#[derive(Debug, PartialEq, Eq)]
pub enum Completed {
    /// The line changed.
    Edited,
    /// Nothing more to add: the candidates, for a second Tab to list.
    Choices(Vec<String>),
}

impl Completer {
    /// Completes the word before the cursor of `line`.
    pub fn complete(&self, line: &mut Line) -> Completed {
        let head = &line.text[..line.cursor];
        let (start, candidates) = self.candidates(head);
        let word = &head[start..];
        let common = common_prefix(&candidates);
        if common.len() > word.len() {
            let mut with = common.to_string();
            if candidates.len() == 1 && !with.ends_with(['/', ':']) {
                with.push(' ');
            }
            line.replace(start..line.cursor, &with);
            return Completed::Edited;
        }
        if candidates.len() == 1 && !candidates[0].ends_with(['/', ':']) {
            // Complete already: the space after it.
            if !line.text[line.cursor..].starts_with(' ') {
                line.replace(line.cursor..line.cursor, " ");
                return Completed::Edited;
            }
        }
        Completed::Choices(candidates)
    }

    /// Where the word being completed starts in `head` (the text before the cursor), and
    /// what may complete it.
    fn candidates(&self, head: &str) -> (usize, Vec<String>) {
        let start = head.rfind([' ', '\n']).map_or(0, |i| i + 1);
        let word = &head[start..];
        let Some(rest) = head.strip_prefix('/') else {
            return (start, Vec::new());
        };
        let Some((name, args)) = rest.split_once(' ') else {
            let names = offered(FrontEnd::Repl)
                .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
                .map(|n| format!("/{n}"));
            return (0, matching(names, word));
        };
        let kind = offered(FrontEnd::Repl)
            .find(|c| c.name == name || c.aliases.contains(&name))
            .and_then(|c| c.args)
            .map(|a| a.kind);
        // `/export --force FILE` completes FILE as `/export FILE` does.
        let args = match kind {
            Some(ArgKind::File) => args.trim_start().strip_prefix("--force ").unwrap_or(args),
            _ => args,
        };
        // Only the first argument is completed (the rest of `/all a,b TASK` is the task).
        let first_arg = !args.trim_start().contains(' ');
        let choices = match kind {
            _ if !first_arg => return (start, Vec::new()),
            Some(ArgKind::Backend) => matching(self.backends.iter().cloned(), word),
            Some(ArgKind::BackendsAndTask) => {
                let at = word.rfind(',').map_or(0, |i| i + 1);
                let names = matching(self.backends.iter().cloned(), &word[at..]);
                return (start + at, names);
            }
            Some(ArgKind::Session) => matching(self.session_names(), word),
            Some(ArgKind::File) => return files(start, word),
            Some(ArgKind::ContextMode) => matching(CONTEXT_MODES.map(String::from), word),
            Some(ArgKind::OnOff) => matching(["on", "off"].map(String::from), word),
            _ => Vec::new(),
        };
        (start, choices)
    }

    fn session_names(&self) -> Vec<String> {
        let Some(Ok(entries)) = self.sessions.as_deref().map(std::fs::read_dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().join("session.json").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn matching(names: impl IntoIterator<Item = String>, word: &str) -> Vec<String> {
    let mut names: Vec<String> = names.into_iter().filter(|n| n.starts_with(word)).collect();
    names.sort();
    names.dedup();
    names
}

/// The paths that complete `word` (relative to the working folder, or `~/`): folders with a
/// `/` after them; hidden ones only when the name typed starts with a dot.
fn files(start: usize, word: &str) -> (usize, Vec<String>) {
    let (dir, name) = match word.rfind('/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => ("", word),
    };
    let folder: PathBuf = match dir.strip_prefix("~/") {
        Some(under) => std::env::var_os("HOME")
            .map_or_else(PathBuf::new, PathBuf::from)
            .join(under),
        None if dir.is_empty() => PathBuf::from("."),
        None => PathBuf::from(dir),
    };
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return (start, Vec::new());
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let file = e.file_name().to_str()?.to_string();
            if !file.starts_with(name) || (file.starts_with('.') && !name.starts_with('.')) {
                return None;
            }
            let slash = if is_dir(&e.path()) { "/" } else { "" };
            Some(format!("{dir}{file}{slash}"))
        })
        .collect();
    found.sort();
    (start, found)
}

fn is_dir(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_dir())
}

/// The longest start every candidate shares (whole characters).
fn common_prefix(candidates: &[String]) -> &str {
    let Some(first) = candidates.first() else {
        return "";
    };
    let mut end = first.len();
    for other in &candidates[1..] {
        end = first
            .char_indices()
            .zip(other.chars())
            .find(|((_, a), b)| a != b)
            .map_or(end.min(other.len()), |((i, _), _)| i.min(end));
    }
    &first[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(completer: &Completer, text: &str) -> (String, Completed) {
        let mut line = Line::default();
        line.insert(text);
        let done = completer.complete(&mut line);
        (line.text, done)
    }

    #[test]
    fn commands_then_backend_names_sessions_and_files_complete() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["work", "weekend"] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("session.json"), "{}").unwrap();
        }
        let completer = Completer {
            backends: vec!["claude".into(), "codex".into(), "demo".into()],
            sessions: Some(dir.path().to_path_buf()),
        };
        assert_eq!(tab(&completer, "/back").0, "/backend ");
        assert_eq!(tab(&completer, "/backend d").0, "/backend demo ");
        assert_eq!(tab(&completer, "/backend c").0, "/backend c");
        assert_eq!(
            tab(&completer, "/backend c").1,
            Completed::Choices(vec!["claude".into(), "codex".into()])
        );
        assert_eq!(tab(&completer, "/backend cl").0, "/backend claude ");
        assert_eq!(
            tab(&completer, "/compare demo,co").0,
            "/compare demo,codex "
        );
        assert_eq!(tab(&completer, "/load we").0, "/load weekend ");
        assert_eq!(tab(&completer, "/load w").0, "/load w");
        assert_eq!(tab(&completer, "no command").1, Completed::Choices(vec![]));
        let file = dir.path().join("work").join("picture.png");
        std::fs::write(&file, "").unwrap();
        let typed = format!("/image {}/wo", dir.path().display());
        assert_eq!(tab(&completer, &typed).0, format!("{typed}rk/"));
        let typed = format!("/image {}/work/p", dir.path().display());
        assert_eq!(tab(&completer, &typed).0, format!("{}icture.png ", typed));
        let typed = format!("/export --force {}/work/p", dir.path().display());
        assert_eq!(tab(&completer, &typed).0, format!("{}icture.png ", typed));
    }

    #[test]
    fn the_common_start_is_whole_characters() {
        let names = ["héllo".to_string(), "hèllo".to_string()];
        assert_eq!(common_prefix(&names), "h");
        assert_eq!(common_prefix(&["ab".into(), "abc".into()]), "ab");
    }
}
