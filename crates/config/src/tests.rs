//! Loading and merging configuration files, and checking CLI backend entries.

use std::time::Duration;

use super::*;
use crate::context::ContextMode;
use crate::parse::Pattern;

fn src(name: &str, text: &str) -> Source {
    Source {
        name: name.into(),
        text: text.into(),
    }
}

#[test]
fn builtin_file_loads() {
    let config = Config::from_sources(&[Source::builtin()]).unwrap();
    assert!(config.has("demo"));
}

/// The built-in patterns are compiled only when used: every one of them compiles (a
/// pattern too big for the regex crate would fail here), and has the groups its key needs.
#[test]
fn builtin_patterns_compile_and_have_their_groups() {
    let config = Config::from_sources(&[Source::builtin()]).unwrap();
    let names = |p: &Pattern| {
        p.capture_names()
            .flatten()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    for (_, def) in config.definitions().unwrap() {
        if let Definition::Pty(d) = def {
            let screen = [
                &d.ready,
                &d.done,
                &d.busy,
                &d.tool_activity,
                &d.error,
                &d.approval,
            ];
            screen
                .into_iter()
                .flatten()
                .chain(&d.skip_lines)
                .for_each(Pattern::warm);
            continue;
        }
        let Definition::Cli(d) = def else { continue };
        let p = &d.parsers;
        let call = names(&p.tool_call);
        assert!(
            call.iter().any(|g| g == "json" || g == "name"),
            "{}: {call:?}",
            d.name
        );
        if let Some(tokens) = &p.tokens {
            let groups = names(tokens);
            assert!(
                groups
                    .iter()
                    .any(|g| matches!(g.as_str(), "input" | "output" | "total")),
                "{}",
                d.name
            );
        }
        let retry = d.retry_regex.iter();
        for extra in p
            .skip_lines
            .iter()
            .chain(&p.error)
            .chain(&p.tool_activity)
            .chain(retry)
        {
            extra.warm();
        }
    }
}

#[test]
fn a_user_file_changes_a_builtin_backend_key_by_key() {
    let config = Config::from_sources(&[
        Source::builtin(),
        src("my.toml", "\n[backends.claude]\ntimeout_s = 9\n"),
    ])
    .unwrap();
    let Definition::Cli(claude) = config.backend("claude").unwrap() else {
        panic!("claude is a CLI backend")
    };
    assert_eq!(claude.command, "claude");
    assert_eq!(claude.timeout, Duration::from_secs(9));
    assert_eq!(claude.defined_at, "my.toml:2");
    assert_eq!(config.user_order, ["claude"]);
    // Read at load, so that a mistake in the change is reported then.
    let err = Config::from_sources(&[
        Source::builtin(),
        src("my.toml", "[backends.claude]\ntokens_regex = \"(x\"\n"),
    ])
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("my.toml:2: backend `claude`: key `tokens_regex`: invalid regex"),
        "{}",
        err.to_string()
    );
}

#[test]
fn later_file_overrides_single_keys() {
    let config = Config::from_sources(&[
        src("a.toml", "[backends.x]\ncommand = \"one\"\ntimeout_s = 5\n"),
        src("b.toml", "[backends.x]\ntimeout_s = 7\n"),
    ])
    .unwrap();
    let Definition::Cli(x) = config.backend("x").unwrap() else {
        panic!("x is a CLI backend")
    };
    assert_eq!(x.command, "one");
    assert_eq!(x.timeout, Duration::from_secs(7));
    assert_eq!(x.defined_at, "b.toml:1");
}

#[test]
fn bad_regex_names_file_line_backend_and_key() {
    let err = Config::from_sources(&[src(
        "my.toml",
        "[backends.ok]\ncommand = \"a\"\n\n[backends.bad]\ncommand = \"b\"\ntokens_regex = \"(unclosed\"\n",
    )])
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("my.toml:6: backend `bad`: key `tokens_regex`: invalid regex"),
        "{}",
        err.to_string()
    );
}

