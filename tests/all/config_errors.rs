//! Bad configuration of every kind: each is an error that names the file, the line, the
//! backend and the key, with exit code 2, before any backend runs.

use crate::common::Workspace;

fn config_error(text: &str) -> (String, String) {
    let ws = Workspace::new();
    ws.config(text);
    let run = ws.run(&["--backend", "x", "task"]);
    run.expect_code(2);
    assert_eq!(run.stdout(), "");
    (run.stderr(), ws.path("backends.toml").display().to_string())
}

#[test]
fn invalid_regex() {
    let (err, file) =
        config_error("[backends.x]\ncommand = 'true'\ntool_call_regex = '(?P<json>['\n");
    assert!(
        err.starts_with(&format!(
            "agent-loop: error: {file}:3: backend `x`: key `tool_call_regex`: invalid regex"
        )),
        "{err}"
    );
}

/// A pattern that parses but compiles past the regex crate's size limit is reported when the
/// file is loaded, naming file, line, backend and key, with exit 2: the backend never runs.
#[test]
fn regex_too_big_to_compile() {
    let ws = Workspace::new();
    ws.add_config("[backends.x]\ncommand = 'true'\n");
    ws.add_config("tokens_regex = '(?P<input>\\w{1000})'\n");
    let run = ws.run(&["--backend", "fake", "task"]);
    run.expect_code(2);
    assert_eq!(ws.runs(), 0, "the backend ran before the error");
    let (err, file) = (run.stderr(), ws.path("backends.toml").display().to_string());
    assert!(
        err.contains(&format!(
            "error: {file}:7: backend `x`: key `tokens_regex`: invalid regex: "
        )) && err.contains("size limit"),
        "{err}"
    );
}

#[test]
fn regex_without_the_needed_groups() {
    let (err, file) =
        config_error("[backends.x]\ncommand = 'true'\n\ntokens_regex = 'Tokens: \\d+'\n");
    assert!(err.contains(&format!("{file}:4: backend `x`: key `tokens_regex`: needs a named group `input`, `output` or `total`")), "{err}");
}

#[test]
fn unknown_key() {
    let (err, file) = config_error(
        "[backends.y]\ncommand = 'true'\n\n[backends.x]\ncommand = 'true'\ntimeout = 5\n",
    );
    assert!(
        err.contains(&format!("{file}:6: backend `x`: unknown field `timeout`")),
        "{err}"
    );
}

/// A misspelt key gets the nearest key, as a misspelt backend name does, and not the
/// paragraph of every key a backend takes.
#[test]
fn unknown_key_suggests_the_nearest() {
    let (err, file) = config_error("[backends.x]\ncomand = 'true'\n");
    assert!(
        err.contains(&format!(
            "{file}:2: backend `x`: unknown field `comand` (did you mean `command`?); a \
             backend's keys are in docs/backends-and-presets.md"
        )),
        "{err}"
    );
    assert!(!err.contains("`tool_call_regex`"), "{err}");
    let (err, _) = config_error("[backends.x]\ncommand = 'true'\nzzzz = 1\n");
    assert!(!err.contains("did you mean"), "{err}");
}

/// `[backend.x]` for `[backends.x]`: the top level's keys are few, so they are listed, and
/// `backends` is suggested.
#[test]
fn singular_table_name_suggests_backends() {
    let (err, file) = config_error("[backend.x]\ncommand = 'true'\n");
    assert!(
        err.contains(&format!(
            "{file}:1: unknown field `backend` (did you mean `backends`?), expected one of \
             `default_backend`"
        )),
        "{err}"
    );
}

#[test]
fn wrong_type() {
    let (err, file) = config_error("[backends.x]\ncommand = 'true'\ntimeout_s = 'soon'\n");
    assert!(
        err.contains(&format!(
            "{file}:3: backend `x`: key `timeout_s`: invalid type: string \"soon\", expected a \
             whole number from 1, written without quotes"
        )),
        "{err}"
    );
}

#[test]
fn missing_command() {
    let (err, file) = config_error("[backends.x]\nargs = ['-p']\n");
    assert!(
        err.contains(&format!("{file}:1: backend `x` has no `command`")),
        "{err}"
    );
}

#[test]
fn toml_syntax_error() {
    let (err, file) = config_error("[backends.x]\ncommand = 'true\n");
    assert!(err.contains(&format!("{file}:2")), "{err}");
}

#[test]
fn unknown_type() {
    let (err, _) = config_error("[backends.x]\ntype = 'telepathy'\ncommand = 'true'\n");
    assert!(
        err.contains(":2: backend `x`: key `type`: unknown type `telepathy`"),
        "{err}"
    );
}

