//! Turning what an agent CLI printed into something the loop can use: ANSI escapes stripped,
//! tool calls and token counts extracted with the regexes configured per backend, and the
//! text shown to the user cleaned of tool-call markup, token lines and banner lines.

mod tokens;
mod tool_calls;

pub use tokens::{parse_count, Prices, Totals, Usage};
pub use tool_calls::{RawArgs, RawCall};

use regex::Regex;

/// Removes ANSI escape sequences (and the carriage returns that go with in-place redraws) and
/// replaces invalid UTF-8, never panicking on any input. Tabs are kept.
pub fn strip_ansi(bytes: &[u8]) -> String {
    // strip-ansi-escapes drops every control byte but `\n`, tabs included, and tabs matter in
    // code and in the read tool's numbered lines: strip the pieces between tabs and rejoin.
    let stripped = if bytes.contains(&b'\t') {
        let mut out = Vec::with_capacity(bytes.len());
        for (i, piece) in bytes.split(|b| *b == b'\t').enumerate() {
            if i > 0 {
                out.push(b'\t');
            }
            out.extend_from_slice(&strip_ansi_escapes::strip(piece));
        }
        out
    } else {
        strip_ansi_escapes::strip(bytes)
    };
    match String::from_utf8(stripped) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// A backend's compiled parsers.
#[derive(Debug, Clone)]
pub struct Parsers {
    /// Finds tool calls: named groups `json`, or `name` and optional `args`.
    pub tool_call: Regex,
    /// Finds token counts: named groups `input`, `output`, optional `total`, `cost`.
    pub tokens: Option<Regex>,
    /// Lines of output that are not part of the answer (banners, log lines).
    pub skip_lines: Vec<Regex>,
}

/// What one backend run produced, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// The reply as the user should see it.
    pub text: String,
    pub calls: Vec<RawCall>,
    pub usage: Option<Usage>,
}

impl Parsers {
    /// Parses a run's stripped stdout (the reply) and stderr (searched for usage only).
    pub fn parse(&self, stdout: &str, stderr: &str) -> Parsed {
        let calls = tool_calls::extract(&self.tool_call, stdout);
        let usage = self
            .tokens
            .as_ref()
            .and_then(|re| tokens::extract(re, stdout).or_else(|| tokens::extract(re, stderr)));
        Parsed {
            text: self.clean_text(stdout),
            calls,
            usage,
        }
    }

    /// The reply without tool calls, token lines and skipped lines, trimmed, with runs of
    /// blank lines folded to one.
    fn clean_text(&self, stdout: &str) -> String {
        let without_calls = self.tool_call.replace_all(stdout, "");
        let mut out = String::with_capacity(without_calls.len());
        let mut blank_run = 0;
        for line in without_calls.lines() {
            if self.tokens.as_ref().is_some_and(|re| re.is_match(line))
                || self.skip_lines.iter().any(|re| re.is_match(line))
            {
                continue;
            }
            if line.trim().is_empty() {
                blank_run += 1;
                if blank_run > 1 {
                    continue;
                }
            } else {
                blank_run = 0;
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.trim().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsers() -> Parsers {
        Parsers {
            tool_call: Regex::new(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>").unwrap(),
            tokens: Some(
                Regex::new(
                    r"Tokens: (?P<input>[\d.,]+[kKmM]?) sent, (?P<output>[\d.,]+[kKmM]?) received",
                )
                .unwrap(),
            ),
            skip_lines: vec![Regex::new("^Aider v").unwrap()],
        }
    }

    #[test]
    fn strips_colour_and_redraws_from_a_real_coro_capture() {
        let raw = b"\x1b[97m\xe2\x8f\xba\x1b[0m Bash(echo hi)\r\n\x1b[1A\x1b[2K\r\x1b[92m\xe2\x8f\xba\x1b[0m Bash(echo hi)\r\n";
        assert_eq!(
            strip_ansi(raw),
            "\u{23fa} Bash(echo hi)\n\u{23fa} Bash(echo hi)\n"
        );
    }

    #[test]
    fn tabs_survive() {
        assert_eq!(
            strip_ansi(b"\x1b[1mmake\x1b[0m:\n\tcc -o x\tx.c\n"),
            "make:\n\tcc -o x\tx.c\n"
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_a_panic() {
        assert_eq!(strip_ansi(b"ok \xff\xfe done"), "ok \u{fffd}\u{fffd} done");
    }

    #[test]
    fn text_loses_calls_tokens_and_banners() {
        let out = "Aider v0.86.2\nI will list.\n<tool_call>{\"name\":\"ls\",\"arguments\":{}}</tool_call>\n\n\n\nTokens: 2.1k sent, 75 received. Cost: $0.01\n";
        let parsed = parsers().parse(out, "");
        assert_eq!(parsed.text, "I will list.");
        assert_eq!(parsed.calls.len(), 1);
        let usage = parsed.usage.unwrap();
        assert_eq!((usage.input, usage.output), (Some(2100), Some(75)));
    }
}
