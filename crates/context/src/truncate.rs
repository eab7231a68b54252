//! Tool results over `tool_result_max_chars`: the context keeps the head and the tail (a
//! build's errors are usually at the end), with a note in between that says what was left out
//! and where the full output is saved, so the model can read on with the read tool. An answer
//! handed to another program's model is cut the same way, its note worded for a model whose
//! tools are its own.

use std::path::PathBuf;

use crate::Error;

/// Share of the kept characters taken from the head; the rest comes from the tail.
const HEAD_SHARE: (usize, usize) = (2, 3);

/// `output` if it has at most `max_chars` characters; otherwise its head and tail with a
/// note. `save` stores the full output and returns the file's path; it is called only when
/// the output is cut.
pub fn fit_tool_output(
    output: String,
    max_chars: usize,
    save: impl FnOnce(&str) -> Result<PathBuf, Error>,
) -> String {
    let Some(cut) = Cut::of(&output, max_chars) else {
        return output;
    };
    let where_full = match save(&output) {
        Ok(path) => format!(
            "the full output is saved in {}: read it with the read tool (offset and limit pick lines)",
            path.display()
        ),
        Err(e) => format!("the full output could not be saved ({e})"),
    };
    cut.with_note(&format!(
        "[... {} of {} characters cut here ({} of {}); {where_full} ...]",
        cut.cut_chars,
        cut.total_chars,
        cut.lines(),
        cut.total_lines
    ))
}

/// [`fit_tool_output`] for an answer handed to another program's model (`agent-loop mcp
/// serve`), whose tools are its own, not agent-loop's: the note says what the cut kept, where
/// the whole answer is, and to read that file with the model's own file-reading tool.
pub fn fit_answer(
    answer: String,
    max_chars: usize,
    save: impl FnOnce(&str) -> Result<PathBuf, Error>,
) -> String {
    let Some(cut) = Cut::of(&answer, max_chars) else {
        return answer;
    };
    let where_whole = match save(&answer) {
        Ok(path) => format!(
            "The whole answer is saved in the file {}: to read what was cut, open that file \
             with your own file-reading tool ({} of it).",
            path.display(),
            cut.lines()
        ),
        Err(e) => format!("The whole answer could not be saved ({e})."),
    };
    let kept_head = cut.head.chars().count();
    let kept_tail = cut.tail.chars().count();
    cut.with_note(&format!(
        "[... answer cut here: {} of its {} characters ({} of {}) are left out; kept are the \
         {kept_head} characters before this note and the {kept_tail} after it. {where_whole} ...]",
        cut.cut_chars,
        cut.total_chars,
        cut.lines(),
        cut.total_lines
    ))
}

/// Where a text longer than the allowed length is cut: the head and tail kept, and what the
/// note says of the rest.
struct Cut<'a> {
    head: &'a str,
    tail: &'a str,
    /// The first and last lines (from 1) that are cut, wholly or in part.
    first_line: usize,
    last_line: usize,
    total_lines: usize,
    cut_chars: usize,
    total_chars: usize,
}

