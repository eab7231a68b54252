//! The entries typed before, shared by the REPL's line editor and the view's input line: Up
//! and Down recall them (the line being typed is kept while they are looked at, and when it
//! is one line, Up shows only the entries that start with it), Ctrl-R searches them, and
//! they are kept across runs in `$XDG_STATE_HOME/agent-loop/history` (0600 in a 0700 folder;
//! the newest [`LIMIT`] entries are recalled). As in the shells, an entry that starts with a
//! space is not kept; a value the redactor knows (an API key pasted into a task) is written
//! to the file masked, never as it is.
//!
//! The file holds one entry a line, with `\` and newlines escaped (`\\`, `\n`), so a pasted
//! block is one entry. Entries are appended as they are typed; a file grown past twice the
//! limit is cut back to the limit when it is next read. Two runs at once both keep theirs:
//! appending and cutting back are done holding `history.lock` beside the file, and a cut
//! reads the file again under it, so an entry another run appended after this one read the
//! file is neither written to a file about to be replaced nor left out of the one replacing
//! it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use agent_loop::process::private;
use agent_loop::text::Redactor;

use super::keys::Key;
use super::line::Line;

/// How many entries are kept.
pub const LIMIT: usize = 1000;

#[derive(Debug, Default)]
pub struct History {
    entries: Vec<String>,
    /// The entries shown by Up since the line being typed was left, each counted from the
    /// newest; the last is the one shown. Empty while the line being typed is shown.
    shown: Vec<usize>,
    /// What the entries Up shows start with: the line being typed, when it was one line.
    prefix: String,
    /// The line being typed, kept whole (its cursor, its undo steps) while entries are shown.
    draft: Line,
    /// Where entries are kept; `None` keeps them for this run only.
    file: Option<PathBuf>,
    redactor: Redactor,
}

/// `$XDG_STATE_HOME/agent-loop/history`, or `~/.local/state/agent-loop/history`.
pub fn default_file() -> Option<PathBuf> {
    agent_loop::process::xdg_home("XDG_STATE_HOME", ".local/state")
        .map(|d| d.join("agent-loop").join("history"))
}

impl History {
    /// The history kept in `file` (read now; missing or unreadable is empty), with the
    /// secrets of `redactor` masked in what is written.
    pub fn open(file: Option<PathBuf>, redactor: Redactor) -> History {
        let entries = file
            .as_deref()
            .map(|file| read(file, LIMIT))
            .unwrap_or_default();
        History {
            entries,
            file,
            redactor,
            ..History::default()
        }
    }

    /// Keeps a typed entry (and ends any recall).
    pub fn keep(&mut self, entry: &str) {
        self.shown.clear();
        // What Tab added after the last word (a space) is not part of what was meant.
        let entry = entry.trim_end();
        if entry.trim().is_empty() || entry.starts_with(' ') {
            return;
        }
        if self.entries.last().is_some_and(|last| last == entry) {
            return;
        }
        self.entries.push(entry.to_string());
        if let Some(file) = &self.file {
            // A history that cannot be written is not worth stopping for.
            let _ = append(file, &self.redactor.redact(entry));
        }
    }

    /// The line shown is the one being typed again (Ctrl-C cleared it, or a search's match
    /// was taken): Up starts from the newest entry, and keeps what is typed then as the draft.
    pub fn end_recall(&mut self) {
        self.shown.clear();
        self.draft = Line::default();
    }

    /// Up (`older`) or Down, as in zsh and fish: in an entry of several lines the cursor
    /// moves to the line above (below); from the first (last) line, the history.
    pub fn up_down(&mut self, line: &mut Line, older: bool) {
        if !line.vertical(older) {
            self.step(line, older);
        }
    }

    /// The entry to show in `line` for Up (`older`) or Down. The first Up takes the line
    /// being typed as the draft, and when it is one line, as a prefix: Up shows only the
    /// entries that start with it (all of them, for an empty line), newer to older, each
    /// text once and never the draft's own. Down goes back through those shown, and past the
    /// newest to the draft, as it was. Up at the oldest match, and Down at the draft, leave
    /// the line as it is.
    fn step(&mut self, line: &mut Line, older: bool) {
        if self.shown.is_empty() {
            if !older {
                return;
            }
            self.prefix = match line.text.contains('\n') {
                true => String::new(),
                false => line.text.clone(),
            };
        }
        if older {
            let n = self.entries.len();
            let from = self.shown.last().map_or(0, |i| i + 1);
            let seen = |e: &String| {
                *e == self.prefix || self.shown.iter().any(|&i| self.entries[n - 1 - i] == *e)
            };
            let Some(i) = (from..n).find(|&i| {
                let e = &self.entries[n - 1 - i];
                e.starts_with(&self.prefix) && !seen(e)
            }) else {
                return;
            };
            if self.shown.is_empty() {
                self.draft = line.clone();
            }
            self.shown.push(i);
            line.set(self.entries[n - 1 - i].clone());
            return;
        }
        self.shown.pop();
        match self.shown.last() {
            Some(&i) => {
                line.set(self.entries[self.entries.len() - 1 - i].clone());
                // Down goes on through an entry of several lines from its first.
                line.cursor = line.text.find('\n').unwrap_or(line.text.len());
            }
            None => line.restore(std::mem::take(&mut self.draft)),
        }
    }

