//! Configuration layers: built-in default < config.toml < AGENT_LOOP_* < flags, and what
//! `agent-loop config` and `--debug` say about them.

use crate::common::Workspace;

/// A scripted backend that always asks for a different tool call, so the turn runs until
/// the iteration cap: the number of runs shows the effective max_iterations.
fn capped_runs(ws: &Workspace, env: &[(&str, &str)], args: &[&str]) -> usize {
    for n in 1..=12 {
        ws.reply(
            n,
            format!(
                "<tool_call>{{\"name\":\"ls\",\"arguments\":{{\"path\":\"{n}\"}}}}</tool_call>\n"
            ),
        );
    }
    std::fs::remove_file(ws.path("fake/count")).ok();
    let mut cmd = ws.cmd(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    ws.run_cmd(cmd).expect_code(3);
    ws.runs()
}

/// The row of `key` in `agent-loop config`'s table, its columns one space apart.
fn config_row(out: &str, key: &str) -> String {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("{key} in\n{out}"))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn each_layer_overrides_the_one_below() {
    let ws = Workspace::new();
    let base = ["--backend", "fake", "go"];
    assert_eq!(capped_runs(&ws, &[], &base), 10, "built-in default");
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "max_iterations = 2\n",
    )
    .unwrap();
    assert_eq!(capped_runs(&ws, &[], &base), 2, "config.toml");
    assert_eq!(
        capped_runs(&ws, &[("AGENT_LOOP_MAX_ITERATIONS", "3")], &base),
        3,
        "environment"
    );
    let flagged = ["--backend", "fake", "--max-iterations", "4", "go"];
    assert_eq!(
        capped_runs(&ws, &[("AGENT_LOOP_MAX_ITERATIONS", "3")], &flagged),
        4,
        "flag"
    );
}

#[test]
fn config_prints_values_and_origins() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "backend = \"fake\"\napproval = \"always-ask\"\n",
    )
    .unwrap();
    let mut cmd = ws.cmd(&["--max-iterations", "7", "config"]);
    cmd.env("AGENT_LOOP_ALLOW", "read,bash:ls*");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let out = run.stdout();
    let file = ws.path("xdg/agent-loop/config.toml").display().to_string();
    let row = |key: &str| config_row(&out, key);
    assert_eq!(row("backend"), format!("backend fake {file}:1"));
    assert_eq!(row("approval"), format!("approval always-ask {file}:2"));
    assert_eq!(
        row("max_iterations"),
        "max_iterations 7 flag --max-iterations"
    );
    assert_eq!(
        row("allow"),
        "allow read,bash:ls* environment AGENT_LOOP_ALLOW"
    );
    assert_eq!(row("debug"), "debug false built-in default");
    assert!(out.contains(&format!("settings file: {file}")), "{out}");
    assert!(
        out.contains("backends files: built-in backends.toml, "),
        "{out}"
    );
}

#[test]
fn settings_reach_the_run() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "backend = \"fake\"\nallow = [\"bash:echo *\"]\n",
    )
    .unwrap();
    ws.reply(1, "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"echo via config\"}}</tool_call>\n");
    ws.reply(2, "done\n");
    ws.run(&["go"]).expect_code(0);
    assert!(
        ws.prompt(2).contains("stdout:\nvia config"),
        "{}",
        ws.prompt(2)
    );
}

