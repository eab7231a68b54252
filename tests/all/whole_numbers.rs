//! Whole-number settings given something else (a negative number, a fraction, a word), from
//! each place a setting comes from: config.toml, an `AGENT_LOOP_*` variable, a flag. Each
//! says, in words, what it takes and where the value came from, not Rust's "invalid digit
//! found in string"; a flag's `-1` is that flag's value, not a flag clap does not know.

use crate::common::Workspace;

/// The error of a run whose config.toml is `text`, and that file.
fn with_config_toml(text: &str, args: &[&str]) -> (String, String) {
    let ws = Workspace::new();
    let file = ws.path("xdg/agent-loop/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    let run = ws.run(args);
    run.expect_code(2);
    assert_eq!(ws.runs(), 0, "the backend ran");
    (run.stderr(), file.display().to_string())
}

#[test]
fn in_config_toml() {
    for value in ["-1", "1.5", "\"ten\""] {
        let (err, file) = with_config_toml(
            &format!("backend = \"fake\"\nmax_iterations = {value}\n"),
            &["go"],
        );
        let written = value.trim_matches('"');
        assert!(
            err.contains(&format!(
                "{file}:2: setting `max_iterations` = `{written}`: expected a whole number from 1"
            )),
            "{err}"
        );
        assert!(!err.contains("invalid digit"), "{err}");
    }
    // A table's entry, for a front end: the bot's, read before its token is looked for.
    let (err, file) = with_config_toml(
        "[telegram]\nmax_concurrent = 0\n",
        &["telegram", "--allow-user", "1"],
    );
    assert!(
        err.contains(&format!(
            "{file}:2: setting `telegram_max_concurrent` = `0`: must be at least 1"
        )),
        "{err}"
    );
}

#[test]
fn in_the_environment() {
    for (var, value, said) in [
        (
            "AGENT_LOOP_WEB_TIMEOUT",
            "-3",
            "`web_timeout` = `-3`: expected a whole number from 1",
        ),
        (
            "AGENT_LOOP_TOOL_RESULT_MAX_CHARS",
            "2.5",
            "`tool_result_max_chars` = `2.5`: expected a whole number from 1",
        ),
        (
            "AGENT_LOOP_MAX_CONTEXT_TOKENS",
            "lots",
            "`max_context_tokens` = `lots`: expected a whole number from 0",
        ),
    ] {
        let ws = Workspace::new();
        let mut cmd = ws.cmd(&["--backend", "fake", "go"]);
        cmd.env(var, value);
        let run = ws.run_cmd(cmd);
        run.expect_code(2);
        let err = run.stderr();
        assert!(
            err.contains(&format!("environment {var}: setting {said}")),
            "{err}"
        );
    }
}

#[test]
fn in_flags() {
    for (args, said) in [
        (
            vec!["--max-iterations", "-1", "go"],
            "'-1' for '--max-iterations <N>': expected a whole number from 1",
        ),
        (
            vec!["--max-iterations", "1.5", "go"],
            "'1.5' for '--max-iterations <N>': expected a whole number from 1",
        ),
        (
            vec!["--tail", "ten", "go"],
            "'ten' for '--tail <N>': expected a whole number from 0",
        ),
        (
            vec!["telegram", "--max-concurrent", "-1"],
            "'-1' for '--max-concurrent <N>': expected a whole number from 1",
        ),
        (
            vec!["mcp", "serve", "--timeout", "0.5"],
            "'0.5' for '--timeout <SECS>': expected a whole number from 1",
        ),
        // An answer of no characters cannot say where the whole one is.
        (
            vec!["mcp", "serve", "--max-answer-chars", "0"],
            "'0' for '--max-answer-chars <N>': must be at least 1",
        ),
    ] {
        let ws = Workspace::new();
        let run = ws.run(&args);
        run.expect_code(2);
        let err = run.stderr();
        assert!(
            err.contains(&format!("invalid value {said}")),
            "{args:?}: {err}"
        );
        assert!(!err.contains("invalid digit"), "{args:?}: {err}");
    }
}
