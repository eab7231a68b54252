//! Property tests over what agent-loop reads from the outside: ANSI stripping, the tool-call
//! and token parsers (through a backend built from `backends.toml` text, as at run time) and
//! the config loader. Arbitrary input never panics, and what a generator printed, coloured as
//! an agent CLI colours it, parses back to what it printed. `PROPTEST_CASES` sets the number
//! of cases (64 here by default; scripts/proptest-long.sh runs many more).

use agent_loop_config::{Config, ConfigError, Definition, Source};
use agent_loop_parse::{strip_ansi, Parsers, Pattern, RawArgs};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// 64 cases unless `PROPTEST_CASES` says otherwise; no regression files in the tree.
pub fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 64;
    }
    config.failure_persistence = None;
    config
}

/// A backend entry with the token regex the fake agents use, loaded as a user file would be.
const BACKEND: &str = "[backends.gen]\ncommand = \"gen\"\ntokens_regex = 'Tokens: (?P<input>[\\d.,]+[kKmM]?) in, (?P<output>[\\d.,]+[kKmM]?) out'\n";

fn load(text: &str) -> Result<Config, ConfigError> {
    Config::from_sources(&[Source {
        name: "gen.toml".into(),
        text: text.into(),
    }])
}

/// Built once: compiling the regexes for every case would be most of the run.
fn parsers() -> &'static agent_loop_parse::Parsers {
    static PARSERS: std::sync::OnceLock<agent_loop_parse::Parsers> = std::sync::OnceLock::new();
    PARSERS.get_or_init(|| match load(BACKEND).unwrap().backend("gen").unwrap() {
        Definition::Cli(def) => def.parsers.clone(),
        Definition::Http(_) | Definition::Pty(_) | Definition::Acp(_) => {
            unreachable!("a cli entry")
        }
    })
}

/// SGR colour sequences and the other escapes agent CLIs print around their text.
fn escape() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u8..110).prop_map(|n| format!("\x1b[{n}m")),
        (0u8..8, 0u8..255).prop_map(|(a, b)| format!("\x1b[{a};38;5;{b}m")),
        Just("\x1b[0m".to_string()),
        Just("\x1b[2K".to_string()),
        Just("\x1b[?25l".to_string()),
        Just("\x1b]0;title\x07".to_string()),
    ]
}

/// Text as a model writes it: no control characters, no markup of the parsers.
fn prose() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .,:;!?'()\u{e9}\u{4e16}\u{1f600}-]{0,40}"
}

/// `text` with escapes slipped in between its characters.
fn coloured(text: String) -> impl Strategy<Value = String> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    proptest::collection::vec(proptest::option::weighted(0.2, escape()), n + 1).prop_map(
        move |escapes| {
            let mut out = String::new();
            for (i, esc) in escapes.into_iter().enumerate() {
                if let Some(esc) = esc {
                    out.push_str(&esc);
                }
                if let Some(c) = chars.get(i) {
                    out.push(*c);
                }
            }
            out
        },
    )
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[ -~\u{e9}\u{4e16}\n\t]{0,20}".prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A tool call: a name and a JSON object of arguments.
fn call() -> impl Strategy<Value = (String, Map<String, Value>)> {
    (
        "[a-z][a-z_]{0,11}",
        proptest::collection::btree_map("[a-z_]{1,10}", json_value(), 0..4)
            .prop_map(|m| m.into_iter().collect()),
    )
}