    /// The newest entry older than the `skip` newest that contains `query`: its index from
    /// the newest, the entry, and where the match starts in it.
    pub fn find(&self, query: &str, skip: usize) -> Option<(usize, &str, usize)> {
        self.entries
            .iter()
            .rev()
            .enumerate()
            .skip(skip)
            .find_map(|(i, e)| Some((i, e.as_str(), e.find(query)?)))
    }
}

/// A Ctrl-R search: what is typed, and the match shown (its index from the newest). Typing
/// narrows it, Ctrl-R again finds an older match, Ctrl-G or Ctrl-C gives the line back as it
/// was, and any other key takes the match into the line and then does what it does.
#[derive(Debug)]
pub struct Search {
    query: String,
    /// The match shown: its index from the newest, and it in a line, the cursor on it.
    found: Option<(usize, Line)>,
    /// The query matches nothing (the last match stays shown).
    failed: bool,
    /// The line as it was before the search.
    before: Line,
}

/// What a key did to a search that it ended.
pub enum Searched {
    /// Ctrl-G or Ctrl-C: the line as it was.
    Cancel(Line),
    /// The match taken into the line; the key then applies to it.
    Accept(Line),
}

impl Search {
    pub fn new(before: Line) -> Search {
        Search {
            query: String::new(),
            found: None,
            failed: false,
            before,
        }
    }

    /// A key typed while searching: the search goes on, or ends.
    pub fn key(mut self: Box<Self>, history: &History, key: &Key) -> Result<Box<Self>, Searched> {
        let at = self.found.as_ref().map(|(i, _)| *i);
        let from = match key {
            Key::Char(c) => {
                self.query.push(*c);
                at.unwrap_or(0)
            }
            Key::Paste(text) => {
                self.query.push_str(text);
                at.unwrap_or(0)
            }
            Key::Backspace => {
                self.query.pop();
                0
            }
            Key::Ctrl('R') => at.map_or(0, |i| i + 1),
            Key::Ctrl('G') | Key::Interrupt => return Err(Searched::Cancel(self.before)),
            _ => {
                // The line as it was, with what it killed, takes the match's text.
                let mut line = self.before;
                if let Some((_, found)) = self.found {
                    line.adopt(found);
                }
                return Err(Searched::Accept(line));
            }
        };
        match history.find(&self.query, from) {
            Some((i, entry, at)) => {
                let mut line = Line::default();
                line.set(entry.to_string());
                line.cursor = at;
                self.found = Some((i, line));
                self.failed = false;
            }
            None => self.failed = !self.query.is_empty(),
        }
        Ok(self)
    }

    /// The label and the line to show: the query, and the match with the cursor on it.
    pub fn shown(&self) -> (String, Line) {
        let failed = if self.failed { "failed " } else { "" };
        let label = format!("({failed}search) {}: ", self.query);
        let line = self
            .found
            .as_ref()
            .map(|(_, l)| l.clone())
            .unwrap_or_default();
        (label, line)
    }
}

/// The newest `limit` entries of `file`; a file grown past twice `limit` is cut back to it.
fn read(file: &Path, limit: usize) -> Vec<String> {
    let mut entries = entries(file);
    if entries.len() > 2 * limit {
        cut(file, limit);
    }
    entries.drain(..entries.len().saturating_sub(limit));
    entries
}

fn entries(file: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.is_empty())
        .map(unescape)
        .collect()
}

/// Cuts `file` back to its newest `limit` entries, as it is once no other run writes it.
fn cut(file: &Path, limit: usize) {
    let Ok(_lock) = lock(file) else { return };
    let mut entries = entries(file);
    if entries.len() <= 2 * limit {
        // Another run cut it meanwhile.
        return;
    }
    entries.drain(..entries.len() - limit);
    let mut text = String::new();
    for entry in &entries {
        text.push_str(&escape(entry));
        text.push('\n');
    }
    let _ = private::write_atomic(file, text.as_bytes());
}

