//! Turning what an agent CLI printed into something the loop can use: ANSI escapes stripped,
//! tool calls and token counts extracted with the regexes configured per backend, and the
//! text shown to the user cleaned of tool-call markup, token lines and banner lines.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

mod check;
pub mod json;
mod pattern;
mod render;
mod tokens;
mod tool_calls;

pub use agent_loop_scan::{render_terminal, strip_ansi};
pub use json::{JsonFields, JsonPath, OutputFormat};
pub use pattern::Pattern;
pub use render::Render;
pub use tokens::{parse_count, ByBackend, Prices, Totals, Usage};
pub use tool_calls::{RawArgs, RawCall};

use std::borrow::Cow;
use std::ops::Range;

use agent_loop_scan::{clean_lines, cut};

use regex::Regex;

/// A backend's compiled parsers.
#[derive(Debug, Clone)]
pub struct Parsers {
    /// Finds tool calls: named groups `json`, or `name` and optional `args`.
    pub tool_call: Pattern,
    /// Finds token counts: named groups `input`, `output`, optional `total`,
    /// `thinking`, `cost`.
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
    /// The output count includes the thinking tokens (`thinking_in_output`); when it does
    /// not, they are added to it, so that output always means every token generated.
    pub thinking_in_output: bool,
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
    /// In `loop` mode, the tools of its own the CLI said it offered its model
    /// (`json_offered_tools`): it should offer none.
    pub offered_tools: Vec<String>,
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
            thinking_in_output: true,
        }
    }

    /// Every pattern, the built-in default ones too.
    fn patterns(&self) -> impl Iterator<Item = &Pattern> {
        std::iter::once(&self.tool_call)
            .chain(&self.tokens)
            .chain(&self.skip_lines)
            .chain(&self.error)
            .chain(&self.tool_activity)
    }

    /// Compiles every pattern that is not yet; called while the backend runs, so that
    /// parsing its output does not wait for it.
    pub fn warm(&self) {
        for pattern in self.patterns() {
            pattern.warm();
        }
    }

    /// Parses a run's stripped stdout (the reply) and stderr (searched for usage and errors).
    /// With JSON output the answer is read from stdout's documents, usage and errors from
    /// both streams'; the regexes then run over that answer.
    pub fn parse(&self, stdout: &str, stderr: &str) -> Parsed {
        self.parse_text(stdout.into(), stderr, String::new())
    }

    /// As `parse`, taking stdout: the answer is stdout itself, edited in place, so parsing
    /// holds no copy of the output (which can be megabytes).
    pub fn parse_owned(&self, stdout: String, stderr: &str) -> Parsed {
        self.parse_text(stdout.into(), stderr, String::new())
    }

    /// As `parse`, for a stream whose pieces, taken as they came and not kept in `stdout`,
    /// are the answer (no `json_text`): `pieces`, then any that stdout still holds.
    pub fn parse_pieces(&self, pieces: String, stdout: &str, stderr: &str) -> Parsed {
        self.parse_text(stdout.into(), stderr, pieces)
    }

    /// What of stdout reports the CLI's error, where `retry_regex` looks (with stderr): with
    /// JSON output and a `json_error`, stdout without the documents in which it reaches
    /// nothing, which may hold anything the conversation said (Gemini CLI's stream repeats
    /// the prompt, Claude Code's holds its own tools' results); the text between them (a
    /// plain error, a stack trace) stays. Else all of stdout.
    pub fn error_report<'a>(&self, stdout: &'a str) -> Cow<'a, str> {
        if self.output == OutputFormat::Text || self.json.error.is_none() {
            return stdout.into();
        }
        let mut report = String::new();
        let mut from = 0;
        for (at, doc) in json::documents_at(stdout) {
            if self.json.error(std::slice::from_ref(&doc)).is_none() {
                report.push_str(&stdout[from..at.start]);
                from = at.end;
            }
        }
        report.push_str(&stdout[from..]);
        report.into()
    }

    fn parse_text(&self, stdout: Cow<str>, stderr: &str, mut pieces: String) -> Parsed {
        let mut offered_tools = Vec::new();
        let (json_text, json_usage, json_error) = match self.output {
            OutputFormat::Text => (None, None, None),
            OutputFormat::Json | OutputFormat::Jsonl => {
                let out_docs = json::documents(&stdout);
                if !self.own_tools {
                    offered_tools = self.json.offered_tools(&out_docs);
                }
                let mut all = out_docs.clone();
                all.extend(json::documents(stderr));
                pieces.push_str(&self.json.text(&out_docs).unwrap_or_default());
                (Some(pieces), self.json.usage(&all), self.json.error(&all))
            }
        };
        let error = json_error.or_else(|| {
            let re = self.error.as_ref()?;
            [&*stdout, stderr].into_iter().find_map(|text| {
                let caps = re.captures_all(text).next()?;
                let message = caps.name("message").unwrap_or(caps.as_str());
                // A message the CLI wrapped at the terminal's width is one line again.
                let lines: Vec<&str> = message.lines().map(str::trim).collect();
                Some(lines.join(" ").trim().to_string())
            })
        });
        let usage = json_usage
            .or_else(|| {
                let re = self.tokens.as_ref()?;
                tokens::extract(re, &stdout).or_else(|| tokens::extract(re, stderr))
            })
            .map(|usage| {
                if self.thinking_in_output {
                    usage
                } else {
                    usage.with_thinking_in_output()
                }
            });
        let activity = self.activity(&stdout);
        let body = json_text.unwrap_or_else(|| stdout.into_owned());
        let (calls, spans) = if self.own_tools {
            (Vec::new(), Vec::new())
        } else {
            tool_calls::extract_with_spans(&self.tool_call, &body)
        };
        Parsed {
            text: self.clean_text(body, &spans),
            calls,
            usage,
            error,
            activity,
            offered_tools,
        }
    }

    /// `text` cleaned as an answer is (line ends trimmed, blank lines folded, token, activity
    /// and skipped lines dropped), without looking for tool calls: what a streamed part of the
    /// answer is compared by.
    pub fn clean(&self, text: &str) -> String {
        self.clean_text(text.to_string(), &[])
    }

    /// The lines that match `tool_activity_regex`, a line repeated right after itself (a
    /// redraw) counted once.
    fn activity(&self, stdout: &str) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        if self.tool_activity.is_none() {
            return found;
        }
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

    /// The reply without tool calls (`spans`), token lines and skipped lines, trimmed, with
    /// runs of blank lines folded to one (see `agent_loop_scan::clean_lines`). Each regex
    /// searches the whole text once (their literal prefilters make that fast), rather than
    /// every line on its own. Output can be large, so the body is edited in place, never
    /// copied. A fresh output-sized buffer would cost a page fault every 4 KiB, and glibc
    /// returns such buffers to the system when freed, so every reply would pay them again.
    /// For the same reason the answer keeps the body's capacity rather than shrinking to its
    /// length: glibc then serves the next output's buffer from the one freed (freeing a block
    /// of that size raises its threshold for mapping fresh memory), instead of mapping and
    /// faulting in a new one for every reply; the loop copies the answer where it keeps it.
    fn clean_text(&self, body: String, spans: &[Range<usize>]) -> String {
        let text = cut(body, spans);
        let mut dropped: Vec<usize> = Vec::new();
        let line_regexes = self
            .tokens
            .iter()
            .chain(&self.tool_activity)
            .chain(&self.skip_lines);
        for re in line_regexes {
            for m in re.find_all(&text) {
                let before = &text.as_bytes()[..m.start];
                dropped.push(memchr::memrchr(b'\n', before).map_or(0, |p| p + 1));
            }
        }
        // One sorted run a regex: the stable sort merges runs.
        dropped.sort();
        dropped.dedup();
        clean_lines(text, &dropped)
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
    fn the_error_report_is_the_documents_json_error_reaches() {
        let stdout = "{\"type\":\"user\",\"text\":\"why 429?\"}\nError: HTTP 503\n\
                      {\"type\":\"result\",\"error\":{\"message\":\"bad key\",\"code\":400}}\n";
        let mut p = parsers();
        // Text output: all of stdout.
        assert_eq!(p.error_report(stdout), stdout);
        p.output = OutputFormat::Jsonl;
        // No json_error: all of it too.
        assert_eq!(p.error_report(stdout), stdout);
        p.json.error = Some("[type=result].error".parse().unwrap());
        // The user's line left out; a plain error between the documents stays.
        assert_eq!(
            p.error_report(stdout),
            "\nError: HTTP 503\n{\"type\":\"result\",\"error\":{\"message\":\"bad key\",\"code\":400}}\n"
        );
        // Nothing reported: nothing but the line end.
        assert_eq!(p.error_report("{\"type\":\"result\"}\n"), "\n");
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
