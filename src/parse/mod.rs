//! Turning what an agent CLI printed into something the loop can use: ANSI escapes stripped,
//! tool calls and token counts extracted with the regexes configured per backend, and the
//! text shown to the user cleaned of tool-call markup, token lines and banner lines.

pub mod json;
mod tokens;
mod tool_calls;

pub use json::{JsonFields, JsonPath, OutputFormat};
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
    /// Whether the reply is text or JSON (`output`).
    pub output: OutputFormat,
    /// Field paths read from JSON output (`json_text`, `json_input_tokens`, ...).
    pub json: Box<JsonFields>,
    /// A line that means the CLI failed although it may exit 0 (`error_regex`); its group
    /// `message`, or the whole match, is the error.
    pub error: Option<Regex>,
    /// Lines that show the CLI running a tool of its own (`tool_activity_regex`).
    pub tool_activity: Option<Regex>,
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
            tool_call,
            tokens,
            skip_lines,
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
        let calls = if self.own_tools {
            Vec::new()
        } else {
            tool_calls::extract(&self.tool_call, &body)
        };
        let usage = json_usage.or_else(|| {
            let re = self.tokens.as_ref()?;
            tokens::extract(re, stdout).or_else(|| tokens::extract(re, stderr))
        });
        Parsed {
            text: self.clean_text(&body),
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
    /// blank lines folded to one.
    fn clean_text(&self, stdout: &str) -> String {
        let without_calls = if self.own_tools {
            std::borrow::Cow::Borrowed(stdout)
        } else {
            self.tool_call.replace_all(stdout, "")
        };
        let mut out = String::with_capacity(without_calls.len());
        let mut blank_run = 0;
        for line in without_calls.lines() {
            if self.tokens.as_ref().is_some_and(|re| re.is_match(line))
                || self
                    .tool_activity
                    .as_ref()
                    .is_some_and(|re| re.is_match(line))
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
        Parsers::text(
            Regex::new(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>").unwrap(),
            Some(
                Regex::new(
                    r"Tokens: (?P<input>[\d.,]+[kKmM]?) sent, (?P<output>[\d.,]+[kKmM]?) received",
                )
                .unwrap(),
            ),
            vec![Regex::new("^Aider v").unwrap()],
        )
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