#[test]
fn missing_config_file() {
    let ws = Workspace::new();
    std::fs::remove_file(ws.path("backends.toml")).unwrap();
    let run = ws.run(&["--backend", "fake", "x"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains(&format!(
            "cannot read config file {}: No such file",
            ws.path("backends.toml").display()
        )),
        "{}",
        run.stderr()
    );
}

#[test]
fn command_not_on_path() {
    let (err, _) = config_error("[backends.x]\ncommand = 'no-such-agent-cli-xyz'\n");
    assert!(
        err.contains("backend `x`: command `no-such-agent-cli-xyz` is not on PATH"),
        "{err}"
    );
}

#[test]
fn unknown_backend_lists_the_configured_ones() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "nope", "task"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("no backend named `nope`; configured backends: aider, claude, claude-acp, claude-api, codex, codex-acp, coro, crush, deepseek, demo, fake, gemini, gemini-acp, gemini-tui, llm, mistral, ollama, ollama-cli, openai, opencode, opencode-acp, openrouter, qwen, qwen-acp, qwen-tui"),
        "{}",
        run.stderr()
    );
}

#[test]
fn misspelt_backend_gets_a_suggestion_and_the_page_on_adding_one() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "dmeo", "task"]);
    run.expect_code(2);
    let err = run.stderr();
    assert!(
        err.contains("no backend named `dmeo` (did you mean `demo`?); configured backends: "),
        "{err}"
    );
    assert!(err.contains("docs/backends-and-presets.md"), "{err}");
    assert!(!err.contains("--help"), "{err}");
}

#[test]
fn no_backend_chosen_suggests_the_demo() {
    let ws = Workspace::new();
    // The only user backend is not installed, so nothing can be picked automatically.
    ws.config("[backends.ghost]\ncommand = 'no-such-agent-cli-xyz'\n");
    let run = ws.run(&["task"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("no backend chosen, and none of the configured ones is available"),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr().contains("agent-loop --backend demo"),
        "{}",
        run.stderr()
    );
}

/// Whatever agent CLIs the machine has, a test sees none (tests/all/common/hermetic.rs): a
/// preset that finds its CLI would run it, spending the user's tokens.
#[test]
fn no_agent_cli_of_the_machine_is_seen_by_a_test() {
    let ws = Workspace::new();
    let run = ws.run(&["backends"]);
    run.expect_code(0);
    let out = run.stdout();
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cells.len() > 2 && ["cli", "pty"].contains(&cells[1].trim_end_matches(','))
        })
        .filter(|l| !l.contains('/') && !l.contains("built in"))
        .collect();
    assert!(rows.len() >= 10, "{out}");
    for row in rows {
        assert!(row.contains("not on PATH"), "{row}");
    }
    assert!(out.contains("no server answering"), "{out}");
}

#[test]
fn the_first_available_user_backend_is_picked() {
    let ws = Workspace::new();
    ws.add_config("\n[backends.ghost]\ncommand = 'no-such-agent-cli-xyz'\n");
    ws.reply(1, "picked\n");
    let run = ws.run(&["task"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "picked\n");
}

#[test]
fn unknown_tool_in_tools_flag() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "fake", "--tools", "read,teleport", "task"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("--tools: unknown tool `teleport`"),
        "{}",
        run.stderr()
    );
}