fn append(file: &Path, entry: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        private::create_dir(dir)?;
    }
    let mut line = escape(entry);
    line.push('\n');
    let _lock = lock(file)?;
    // One write: two runs appending at once do not interleave their lines.
    private::open_lines(file)?.write_all(line.as_bytes())
}

/// `history.lock` beside `file`, held by this run until the returned file is dropped. It is
/// a file of its own because the history file is replaced when it is cut: a lock on it
/// would be on a file no longer there.
fn lock(file: &Path) -> std::io::Result<File> {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let lock = private::open_append(&file.with_file_name(name))?;
    loop {
        match rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive) {
            Err(rustix::io::Errno::INTR) => continue,
            held => return held.map(|()| lock).map_err(Into::into),
        }
    }
}

fn escape(entry: &str) -> String {
    entry.replace('\\', "\\\\").replace('\n', "\\n")
}

fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn kept(entries: &[&str]) -> History {
        let mut history = History::default();
        for entry in entries {
            history.keep(entry);
        }
        history
    }

    #[test]
    fn up_and_down_recall_entries_and_give_the_draft_back() {
        let mut history = kept(&["one", " secret", "two", "two"]);
        let mut line = Line::default();
        history.up_down(&mut line, false);
        assert_eq!(line.text, "", "Down at the draft stays");
        history.up_down(&mut line, true);
        assert_eq!(line.text, "two");
        history.up_down(&mut line, true);
        history.up_down(&mut line, true);
        assert_eq!(line.text, "one", "Up at the oldest stays");
        history.up_down(&mut line, false);
        assert_eq!(line.text, "two");
        history.up_down(&mut line, false);
        assert_eq!(line.text, "");
    }

    #[test]
    fn up_after_a_prefix_shows_the_entries_that_start_with_it_each_once() {
        let mut history = kept(&["read a.txt", "run ls", "read b.txt", "read a.txt", "run x"]);
        let mut line = Line::default();
        line.edit(&Key::Paste("read".into()));
        line.edit(&Key::Left);
        let mut shown = Vec::new();
        for _ in 0..3 {
            history.up_down(&mut line, true);
            shown.push(line.text.clone());
        }
        assert_eq!(shown, ["read a.txt", "read b.txt", "read b.txt"]);
        history.up_down(&mut line, false);
        assert_eq!(line.text, "read a.txt");
        history.up_down(&mut line, false);
        // The draft whole: its cursor, and its edit to undo.
        assert_eq!((line.text.as_str(), line.cursor), ("read", 3));
        line.edit(&Key::Ctrl('_'));
        assert_eq!(line.text, "");
        // The draft's own text is not shown again; nothing matching leaves the line alone.
        let mut line = Line::at("run ls".into(), 6);
        history.up_down(&mut line, true);
        assert_eq!(line.text, "run ls");
        history.up_down(&mut line, false);
        let mut line = Line::at("run".into(), 3);
        history.up_down(&mut line, true);
        assert_eq!(line.text, "run x");
    }

    #[test]
    fn up_and_down_move_between_an_entrys_lines_before_the_history() {
        let mut history = kept(&["older", "one\ntwo\nthree"]);
        // Column 4 of the last line: at the end of the shorter middle one, then 4 again.
        let mut line = Line::at("first line\nab\nlast line".into(), 18);
        history.up_down(&mut line, true);
        assert_eq!(line.cursor, 13);
        history.up_down(&mut line, true);
        assert_eq!(line.cursor, 4);
        // The first line's Up is the history's (the lines of a multi-line draft are no
        // prefix); a recalled entry's cursor is at its end, and Up goes on within it.
        history.up_down(&mut line, true);
        assert_eq!(line.text, "one\ntwo\nthree");
        assert_eq!(line.cursor, line.text.len());
        history.up_down(&mut line, true);
        assert_eq!(line.cursor, 7, "the end of \"two\"");
        history.up_down(&mut line, false);
        history.up_down(&mut line, false);
        assert_eq!(line.text, "first line\nab\nlast line");
        assert_eq!(line.cursor, 4, "the draft's cursor");
        for want in [13, 18, 18] {
            history.up_down(&mut line, false);
            assert_eq!(
                line.cursor, want,
                "Down, and on the last line no newer entry"
            );
        }
        // Down from an older entry into a newer one of several lines starts at its first.
        for _ in 0..6 {
            history.up_down(&mut line, true);
        }
        assert_eq!(line.text, "older");
        history.up_down(&mut line, false);
        assert_eq!(line.cursor, 3, "the end of the entry's first line");
    }

    #[test]
    fn ctrl_r_finds_older_matches_and_another_key_takes_one() {
        let mut history = History::default();
        for entry in ["deploy staging", "list files", "deploy production"] {
            history.keep(entry);
        }
        let mut before = Line::default();
        before.insert("draft");
        let mut search = Box::new(Search::new(before));
        for c in "dep".chars() {
            search = search.key(&history, &Key::Char(c)).ok().unwrap();
        }
        assert_eq!(search.shown().1.text, "deploy production");
        search = search.key(&history, &Key::Ctrl('R')).ok().unwrap();
        let (label, line) = search.shown();
        assert_eq!(
            (label.as_str(), line.text.as_str()),
            ("(search) dep: ", "deploy staging")
        );
        search = search.key(&history, &Key::Char('x')).ok().unwrap();
        assert_eq!(search.shown().0, "(failed search) depx: ");
        match search.key(&history, &Key::End) {
            Err(Searched::Accept(line)) => assert_eq!(line.text, "deploy staging"),
            _ => panic!("End takes the match"),
        }
        let search = Box::new(Search::new(Line::default()));
        assert!(
            matches!(search.key(&history, &Key::Ctrl('G')), Err(Searched::Cancel(l)) if l.text.is_empty())
        );
    }

    #[test]
    fn the_file_is_private_keeps_blocks_whole_and_masks_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state/agent-loop/history");
        let redactor = Redactor::default().with(["sk-0123456789".to_string()]);
        let mut history = History::open(Some(file.clone()), redactor.clone());
        history.keep("first\nsecond \\ line");
        history.keep(" not kept");
        history.keep("key sk-0123456789 here");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, "first\\nsecond \\\\ line\nkey [REDACTED] here\n");
        let again = History::open(Some(file), redactor);
        assert_eq!(
            again.entries,
            ["first\nsecond \\ line", "key [REDACTED] here"]
        );
        assert_eq!(again.find("sec", 0), Some((1, "first\nsecond \\ line", 6)));
        assert_eq!(again.find("e", 1).map(|f| f.0), Some(1));
    }

    #[test]
    fn a_file_grown_past_twice_the_limit_is_cut_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("history");
        let lines: String = (0..2 * LIMIT + 5).map(|i| format!("task {i}\n")).collect();
        std::fs::write(&file, lines).unwrap();
        let history = History::open(Some(file.clone()), Redactor::default());
        assert_eq!(history.entries.len(), LIMIT);
        assert_eq!(history.entries[0], format!("task {}", LIMIT + 5));
        let kept = std::fs::read_to_string(&file).unwrap();
        assert_eq!(kept.lines().count(), LIMIT);
    }

    /// Set in the two processes of the test below: the file and the tag of their entries.
    const WRITER: &str = "AGENT_LOOP_TEST_HISTORY_WRITER";
    /// How many entries each of them appends.
    const EACH: usize = 1000;

    /// Two processes (this test run again, as writers) each append entries and read the
    /// file back, which cuts it with a limit of 5 every few entries. After each append, the
    /// entries of the writer that the file holds must run without a gap up to the one just
    /// appended: a cut keeps the newest entries, so an older one kept without it means it
    /// went to a file that a cut by the other writer replaced, or was left out of it.
    #[test]
    fn two_runs_appending_and_cutting_at_once_lose_no_entry() {
        if let Some(role) = std::env::var_os(WRITER) {
            let role = role.to_string_lossy().into_owned();
            let (tag, file) = role.split_once(' ').unwrap();
            for i in 0..EACH {
                read(Path::new(file), 5);
                append(Path::new(file), &format!("{tag} {i}")).unwrap();
                assert_run_up_to(&entries(Path::new(file)), tag, i);
            }
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("history");
        let module = module_path!().split_once("::").unwrap().1;
        let name = format!("{module}::two_runs_appending_and_cutting_at_once_lose_no_entry");
        let writers: Vec<_> = ["a", "b"]
            .iter()
            .map(|tag| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args([name.as_str(), "--exact", "--quiet"])
                    .env(WRITER, format!("{tag} {}", file.display()))
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut writer in writers {
            assert!(writer.wait().unwrap().success());
        }
        let kept = entries(&file);
        assert!(kept.len() >= 5, "{kept:?}");
        for tag in ["a", "b"] {
            assert_run_up_to(&kept, tag, EACH - 1);
        }
    }

    /// The entries tagged `tag` in `kept` are none, or `tag N` for N running up to `last`.
    fn assert_run_up_to(kept: &[String], tag: &str, last: usize) {
        let mine: Vec<usize> = kept
            .iter()
            .filter_map(|e| e.strip_prefix(&format!("{tag} "))?.parse().ok())
            .collect();
        let run: Vec<usize> = (last + 1 - mine.len().min(last + 1)..=last).collect();
        assert!(mine.is_empty() || mine == run, "{tag} {last}: {kept:?}");
    }
}
