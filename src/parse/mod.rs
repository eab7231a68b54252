//! Turning what an agent CLI printed into something the loop can use: ANSI escapes stripped,
//! tool calls and token counts extracted with the regexes configured per backend, and the
//! text shown to the user cleaned of tool-call markup, token lines and banner lines.

mod ansi;
mod tokens;
mod tool_calls;

pub use ansi::strip_ansi;

pub use tokens::{parse_count, Prices, Totals, Usage};
pub use tool_calls::{RawArgs, RawCall};

use regex::Regex;

/// `text` without the byte ranges in `spans` (sorted, not overlapping).
fn cut<'a>(text: &'a str, spans: &[std::ops::Range<usize>]) -> std::borrow::Cow<'a, str> {
    if spans.is_empty() {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for span in spans {
        out.push_str(&text[from..span.start]);
        from = span.end;
    }
    out.push_str(&text[from..]);
    out.into()
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
        let (calls, spans) = tool_calls::extract_with_spans(&self.tool_call, stdout);
        let usage = self
            .tokens
            .as_ref()
            .and_then(|re| tokens::extract(re, stdout).or_else(|| tokens::extract(re, stderr)));
        Parsed {
            text: self.clean_text(&cut(stdout, &spans)),
            calls,
            usage,
        }
    }

    /// The reply without tool calls, token lines and skipped lines, trimmed, with runs of
    /// blank lines folded to one. Each regex searches the whole text once (their literal
    /// prefilters make that fast), rather than every line on its own.
    fn clean_text(&self, text: &str) -> String {
        let mut dropped: Vec<usize> = Vec::new();
        for re in self.tokens.iter().chain(&self.skip_lines) {
            for m in re.find_iter(text) {
                dropped.push(text[..m.start()].rfind('\n').map_or(0, |p| p + 1));
            }
        }
        dropped.sort_unstable();
        dropped.dedup();
        let mut out = String::with_capacity(text.len());
        let mut blank_run = 0;
        let mut start = 0;
        for line in text.split('\n') {
            let line_start = start;
            start += line.len() + 1;
            if dropped.binary_search(&line_start).is_ok() {
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
            skip_lines: vec![Regex::new("(?m)^Aider v").unwrap()],
        }
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