#[test]
fn user_file_under_xdg_config_home_then_config_flag_override() {
    let ws = Workspace::new();
    let dir = ws.path("xdg/agent-loop");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("backends.toml"),
        format!(
            "default_backend = 'mine'\n[backends.mine]\ncommand = '{}'\nargs = ['--prompt-arg', '{{prompt}}']\n",
            crate::common::fixture("agents/scripted.sh").display()
        ),
    )
    .unwrap();
    ws.reply(1, "from mine\n");
    // No --backend: default_backend from the user file; the --config file is layered on top.
    let run = ws.run(&["task one"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "from mine\n");
    // A later file overrides one key of the user's entry, keeping the rest.
    ws.add_config("[backends.mine]\ntimeout_s = 300\nargs = ['--prompt-file', '{prompt_file}']\n");
    ws.reply(2, "still mine\n");
    let run = ws.run(&["task two"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "still mine\n");
    assert!(ws.prompt(2).contains("User: task two"));
}

#[test]
fn env_var_chooses_the_backend() {
    let ws = Workspace::new();
    ws.reply(1, "via env\n");
    let mut cmd = ws.cmd(&["task"]);
    cmd.env("AGENT_LOOP_BACKEND", "fake");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert_eq!(run.stdout(), "via env\n");
}

/// A timeout of 0 used to become 1 s without a word.
#[test]
fn a_timeout_of_zero_is_refused() {
    let (err, file) = config_error("[backends.x]\ncommand = 'true'\ntimeout_s = 0\n");
    assert!(
        err.contains(&format!(
            "{file}:1: backend `x`: key `timeout_s`: must be at least 1 (seconds)"
        )),
        "{err}"
    );
    let (err, _) = config_error(
        "[backends.x]\ntype = 'openai'\nbase_url = 'http://127.0.0.1:9'\nmodel = 'm'\ntimeout_s = 0\n",
    );
    assert!(err.contains("key `timeout_s`: must be at least 1"), "{err}");
}

/// A cap of 0 bytes on a CLI's output would fail every turn on its first byte.
#[test]
fn a_max_output_bytes_of_zero_is_refused() {
    let (err, file) = config_error("[backends.x]\ncommand = 'true'\nmax_output_bytes = 0\n");
    assert!(
        err.contains(&format!(
            "{file}:1: backend `x`: key `max_output_bytes`: must be at least 1"
        )),
        "{err}"
    );
}

/// A backend that is not a table says what one is, not the name of a Rust type.
#[test]
fn a_backend_that_is_not_a_table_says_what_one_is() {
    let (err, file) = config_error("[backends]\nb = \"string\"\n");
    assert!(
        err.contains(&format!(
            "{file}:2: invalid type: string \"string\", expected a backend's table of keys"
        )),
        "{err}"
    );
}

/// A script whose `#!` interpreter is not there (`#!/bin/sh` on Termux) is not "No such
/// file", as the system says of it: the interpreter is named, with the fix.
#[test]
fn a_script_whose_interpreter_is_missing_names_it() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new();
    let script = ws.path("unfixed-agent");
    std::fs::write(&script, "#!/nonexistent/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    ws.config(&format!("[backends.x]\ncommand = '{}'\n", script.display()));
    let run = ws.run(&["--backend", "x", "task"]);
    assert_ne!(run.code(), 0);
    let err = run.stderr();
    assert!(
        err.contains("its #! line names /nonexistent/bin/sh, which is not there"),
        "{err}"
    );
    assert!(
        err.contains(&format!("termux-fix-shebang {}", script.display())),
        "{err}"
    );
}

/// A bad `tool_call_format` names its own line, as a bad regex key does, not its table's.
#[test]
fn tool_call_format_names_its_line() {
    let (err, file) = config_error("[backends.x]\ncommand = 'true'\n\ntool_call_format = 'xml'\n");
    assert!(
        err.contains(&format!(
            "{file}:4: backend `x`: key `tool_call_format`: must contain {{json}}"
        )),
        "{err}"
    );
}

/// `max_iterations =` with no value: said so, not the parser's guess that a string lacks
/// its quotes.
#[test]
fn a_setting_without_a_value() {
    let ws = Workspace::new();
    let file = ws.path("xdg/agent-loop/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "approval = \"never\"\nmax_iterations = \n").unwrap();
    let run = ws.run(&["--backend", "demo", "hi"]);
    run.expect_code(2);
    let err = run.stderr();
    assert!(
        err.contains(&format!(
            "{}:2: setting `max_iterations`: no value after `=`",
            file.display()
        )),
        "{err}"
    );
    assert!(!err.contains("quoted"), "{err}");
}

/// `timeout_s =` with no value in a backends.toml, the user's or `--config`'s: said as
/// config.toml's is, with the key, not the parser's guess that a string lacks its quotes.
#[test]
fn a_backend_key_without_a_value() {
    let (err, file) = config_error("[backends.x]\ncommand = 'true'\ntimeout_s =\n");
    assert!(
        err.contains(&format!(
            "{file}:3: backend `x`: key `timeout_s`: no value after `=`: write one"
        )),
        "{err}"
    );
    assert!(!err.contains("quoted"), "{err}");
    let ws = Workspace::new();
    let user = ws.path("xdg/agent-loop/backends.toml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, "default_backend = # later\n").unwrap();
    let run = ws.run(&["--backend", "fake", "task"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains(&format!(
            "{}:1: key `default_backend`: no value after `=`",
            user.display()
        )),
        "{}",
        run.stderr()
    );
}

/// A backend's whole-number key given a negative number, a fraction or a number too large
/// for it says what it takes: from 1 where 0 is refused too, from 0 where it is not.
#[test]
fn a_backend_whole_number_says_what_it_takes() {
    for (value, said) in [
        ("timeout_s = -1", "key `timeout_s`: invalid value: integer `-1`, expected a whole number from 1"),
        ("timeout_s = 1.5", "key `timeout_s`: invalid type: floating point `1.5`, expected a whole number from 1"),
        ("retries = -1", "key `retries`: invalid value: integer `-1`, expected a whole number from 0"),
        ("retries = 5000000000", "key `retries`: invalid value: integer `5000000000`, expected a whole number from 0 to 4294967295"),
    ] {
        let (err, file) = config_error(&format!("[backends.x]\ncommand = 'true'\n{value}\n"));
        assert!(err.contains(&format!("{file}:3: backend `x`: {said}")), "{err}");
    }
}