#[test]
fn bad_settings_name_their_origin() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "backend = \"fake\"\nmax_iterations = \"many\"\n",
    )
    .unwrap();
    let run = ws.run(&["go"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("config.toml:2: setting `max_iterations` = `many`: expected a whole"),
        "{}",
        run.stderr()
    );
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "backend = \"fake\"\nmax_iterations = 0\n",
    )
    .unwrap();
    let run = ws.run(&["go"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("config.toml:2: setting `max_iterations` = `0`: must be at least 1"),
        "{}",
        run.stderr()
    );
    std::fs::write(ws.path("xdg/agent-loop/config.toml"), "colour = true\n").unwrap();
    let run = ws.run(&["go"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("config.toml:1: unknown setting `colour`; the settings are backend, model"),
        "{}",
        run.stderr()
    );
}

#[test]
fn debug_goes_to_stderr_only() {
    let ws = Workspace::new();
    ws.reply(1, "the answer\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "go"]);
    cmd.env("AGENT_LOOP_DEBUG", "1");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert_eq!(run.stdout(), "the answer\n");
    let err = run.stderr();
    let row = err
        .lines()
        .find(|l| l.starts_with("debug: debug "))
        .unwrap_or_else(|| panic!("{err}"));
    // The value as the run understood it (`1` is true).
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["debug:", "debug", "true", "environment", "AGENT_LOOP_DEBUG"],
        "{err}"
    );
    assert!(err.contains("debug: event BackendStarted {"), "{err}");
}

#[test]
fn config_checks_every_value_as_a_run_does() {
    let cases: [(&str, Option<&str>, Option<&str>); 3] = [
        ("environment", None, Some("fancy")),
        ("display in the file", Some("display = \"fancy\"\n"), None),
        ("backend in the file", Some("backend = \"dmeo\"\n"), None),
    ];
    for (case, file, env) in cases {
        let ws = Workspace::new();
        if let Some(text) = file {
            std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
            std::fs::write(ws.path("xdg/agent-loop/config.toml"), text).unwrap();
        }
        let with_env = |mut cmd: std::process::Command| {
            if let Some(value) = env {
                cmd.env("AGENT_LOOP_DISPLAY", value);
            }
            cmd
        };
        let config = ws.run_cmd(with_env(ws.cmd(&["config"])));
        config.expect_code(2);
        let run = ws.run_cmd(with_env(ws.cmd(&["--no-save", "list the files here"])));
        run.expect_code(2);
        assert_eq!(config.stderr(), run.stderr(), "{case}");
        // A value that cannot be read leaves no table; a backend that is not configured is
        // checked after it, so its row shows where the name came from.
        if case.starts_with("backend") {
            assert!(
                config.stdout().contains("backend "),
                "{case}: {}",
                config.stdout()
            );
        } else {
            assert!(config.stdout().is_empty(), "{case}: {}", config.stdout());
        }
        assert!(
            config.stderr().contains("fancy") || config.stderr().contains("did you mean `demo`"),
            "{case}: {}",
            config.stderr()
        );
    }
}

#[test]
fn config_shows_what_flags_make_of_the_settings_and_every_file_looked_for() {
    let ws = Workspace::new();
    let run = ws.run(&["--yes", "-m", "big-model", "config"]);
    run.expect_code(0);
    let out = run.stdout();
    let row = |key: &str| config_row(&out, key);
    assert_eq!(row("approval"), "approval never flag --yes");
    assert_eq!(row("model"), "model big-model flag --model");
    // The files that do not exist are named too, where they would be read from.
    let xdg = ws.path("xdg/agent-loop");
    assert!(
        out.contains(&format!(
            "settings file: {} (not found)",
            xdg.join("config.toml").display()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "backends files: built-in backends.toml, {} (not found), {} (--config)",
            xdg.join("backends.toml").display(),
            ws.path("backends.toml").display()
        )),
        "{out}"
    );
    // The long names keep the columns aligned: every value starts in one column.
    let header = out.lines().next().unwrap();
    let column = header.find("VALUE").unwrap();
    let long = out
        .lines()
        .find(|l| l.starts_with("tool_result_max_chars"))
        .unwrap();
    assert_eq!(long.find("(unset)"), Some(column), "{out}");
}

/// `agent-loop config` names where each value came from, for the library's settings and the
/// front ends' own alike (`display`, `output`, the Telegram bot's): a flag, the environment,
/// a line of config.toml (a table's entry at its own line), or the built-in default.
#[test]
fn config_names_the_origin_of_library_and_front_end_settings() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "display = \"plain\"\ncontext = \"fresh\"\n\n[telegram]\nmax_concurrent = 2\n",
    )
    .unwrap();
    let mut cmd = ws.cmd(&["--output", "text", "--approval", "always-ask", "config"]);
    cmd.env("AGENT_LOOP_WEB_TIMEOUT", "12")
        .env("AGENT_LOOP_TELEGRAM_USERS", "42");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let out = run.stdout();
    let file = ws.path("xdg/agent-loop/config.toml").display().to_string();
    let row = |key: &str| config_row(&out, key);
    assert_eq!(row("display"), format!("display plain {file}:1"));
    assert_eq!(row("context"), format!("context fresh {file}:2"));
    assert_eq!(
        row("telegram_max_concurrent"),
        format!("telegram_max_concurrent 2 {file}:5")
    );
    assert_eq!(row("output"), "output text flag --output");
    assert_eq!(row("approval"), "approval always-ask flag --approval");
    assert_eq!(
        row("web_timeout"),
        "web_timeout 12 environment AGENT_LOOP_WEB_TIMEOUT"
    );
    assert_eq!(
        row("telegram_users"),
        "telegram_users 42 environment AGENT_LOOP_TELEGRAM_USERS"
    );
    assert_eq!(row("system_mode"), "system_mode append built-in default");
}

/// A front end's settings are its own: the Telegram bot reads its `[telegram]` entries typed,
/// a bad one named by file, line and setting, and leaves the command's display settings
/// alone (a display it has no use for cannot stop it).
#[test]
fn the_bot_reads_its_own_settings_and_not_the_displays() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "display = \"fancy\"\n[telegram]\nallowed_users = [\"42\", \"me\"]\n",
    )
    .unwrap();
    let run = ws.run(&["telegram", "--backend", "fake"]);
    run.expect_code(2);
    let file = ws.path("xdg/agent-loop/config.toml").display().to_string();
    assert!(
        run.stderr().contains(&format!(
            "{file}:3: setting `telegram_users` = `42,me`: `me` is not a Telegram user id"
        )),
        "{}",
        run.stderr()
    );
}
