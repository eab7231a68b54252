//! Turning what an agent CLI printed into something the loop can use: ANSI escapes stripped,
//! tool calls and token counts extracted with the regexes configured per backend, and the
//! text shown to the user cleaned of tool-call markup, token lines and banner lines.

mod ansi;
pub mod json;
mod pattern;
mod tokens;
mod tool_calls;

pub use ansi::strip_ansi;
pub use json::{JsonFields, JsonPath, OutputFormat};
pub use pattern::Pattern;
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
    pub tool_call: Pattern,
    /// Finds token counts: named groups `input`, `output`, optional `total`, `cost`.
    pub tokens: Option<Pattern>,
    /// Lines of output that are not part of the answer (banners, log lines).
    pub skip_lines: Vec<Pattern>,
    /// Whether the reply is text or JSON (`output`).
    pub output: OutputFormat,
    /// Field paths read from JSON output (`json_text`, `json_input_tokens`, ...).
    pub json: Box<JsonFields>,
    /// A line that means the CLI failed although it may exit 0 (`error_regex`); its group
    /// `message`, or the whole match, is the error.
    pub error: Option<Pattern>,
    /// Lines that show the CLI running a tool of its own (`tool_activity_regex`).
    pub tool_activity: Option<Pattern>,
    /// `tools = "own"`: the CLI runs its own tools, so no tool call is read from its reply.
    pub own_tools: bool,
}

/// What one backend run produced, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// The reply as the user should see it.
    pub text: String,
    pub calls: Vec<RawCall>,
    pub usage: Option<Usage>,
    /// The CLI's own error message, when its output says it failed.
    pub error: Option<String>,
    /// The CLI's own tool activity (`tools = "own"`), one line per tool run.
    pub activity: Vec<String>,
}

impl Parsers {
    /// Parsers for text output with agent-loop's tools: the given regexes, no JSON, no error
    /// or tool-activity lines.
    pub fn text(tool_call: Regex, tokens: Option<Regex>, skip_lines: Vec<Regex>) -> Self {
        Parsers {
            tool_call: tool_call.into(),
            tokens: tokens.map(Pattern::from),
            skip_lines: skip_lines.into_iter().map(Pattern::from).collect(),
            output: OutputFormat::Text,
            json: Box::default(),
            error: None,
            tool_activity: None,
            own_tools: false,
        }
    }

    /// Parses a run's stripped stdout (the reply) and stderr (searched for usage and errors).
    /// With JSON output the answer is read from stdout's documents, usage and errors from
    /// both streams'; the regexes then run over that answer.
    pub fn parse(&self, stdout: &str, stderr: &str) -> Parsed {
        let (body, json_usage, json_error) = match self.output {
            OutputFormat::Text => (stdout.to_string(), None, None),
            OutputFormat::Json | OutputFormat::Jsonl => {
                let out_docs = json::documents(stdout);
                let mut all = out_docs.clone();
                all.extend(json::documents(stderr));
                (
                    self.json.text(&out_docs).unwrap_or_default(),
                    self.json.usage(&all),
                    self.json.error(&all),
                )
            }
        };
        let error = json_error.or_else(|| {
            let re = self.error.as_ref()?;
            [stdout, stderr].into_iter().find_map(|text| {
                let caps = re.captures(text)?;
                let m = caps.name("message").or_else(|| caps.get(0))?;
                Some(m.as_str().trim().to_string())
            })
        });
        let (calls, spans) = if self.own_tools {
            (Vec::new(), Vec::new())
        } else {
            tool_calls::extract_with_spans(&self.tool_call, &body)
        };
        let usage = json_usage.or_else(|| {
            let re = self.tokens.as_ref()?;
            tokens::extract(re, stdout).or_else(|| tokens::extract(re, stderr))
        });
        Parsed {
            text: self.clean_text(&cut(&body, &spans)),
            calls,
            usage,
            error,
            activity: self.activity(stdout),
        }
    }

    /// The lines that match `tool_activity_regex`, a line repeated right after itself (a
    /// redraw) counted once.
    fn activity(&self, stdout: &str) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for text in stdout.lines().filter_map(|l| self.activity_line(l)) {
            if found.last() != Some(&text) {
                found.push(text);
            }
        }
        found
    }

    /// The tool activity one stripped line shows (group `call` of `tool_activity_regex`, else
    /// the whole line), if any.
    pub fn activity_line(&self, line: &str) -> Option<String> {
        let caps = self.tool_activity.as_ref()?.captures(line)?;
        Some(
            caps.name("call")
                .map_or(line.trim(), |m| m.as_str().trim())
                .to_string(),
        )
    }

    /// The reply without tool calls, token lines and skipped lines, trimmed, with runs of
    /// blank lines folded to one. Each regex searches the whole text once (their literal
    /// prefilters make that fast), rather than every line on its own.
    fn clean_text(&self, text: &str) -> String {
        let mut dropped: Vec<usize> = Vec::new();
        let line_regexes = self
            .tokens
            .iter()
            .chain(&self.tool_activity)
            .chain(&self.skip_lines);
        for re in line_regexes {
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
        Parsers::text(
            Regex::new(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>").unwrap(),
            Some(
                Regex::new(
                    r"Tokens: (?P<input>[\d.,]+[kKmM]?) sent, (?P<output>[\d.,]+[kKmM]?) received",
                )
                .unwrap(),
            ),
            vec![Regex::new("(?m)^Aider v").unwrap()],
        )
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