impl<'a> Cut<'a> {
    /// None when `output` has at most `max_chars` characters.
    fn of(output: &'a str, max_chars: usize) -> Option<Cut<'a>> {
        let total_chars = output.chars().count();
        if total_chars <= max_chars {
            return None;
        }
        let head_chars = max_chars * HEAD_SHARE.0 / HEAD_SHARE.1;
        let tail_chars = max_chars - head_chars;
        let byte_at = |chars: usize| {
            output
                .char_indices()
                .nth(chars)
                .map_or(output.len(), |(i, _)| i)
        };
        let mut head_end = byte_at(head_chars);
        let mut tail_start = byte_at(total_chars - tail_chars);
        // Cut at line ends when one is near, so line numbers in the note are exact.
        if let Some(nl) = output[..head_end]
            .rfind('\n')
            .filter(|&i| i >= head_end / 2)
        {
            head_end = nl + 1;
        }
        let tail_len = output.len() - tail_start;
        let at_line_start = output.as_bytes()[tail_start - 1] == b'\n';
        if let Some(nl) = output[tail_start..]
            .find('\n')
            .filter(|&i| !at_line_start && i < tail_len / 2 && tail_start + i + 1 < output.len())
        {
            tail_start += nl + 1;
        }
        let (head, tail) = (&output[..head_end], &output[tail_start..]);
        let lines_before = |end: usize| {
            output.as_bytes()[..end]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
        };
        Some(Cut {
            head,
            tail,
            first_line: lines_before(head_end) + 1,
            last_line: lines_before(tail_start - 1) + 1,
            total_lines: lines_before(output.len()) + usize::from(!output.ends_with('\n')),
            cut_chars: total_chars - head.chars().count() - tail.chars().count(),
            total_chars,
        })
    }

    /// `lines 11-95`, or `in line 1` when one line is cut.
    fn lines(&self) -> String {
        if self.first_line == self.last_line {
            format!("in line {}", self.first_line)
        } else {
            format!("lines {}-{}", self.first_line, self.last_line)
        }
    }

    /// The head, `note` on a line of its own, and the tail.
    fn with_note(&self, note: &str) -> String {
        let mut cut = String::with_capacity(self.head.len() + self.tail.len() + note.len() + 2);
        cut.push_str(self.head);
        if !self.head.ends_with('\n') {
            cut.push('\n');
        }
        cut.push_str(note);
        cut.push('\n');
        cut.push_str(self.tail);
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(lines: usize) -> String {
        (1..=lines).map(|i| format!("line {i:04}\n")).collect()
    }

    #[test]
    fn short_output_is_untouched_and_not_saved() {
        let out = fit_tool_output("short".into(), 10, |_| panic!("no save"));
        assert_eq!(out, "short");
        let exact = fit_tool_output("x".repeat(10), 10, |_| panic!("no save"));
        assert_eq!(exact.len(), 10);
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_names_the_artifact() {
        // 100 lines of 10 characters: 1,000 characters, 150 kept.
        let full = numbered(100);
        let mut saved = String::new();
        let out = fit_tool_output(full.clone(), 150, |text| {
            saved = text.to_string();
            Ok(PathBuf::from("/data/s/artifacts/call_1-bash.txt"))
        });
        assert_eq!(saved, full);
        assert_eq!(
            out,
            "line 0001\nline 0002\nline 0003\nline 0004\nline 0005\nline 0006\nline 0007\nline 0008\nline 0009\nline 0010\n\
             [... 850 of 1000 characters cut here (lines 11-95 of 100); the full output is saved in \
             /data/s/artifacts/call_1-bash.txt: read it with the read tool (offset and limit pick lines) ...]\n\
             line 0096\nline 0097\nline 0098\nline 0099\nline 0100\n"
        );
    }

    /// An answer's note is for a model with its own tools: what was kept, the file, and to
    /// read it with its own file-reading tool (agent-loop's read tool is not its).
    #[test]
    fn an_answers_note_says_what_was_kept_and_where_the_whole_is() {
        let full = numbered(100);
        let out = fit_answer(full, 150, |_| {
            Ok(PathBuf::from("/data/s/artifacts/answer-1-answer.txt"))
        });
        assert_eq!(
            out,
            "line 0001\nline 0002\nline 0003\nline 0004\nline 0005\nline 0006\nline 0007\nline 0008\nline 0009\nline 0010\n\
             [... answer cut here: 850 of its 1000 characters (lines 11-95 of 100) are left out; \
             kept are the 100 characters before this note and the 50 after it. The whole answer \
             is saved in the file /data/s/artifacts/answer-1-answer.txt: to read what was cut, \
             open that file with your own file-reading tool (lines 11-95 of it). ...]\n\
             line 0096\nline 0097\nline 0098\nline 0099\nline 0100\n"
        );
        let unsaved = fit_answer("x".repeat(100), 10, |_| {
            Err(Error::new(crate::ErrorKind::Io, "disk full"))
        });
        assert!(
            unsaved.contains("The whole answer could not be saved (disk full). ...]"),
            "{unsaved}"
        );
        assert_eq!(
            fit_answer("short".into(), 10, |_| panic!("no save")),
            "short"
        );
    }

    #[test]
    fn one_long_line_is_cut_by_characters() {
        let full = "é".repeat(1_000);
        let out = fit_tool_output(full, 30, |_| Ok(PathBuf::from("/a.txt")));
        assert!(
            out.starts_with(&format!(
                "{}\n[... 970 of 1000 characters cut here (in line 1 of 1)",
                "é".repeat(20)
            )),
            "{out}"
        );
        assert!(out.ends_with(&format!("...]\n{}", "é".repeat(10))), "{out}");
    }

    #[test]
    fn a_failed_save_is_said_in_the_note() {
        let out = fit_tool_output("x".repeat(100), 10, |_| {
            Err(Error::new(crate::ErrorKind::Io, "disk full"))
        });
        assert!(
            out.contains("the full output could not be saved (disk full)"),
            "{out}"
        );
    }
}