/// The regex engine is built with only some of its Unicode tables (Cargo.toml); these are
/// what patterns rely on. (The tables left out cannot be missed here: the dev-dependencies
/// turn them back on in test builds.)
#[test]
fn patterns_are_unicode_aware() {
    let re = regex::Regex::new(r"(?i)^été\w* \d\s\p{Lu}\p{N}\b").unwrap();
    assert!(re.is_match("ÉTÉS \u{663}\u{a0}Ж\u{2167}"));
    assert!(!re.is_match("été x Ж3"));
}

#[test]
fn unknown_key_names_file_line_backend_and_key() {
    let err = Config::from_sources(&[src(
        "my.toml",
        "[backends.a]\ncommand = \"a\"\n\n[backends.b]\ncomand = \"b\"\n",
    )])
    .unwrap_err();
    assert!(err.to_string().contains("my.toml:5"), "{err}");
    assert!(err.to_string().contains("backend `b`"), "{err}");
    assert!(
        err.to_string().contains("unknown field `comand`"),
        "{}",
        err.to_string()
    );
}

#[test]
fn context_keys_are_read_with_defaults() {
    let config = Config::from_sources(&[src(
        "my.toml",
        "[backends.a]\ncommand = \"a\"\n\n[backends.b]\ncommand = \"b\"\ncontext = \"sliding:6\"\ncontext_format = \"xml\"\nmax_context_tokens = 32000\ntool_result_max_chars = 500\n",
    )])
    .unwrap();
    let cli = |name: &str| match config.backend(name).unwrap() {
        Definition::Cli(d) => d.clone(),
        Definition::Http(_) | Definition::Pty(_) | Definition::Acp(_) => {
            panic!("{name} is a CLI backend")
        }
    };
    let a = cli("a");
    assert_eq!(a.context, ContextSettings::default());
    assert_eq!(a.style.format, crate::context::ContextFormat::Plain);
    let b = cli("b");
    assert_eq!(b.context.mode, ContextMode::Sliding(6));
    assert_eq!(b.context.max_tokens, 32_000);
    assert_eq!(b.context.tool_result_max_chars, 500);
    assert_eq!(b.style.format, crate::context::ContextFormat::Xml);
}

#[test]
fn bad_context_keys_name_file_line_backend_and_key() {
    let err = Config::from_sources(&[src(
        "my.toml",
        "[backends.a]\ncommand = \"a\"\ncontext = \"forever\"\n",
    )])
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("my.toml:3: backend `a`: key `context`: unknown context mode `forever`"),
        "{}",
        err.to_string()
    );
    let err = Config::from_sources(&[src(
        "my.toml",
        "[backends.a]\ncommand = \"a\"\ncontext_format = \"yaml\"\n",
    )])
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("my.toml:3: backend `a`: key `context_format`"),
        "{}",
        err.to_string()
    );
    let err = Config::from_sources(&[src(
        "my.toml",
        "[backends.a]\ncommand = \"a\"\nmax_context_tokens = 10\n",
    )])
    .unwrap_err();
    assert!(
        err.to_string().contains("key `max_context_tokens`"),
        "{}",
        err.to_string()
    );
}

