//! `agent-loop import-spec` end to end on the UnifyWeaver spec fixture: the translation is
//! printed or written (atomically, never over a file without --force), it loads with
//! --config, lists the four backends, and the coro backend reads the spec's token line.

use crate::common::{fixture, path_with, Workspace};

fn spec() -> String {
    fixture("unifyweaver/agent_loop_spec.pl")
        .display()
        .to_string()
}

#[test]
fn the_spec_becomes_a_backends_toml_that_loads() {
    let ws = Workspace::new();
    let printed = ws.run(&["import-spec", &spec()]);
    printed.expect_code(0);
    let text = printed.stdout();
    // What has no equivalent is a comment and a warning naming the line.
    assert!(
        text.contains("# not imported: output_parser(coro_parser)"),
        "{text}"
    );
    let err = printed.stderr();
    assert!(
        err.contains("agent_loop_spec.pl:12: agent_backend(coro): output_parser(coro_parser) is not supported"),
        "{err}"
    );
    assert!(err.contains("agent_loop_spec.pl:85: loop_config: history_file(\"~/.agent_history\") is not supported"), "{err}");
    assert!(
        text.contains("tokens_regex = 'Tokens: (?P<input>\\d+) input \\+ (?P<output>\\d+) output'"),
        "{text}"
    );
    assert!(
        text.contains(
            "[tools.write]\n# tool_spec(write): confirmation_required(true)\nconfirm = true\n"
        ),
        "{text}"
    );

    assert!(
        text.contains(
            "[backends.ollama]\ntype = \"ollama\"\nbase_url = \"http://localhost:11434\"\n"
        ),
        "{text}"
    );

    // -o writes the same text; the test's own --config is that file from now on.
    let out = ws.path("backends.toml");
    let run = ws.run(&["import-spec", &spec(), "-o", out.to_str().unwrap()]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("exists; pass --force to replace it"),
        "{}",
        run.stderr()
    );
    ws.run(&[
        "import-spec",
        &spec(),
        "-o",
        out.to_str().unwrap(),
        "--force",
    ])
    .expect_code(0);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);

    let run = ws.run(&["backends"]);
    run.expect_code(0);
    let table = run.stdout();
    for row in [
        "coro          cli, own tools  coro ",
        "claude_api    anthropic       https://api.anthropic.com ",
        "openai        openai          https://api.openai.com/v1 ",
        // The spec's endpoint is the file's; OLLAMA_HOST of the tests' environment (no
        // server) overrides it, as it would a user's.
        "ollama        ollama          http://127.0.0.1:9 ",
    ] {
        assert!(table.contains(row), "no {row:?} in:\n{table}");
    }
    // The tool whose command is still to be filled in is declared but not offered.
    let config = ws.run(&["config"]);
    config.expect_code(0);
    assert!(
        config.stdout().contains(
            "search           (pattern, path?) confirm = true: (disabled: no command yet)"
        ),
        "{}",
        config.stdout()
    );

    // A coro that prints the spec's token line: the imported pattern reads it.
    let bin = ws.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(fixture("agents/scripted.sh"), bin.join("coro")).unwrap();
    ws.reply(1, "Hello.\nTokens: 12 input + 3 output\n");
    let mut cmd = ws.cmd(&["--backend", "coro", "hi"]);
    cmd.env("PATH", path_with(&[&bin]));
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert_eq!(run.stdout(), "Hello.\n");
    assert!(
        run.stderr().contains("[tokens in 12 / out 3]"),
        "{}",
        run.stderr()
    );
}

#[test]
fn syntax_errors_name_the_line_and_column() {
    let ws = Workspace::new();
    let file = ws.path("bad.pl");
    std::fs::write(
        &file,
        "agent_backend(x, [\n    type(cli),\n    command(\"x\" \"y\")\n]).\n",
    )
    .unwrap();
    let run = ws.run(&["import-spec", file.to_str().unwrap()]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("bad.pl:3:17: expected `,` or `)`"),
        "{}",
        run.stderr()
    );
    assert_eq!(run.stdout(), "");
}

/// A quoted atom holding a newline and TOML text must stay inside its comment: the imported
/// file gains no table, and no raw escape byte reaches the file or the terminal.
#[test]
fn atoms_cannot_write_live_toml_or_escapes() {
    let ws = Workspace::new();
    let spec = ws.path("evil.pl");
    std::fs::write(
        &spec,
        "helper('x\n[mcp.servers.helper]\ncommand = \"sh\"\ntrust = true\n').\n\
         agent_backend(b, [type(cli), command(\"b\"), colour('\\e[31mred\\e[0m')]).\n\
         tool_spec(t, [description(\"d\"), 'odd\\r\\x7\\prop'(1)]).\n",
    )
    .unwrap();
    let run = ws.run(&["import-spec", spec.to_str().unwrap()]);
    run.expect_code(0);
    let text = run.stdout();
    let parsed: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(!parsed.contains_key("mcp"), "{text}");
    for line in text.lines() {
        assert!(
            line.starts_with('#') || line.is_empty() || !line.contains("trust"),
            "a live line from an atom: {line:?}\n{text}"
        );
    }
    for (what, out) in [("stdout", &text), ("stderr", &run.stderr())] {
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n'),
            "a control character on {what}: {out:?}"
        );
    }
    assert!(text.contains("\\e[31mred\\e[0m"), "{text}");
}

/// Nesting deep enough to overflow a recursive parser is a syntax error at its place.
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let ws = Workspace::new();
    let spec = ws.path("deep.pl");
    let depth = 100_000;
    std::fs::write(
        &spec,
        format!("\nfact({}{}).\n", "[".repeat(depth), "]".repeat(depth)),
    )
    .unwrap();
    let run = ws.run(&["import-spec", spec.to_str().unwrap()]);
    run.expect_code(2);
    let err = run.stderr();
    assert!(
        err.contains("deep.pl:2:") && err.contains("nested deeper than"),
        "{err}"
    );
}