/// A token count and how a CLI might print it: `1234` or `1,234`.
fn count() -> impl Strategy<Value = (u64, String)> {
    (0u64..100_000_000, any::<bool>()).prop_map(|(n, commas)| {
        let plain = n.to_string();
        if !commas {
            return (n, plain);
        }
        let mut grouped = String::new();
        for (i, c) in plain.chars().enumerate() {
            if i > 0 && (plain.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        (n, grouped)
    })
}

/// Tool-call patterns as users write them, each searched by `Pattern::captures_all` through a
/// different path: one literal every match starts with (plain, after a look-behind, several
/// bytes long, Unicode), a shorter common prefix (case-insensitive, alternatives), or none.
const CALL_PATTERNS: &[&str] = &[
    r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>",
    r"(?s)<tool_call>(?P<json>.*?)</tool_call>",
    r"(?s)<tool_call>\s*(.*?)</tool_call>",
    r"(?s)<call ls>[ x]*(?P<name>.*?)\s*</call>",
    r"(?s)<tool_call>\s*(?P<json>.*?)[\s<]*</tool_call>",
    r"(?s)<tool_call>(?P<json>.*)</tool_call>",
    r"(?s)<tool_call>\s*(?P<json>.*?)\s*(?:</tool_call>|\z)",
    r"(?is)<tool_call>\s*(?P<json>.*?)\s*</tool_call>",
    r"(?s)<(?:tool|function)_call>(?P<json>.*?)</(?:tool|function)_call>",
    r"(?s)\s*<tool_call>(?P<json>.*?)</tool_call>",
    r"(?s)(?:<tool_call>)?(?P<json>\{.*?\})(?:</tool_call>)?",
    r"(?m)^\u{23fa} (?P<name>\w+)\((?P<args>.*)\)$",
    r"\b<call (?P<name>\w+)>(?P<args>[^<]*)</call>",
    r"(?i)\u{e9}\u{e9}(?P<json>\w*)",
    r"(?m)call>(?P<json>[^\n]*)$",
];

/// Up to `max` pieces, three in four taken from `listed`, the others random text matching
/// `other`.
fn pieces(
    listed: &'static [&'static str],
    other: &'static str,
    max: usize,
) -> impl Strategy<Value = Vec<String>> {
    let listed = proptest::sample::select(listed).prop_map(String::from);
    proptest::collection::vec(prop_oneof![3 => listed, 1 => other], 0..max)
}

/// Output full of tool-call fragments: openings and closings in several cases, some never
/// closed, some nested, around multibyte text.
fn call_fragments() -> impl Strategy<Value = String> {
    const FRAGMENTS: &[&str] = &[
        "<tool_call>",
        "</tool_call>",
        "<TOOL_CALL>",
        "</Tool_Call>",
        "<function_call>",
        "</function_call>",
        "<call ls>",
        "</call>",
        "call>",
        "{\"name\": \"ls\"}",
        "\u{23fa} Bash(ls -la)",
        "\u{e9}\u{c9}",
        "\u{4e16}",
        "\n",
        " ",
        "\u{a0}\u{3000}\t",
        "x",
    ];
    pieces(FRAGMENTS, "[ -~\u{e9}\u{4e16}\n]{0,6}", 24).prop_map(|parts| parts.concat())
}

/// A reply's lines as `Parsers` cleans them: tool calls (one spread over lines), usage and log
/// lines, blank ones, and lines ending in white space, ASCII or not.
fn reply() -> impl Strategy<Value = String> {
    const LINES: &[&str] = &[
        "<tool_call>{\"name\": \"ls\"}</tool_call>",
        "before <tool_call>\n{}\n</tool_call> after",
        "Tokens: 1,200 input + 3 output",
        "2026-11-22T03:04:06Z  INFO step",
        "Aider v0.86",
        "",
        "  ",
        "\t",
        "\u{a0}",
        "\u{3000}",
        "text \u{e9}",
        "text \u{2003}",
        "code\x0b",
        "end.",
    ];
    (pieces(LINES, "[ -~\u{e9}]{0,6}", 16), any::<bool>())
        .prop_map(|(lines, newline)| lines.join("\n") + if newline { "\n" } else { "" })
}

/// How `Parsers::parse` cleaned a text reply before it was made fast: the tool calls cut
/// out, every line holding the start of a token, activity or skip match dropped, runs of
/// blank lines folded to one, lines trimmed at their end, the whole trimmed.
fn clean_reference(p: &Parsers, text: &str) -> String {
    let mut cut = String::new();
    let mut from = 0;
    for m in p.tool_call.find_iter(text) {
        cut.push_str(&text[from..m.start()]);
        from = m.end();
    }
    cut.push_str(&text[from..]);
    let mut dropped = Vec::new();
    for re in p.tokens.iter().chain(&p.tool_activity).chain(&p.skip_lines) {
        for m in re.find_iter(&cut) {
            dropped.push(cut[..m.start()].rfind('\n').map_or(0, |p| p + 1));
        }
    }
    let mut out = String::new();
    let (mut blank_run, mut start) = (0, 0);
    for line in cut.split('\n') {
        let line_start = start;
        start += line.len() + 1;
        if dropped.contains(&line_start) {
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

proptest! {
    #![proptest_config(config())]

    #[test]
    fn replies_are_cleaned_as_before(text in reply()) {
        let p = Parsers::text(
            regex::Regex::new(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>").unwrap(),
            Some(regex::Regex::new(r"Tokens: (?P<input>[\d,]+) input \+ (?P<output>\d+) output").unwrap()),
            vec![
                regex::Regex::new(r"(?m)^\d{4}-\d\d-\d\dT\S+ +INFO ").unwrap(),
                regex::Regex::new(r"(?m)^Aider v").unwrap(),
            ],
        );
        let parsed = p.parse(&text, "");
        prop_assert_eq!(&parsed.text, &clean_reference(&p, &text));
        // Edited in place, as a CLI backend's reply is: the same as from a copy.
        prop_assert_eq!(p.parse_owned(text.clone(), ""), parsed);
    }

    #[test]
    fn fast_searches_find_what_the_regex_finds(text in call_fragments(), multi_line: bool) {
        for source in CALL_PATTERNS {
            let pattern = Pattern::compile(source, multi_line).unwrap();
            let names = ["json", "name", "args"];
            let fast: Vec<_> = pattern
                .captures_all(&text)
                .map(|g| (g.ranges(), names.map(|n| g.name(n))))
                .collect();
            let plain: Vec<_> = pattern
                .captures_iter(&text)
                .map(|caps| {
                    let ranges: Vec<_> = caps.iter().map(|m| m.map(|m| m.range())).collect();
                    (ranges, names.map(|n| caps.name(n).map(|m| m.as_str())))
                })
                .collect();
            prop_assert_eq!(fast, plain, "captures of {}", source);
            let fast: Vec<_> = pattern.find_all(&text).collect();
            let plain: Vec<_> = pattern.find_iter(&text).map(|m| m.range()).collect();
            prop_assert_eq!(fast, plain, "matches of {}", source);
        }
    }

    #[test]
    fn stripping_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = strip_ansi(&bytes);
        prop_assert!(!text.contains('\x1b'));
    }

    #[test]
    fn stripping_coloured_text_gives_the_text_back(
        (text, shown) in prose().prop_flat_map(|t| (Just(t.clone()), coloured(t)))
    ) {
        prop_assert_eq!(strip_ansi(shown.as_bytes()), text);
    }

    #[test]
    fn parsing_arbitrary_output_never_panics(
        stdout in proptest::collection::vec(any::<u8>(), 0..512),
        stderr in "(?s).{0,64}",
    ) {
        let p = parsers();
        let parsed = p.parse(&strip_ansi(&stdout), &stderr);
        for call in parsed.calls {
            prop_assert!(!call.raw.is_empty());
        }
    }

    #[test]
    fn printed_calls_and_usage_parse_back(
        before in prose(),
        calls in proptest::collection::vec(call(), 0..4),
        (input, input_text) in count(),
        (output, output_text) in count(),
        colour in proptest::collection::vec(escape(), 4),
    ) {
        // Printed as an agent CLI would: a coloured remark, each call on its line (some
        // wrapped in colour), then the usage line, dimmed.
        let mut printed = format!("{}{before}{}\n", colour[0], colour[3]);
        for (name, args) in &calls {
            let call = json!({"name": name, "arguments": args});
            printed.push_str(&format!("{}<tool_call>{call}</tool_call>{}\n", colour[1], colour[3]));
        }
        printed.push_str(&format!("{}Tokens: {input_text} in, {output_text} out{}\n", colour[2], colour[3]));
        let parsed = parsers().parse(&strip_ansi(printed.as_bytes()), "");
        let got: Vec<(String, RawArgs)> = parsed.calls.into_iter().map(|c| (c.name, c.args)).collect();
        let want: Vec<(String, RawArgs)> = calls
            .into_iter()
            .map(|(name, args)| (name, RawArgs::Json(Value::Object(args))))
            .collect();
        prop_assert_eq!(got, want);
        let usage = parsed.usage.expect("a usage line");
        prop_assert_eq!((usage.input, usage.output), (Some(input), Some(output)));
        prop_assert_eq!(parsed.text, before.trim());
    }

    #[test]
    fn arbitrary_config_text_never_panics(text in "(?s)(\\[backends\\.[a-z]{1,3}\\]\n|[a-z_]{1,16} = |\"[^\"\n]{0,12}\"|'[^'\n]{0,12}'|[0-9]{1,4}|\\[|\\]|\n|.){0,40}") {
        let _ = load(&text);
    }

    #[test]
    fn generated_backends_load_as_written(
        entries in proptest::collection::btree_map(
            "[a-z][a-z0-9_-]{0,10}",
            ("[a-z][a-z0-9_./-]{0,15}", 1u64..100_000, proptest::collection::vec("[ -&(-~]{0,10}", 0..4)),
            1..5,
        )
    ) {
        let mut text = String::new();
        for (name, (command, timeout, args)) in &entries {
            let args: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
            text.push_str(&format!(
                "[backends.{name}]\ncommand = \"{command}\"\ntimeout_s = {timeout}\nargs = [{}]\n\n",
                args.join(", ")
            ));
        }
        let config = load(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(config.names().count(), entries.len());
        for (name, (command, timeout, args)) in &entries {
            let Definition::Cli(def) = config.backend(name).unwrap() else {
                return Err(TestCaseError::fail("not a cli backend"));
            };
            prop_assert_eq!(&def.command, command);
            prop_assert_eq!(def.timeout.as_secs(), *timeout);
            prop_assert_eq!(&def.args, args);
        }
    }
}