#[test]
fn missing_command_is_named() {
    let err = Config::from_sources(&[src("my.toml", "[backends.a]\nargs = []\n")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "my.toml:1: backend `a` has no `command` (the program to run, found through PATH)"
    );
}

#[test]
fn json_keys_are_checked_with_file_line_backend_and_key() {
    let err = |text: &str| {
        Config::from_sources(&[src("my.toml", text)])
            .unwrap_err()
            .to_string()
    };
    let e = err("[backends.a]\ncommand = \"a\"\njson_text = \"result\"\n");
    assert!(
        e.starts_with("my.toml:3: backend `a`: key `json_text`: only read with `output"),
        "{e}"
    );
    let e = err("[backends.a]\ncommand = \"a\"\noutput = \"json\"\n");
    assert!(
        e.starts_with("my.toml:3: backend `a`: key `output`: JSON output needs `json_text`"),
        "{e}"
    );
    let e = err("[backends.a]\ncommand = \"a\"\noutput = \"xml\"\n");
    assert!(
        e.starts_with("my.toml:3: backend `a`: key `output`: unknown output `xml`"),
        "{e}"
    );
    let e = err(
        "[backends.a]\ncommand = \"a\"\noutput = \"jsonl\"\njson_text = \"a\"\njson_error = \"x[y\"\n",
    );
    assert!(
        e.starts_with("my.toml:5: backend `a`: key `json_error`: bad field path"),
        "{e}"
    );
    // The answer's pieces stream from JSON lines only, and their path is checked as the others.
    let e = err("[backends.a]\ncommand = \"a\"\noutput = \"json\"\njson_text = \"a\"\njson_text_delta = \"b\"\n");
    assert!(
        e.starts_with(
            "my.toml:5: backend `a`: key `json_text_delta`: only read with `output = \"jsonl\"`"
        ),
        "{e}"
    );
    let e = err("[backends.a]\ncommand = \"a\"\noutput = \"jsonl\"\njson_text = \"a\"\njson_text_delta = \"b[\"\n");
    assert!(
        e.starts_with("my.toml:5: backend `a`: key `json_text_delta`: bad field path"),
        "{e}"
    );
    let e = err("[backends.a]\ncommand = \"a\"\njson_text_delta = \"b\"\n");
    assert!(
        e.starts_with("my.toml:3: backend `a`: key `json_text_delta`: only read with `output = \"jsonl\"`; set"),
        "{e}"
    );
    let e = err("[backends.a]\ncommand = \"a\"\noutput = \"jsonl\"\njson_text = \"a\"\njson_text_delta = \"b\"\ntool_call_format = \"{json}\"\n");
    assert!(
        e.starts_with("my.toml:5: backend `a`: key `json_text_delta`: needs a `tool_call_format` that starts with text"),
        "{e}"
    );
    let e = err("[backends.a]\ncommand = \"a\"\ntools = \"some\"\n");
    assert!(
        e.starts_with("my.toml:3: backend `a`: key `tools`: unknown mode `some`"),
        "{e}"
    );
    let e = err("[backends.a]\ntype = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\noutput = \"json\"\n");
    assert!(e.contains("`output`"), "{e}");
}

#[test]
fn own_tools_reach_the_parsers_and_the_prompt_style() {
    let config = Config::from_sources(&[src(
        "my.toml",
        "[backends.a]\ncommand = \"a\"\ntools = \"own\"\n",
    )])
    .unwrap();
    let Definition::Cli(a) = config.backend("a").unwrap() else {
        panic!("a is a CLI backend")
    };
    assert!(a.parsers.own_tools && a.style.own_tools);
}

#[test]
fn auto_order_tries_keyed_apis_then_every_cli_preset() {
    let config = Config::from_sources(&[Source::builtin()]).unwrap();
    let order = &config.auto_order;
    assert_eq!(
        order[..5],
        ["claude-api", "openai", "openrouter", "deepseek", "mistral"]
    );
    for (name, def) in config.definitions().unwrap() {
        let listed = order.iter().any(|n| n == name);
        match def {
            Definition::Cli(_) => assert_eq!(listed, name != "demo", "{name}"),
            Definition::Http(d) => assert_eq!(listed, d.api_key_env.is_some(), "{name}"),
            // A single-task CLI preset of the same agent is the better pick.
            Definition::Pty(_) | Definition::Acp(_) => assert!(!listed, "{name}"),
        }
    }
}

/// The errors underneath stay reachable: a file that cannot be read keeps its io::Error, a
/// syntax error toml's, a bad regex the regex crate's, and each is Config once converted.
#[test]
fn config_errors_keep_their_cause_as_source() {
    use std::error::Error as _;
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone.toml");
    let err = Source::read(&missing).unwrap_err();
    let io = err
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>());
    assert_eq!(
        io.map(std::io::Error::kind),
        Some(std::io::ErrorKind::NotFound),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("cannot read config file "),
        "{err}"
    );
    let err = Config::from_sources(&[src("my.toml", "[backends.a\n")]).unwrap_err();
    assert!(matches!(err, ConfigError::Syntax { .. }), "{err}");
    assert!(
        err.source().is_some_and(|s| s.is::<toml::de::Error>()),
        "{err}"
    );
    let err = Config::from_sources(&[src(
        "my.toml",
        "[backends.a]\ncommand = \"a\"\nerror_regex = \"(\"\n",
    )])
    .unwrap_err();
    assert!(
        err.source().is_some_and(|s| s.is::<regex::Error>()),
        "{err}"
    );
    let converted: crate::Error = err.into();
    assert_eq!(converted.kind, crate::ErrorKind::Config);
    assert!(converted.source().is_some_and(|s| s.is::<ConfigError>()));
}

