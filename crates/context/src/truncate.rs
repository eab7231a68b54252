//! Tool results over `tool_result_max_chars`: the context keeps the head and the tail (a
//! build's errors are usually at the end), with a note in between that says what was left out
//! and where the full output is saved, so the model can read on with the read tool.

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
    let total_chars = output.chars().count();
    if total_chars <= max_chars {
        return output;
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
    let first_line = lines_before(head_end) + 1;
    let last_line = lines_before(tail_start - 1) + 1;
    let total_lines = lines_before(output.len()) + usize::from(!output.ends_with('\n'));
    let cut_chars = total_chars - head.chars().count() - tail.chars().count();
    let where_full = match save(&output) {
        Ok(path) => format!(
            "the full output is saved in {}: read it with the read tool (offset and limit pick lines)",
            path.display()
        ),
        Err(e) => format!("the full output could not be saved ({e})"),
    };
    let lines = if first_line == last_line {
        format!("in line {first_line}")
    } else {
        format!("lines {first_line}-{last_line}")
    };
    let mut cut = String::with_capacity(head.len() + tail.len() + 256);
    cut.push_str(head);
    if !head.ends_with('\n') {
        cut.push('\n');
    }
    cut.push_str(&format!(
        "[... {cut_chars} of {total_chars} characters cut here ({lines} of {total_lines}); {where_full} ...]\n"
    ));
    cut.push_str(tail);
    cut
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