/// Each built-in preset, parsed alone when first asked for, is what parsing the whole file
/// makes of it, down to the lines its values are reported at; and the keys every run keeps
/// from its children, read off the presets' text, are the parser's.
#[test]
fn builtin_presets_parsed_alone_are_those_of_the_whole_file() {
    let whole = Config::from_sources(&[src("whole", BUILTIN_BACKENDS)]).unwrap();
    let lazy = Config::from_sources(&[Source::builtin()]).unwrap();
    let mut keys = lazy.api_key_envs();
    assert_eq!(
        lazy.names().collect::<Vec<_>>(),
        whole.names().collect::<Vec<_>>()
    );
    let mut whole_keys = whole.api_key_envs();
    keys.sort();
    whole_keys.sort();
    assert!(!keys.is_empty());
    assert_eq!(keys, whole_keys);
    for (name, def) in whole.definitions().unwrap() {
        // Where a value is reported, `whole:LINE`, becomes `built-in backends.toml:LINE`.
        let expected = format!("{def:?}")
            .replace("\"whole:", &format!("\"{}:", Source::BUILTIN_NAME))
            .replace("\"whole\"", &format!("{:?}", Source::BUILTIN_NAME));
        assert_eq!(
            format!("{:?}", lazy.backend(name).unwrap()),
            expected,
            "{name}"
        );
    }
    assert_eq!(lazy.auto_order, whole.auto_order);
}

/// A user's file that changes one key of a preset gets the rest of it from the built-in file.
#[test]
fn a_preset_changed_by_a_user_file_keeps_its_other_keys() {
    let user = src("mine.toml", "[backends.claude]\ntimeout_s = 7\n");
    let config = Config::from_sources(&[Source::builtin(), user]).unwrap();
    let alone = Config::from_sources(&[Source::builtin()]).unwrap();
    let (Definition::Cli(changed), Definition::Cli(built_in)) = (
        config.backend("claude").unwrap(),
        alone.backend("claude").unwrap(),
    ) else {
        panic!("claude is a CLI preset");
    };
    assert_eq!(changed.timeout, Duration::from_secs(7));
    assert_eq!(changed.command, built_in.command);
    assert_eq!(changed.args, built_in.args);
    assert_eq!(config.user_order, ["claude"]);
}

#[test]
fn a_url_is_shown_without_its_user_and_password() {
    for (url, shown) in [
        (
            "http://user:pass@evil.example:11434",
            "http://***@evil.example:11434",
        ),
        ("https://a@b@host/v1?x=@y", "https://***@host/v1?x=@y"),
        ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("http://host/path@x", "http://host/path@x"),
    ] {
        assert_eq!(crate::shown_url(url), shown);
    }
}
