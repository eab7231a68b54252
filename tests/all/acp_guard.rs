//! Nothing an ACP or terminal agent remembers between runs may widen what it is allowed to
//! do: its own settings files can allow edits without a question, so an entry's guard
//! (settings of higher precedence, as arguments, variables, a file or `_meta`) is passed
//! whenever agent-loop's approval asks, and an ACP agent's writes through agent-loop's file
//! access ask unless a question it asked named the file. The fake agents' settings in the
//! test's HOME allow their edits, as Claude Code's `permissions.allow` or opencode's
//! `"edit": "allow"` do.

use crate::acp::{acp, received};
use crate::common::Workspace;

/// An ACP entry for the fake agent with `guard` as its `[backends.acp.guard]` table, and
/// the fake's own settings (in the test's HOME) allowing its edits.
fn widened(guard: &str) -> Workspace {
    let ws = acp(&format!("[backends.acp.guard]\n{guard}"));
    std::fs::create_dir_all(ws.path("home/.fake-acp")).unwrap();
    std::fs::write(
        ws.path("home/.fake-acp/settings.json"),
        r#"{"allow": true}"#,
    )
    .unwrap();
    ws
}

/// The guard files the fake agent read; each is gone once agent-loop has exited.
fn guard_files_gone(ws: &Workspace) -> usize {
    let read = std::fs::read_to_string(ws.path("fake/guard-files")).unwrap_or_default();
    for path in read.lines() {
        assert!(!std::path::Path::new(path).exists(), "{path} is left");
    }
    read.lines().count()
}

#[test]
fn a_guard_outranks_the_settings_that_allow_an_agent_to_edit() {
    // Without a guard, its settings let it edit without asking anyone.
    let ws = widened("");
    let run = ws.run(&["--backend", "acp", "permission"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "permission: allowed by its settings\n");
    // Each way a guard can be passed: it asks, and in a pipe that is a refusal.
    let file = "file = \"ask\"\nfile_name = \"ask.json\"\n";
    for guard in [
        format!("args = [\"--ask-file\", \"{{file}}\"]\n{file}"),
        format!("env = {{ FAKE_ACP_ASK_FILE = \"{{file}}\" }}\n{file}"),
        "meta = { fake = { ask = true } }\n".to_string(),
    ] {
        let ws = widened(&guard);
        let run = ws.run(&["--backend", "acp", "permission"]);
        run.expect_code(4);
        assert_eq!(run.stdout(), "permission: cancel\n", "{guard}");
        // Under --yes it is not passed: the agent's settings stand.
        let run = ws.run(&["--backend", "acp", "--yes", "permission"]);
        run.expect_code(0);
        assert_eq!(run.stdout(), "permission: allowed by its settings\n");
        let news = received(&ws, "session/new");
        assert_eq!(
            news[0]["params"]["_meta"]["fake"]["ask"] == true,
            guard.starts_with("meta")
        );
        assert_eq!(news[1]["params"].get("_meta"), None, "{guard}");
        // Its file is named as asked, in a folder of its own, and removed with the agent.
        let read = guard_files_gone(&ws);
        assert_eq!(read, usize::from(!guard.starts_with("meta")), "{guard}");
    }
}

/// claude-acp's guard has the adapter read the user's settings only: a project's
/// `.claude/settings.json` runs its hooks and `apiKeyHelper` at start, and its `env` can send
/// the key and the conversation to another host.
#[test]
fn claude_acps_guard_keeps_the_projects_settings_unread() {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.claude-acp]\ncommand = \"{}\"\ntimeout_s = 60\n",
        crate::common::fixture("agents/fake-acp.py").display()
    ));
    ws.run(&["--backend", "claude-acp", "hello"]).expect_code(0);
    let news = received(&ws, "session/new");
    let options = &news[0]["params"]["_meta"]["claudeCode"]["options"];
    assert_eq!(
        options["settingSources"],
        serde_json::json!(["user"]),
        "{options}"
    );
    assert!(options["extraArgs"]["settings"]
        .as_str()
        .is_some_and(|s| s.contains("\"ask\"")));
}

#[test]
fn yes_off_starts_an_agent_started_without_its_guard_again() {
    let ws = widened("meta = { fake = { ask = true } }\n");
    let steps = [
        ("agent-loop with backend", 1, "permission\n"),
        ("permission: allowed by its settings", 1, "/yes off\n"),
        ("[tools ask before they change things]", 1, "permission\n"),
        ("[a]lways", 1, "n\n"),
        ("permission: cancel", 1, "exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend acp --yes", &steps);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("(agent started again: agent-loop's approval asks now"),
        "{screen}"
    );
    let news = received(&ws, "session/load");
    assert_eq!(news.len(), 1, "{screen}");
    assert_eq!(news[0]["params"]["_meta"]["fake"]["ask"], true);
}

#[test]
fn an_agents_writes_ask_unless_a_question_it_asked_named_the_file() {
    let ws = acp("");
    let made = ws.work().join("made.txt");
    // A write no question named: as the write tool's, refused in a pipe, exit 4.
    let run = ws.run(&["--backend", "acp", "write made.txt"]);
    run.expect_code(4);
    assert!(
        run.stdout()
            .starts_with("write refused: not written: agent-loop cannot ask for approval"),
        "{}",
        run.stdout()
    );
    assert!(!made.exists());
    // Allowed by a rule for the write tool, or --yes.
    let run = ws.run(&[
        "--backend",
        "acp",
        "--allow",
        "write:made.txt",
        "write made.txt",
    ]);
    assert_eq!(run.stdout(), "write ok\n");
    std::fs::remove_file(&made).unwrap();
    let run = ws.run(&["--backend", "acp", "--yes", "write made.txt"]);
    assert_eq!(run.stdout(), "write ok\n");
    std::fs::remove_file(&made).unwrap();
    // Its question named the file and was answered yes: its write asks nothing more.
    let run = ws.run(&[
        "--backend",
        "acp",
        "--allow",
        "edit:*made.txt*",
        "permitted-write made.txt",
    ]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "permitted-write ok\n");
    assert!(made.exists());
    // Answered no: nothing written, and the refusal is the exit code.
    std::fs::remove_file(&made).unwrap();
    let run = ws.run(&["--backend", "acp", "permitted-write made.txt"]);
    run.expect_code(4);
    assert_eq!(run.stdout(), "permitted-write: not allowed\n");
    assert!(!made.exists());
    ws.assert_no_leftovers();
}

#[test]
fn only_a_changing_question_grants_and_a_rule_only_the_paths_it_allows_alone() {
    let ws = acp("");
    let made = ws.work().join("made.txt");
    for (rule, prompt, written) in [
        // A yes to a question of a kind that changes nothing (the agent picks the kind)
        // allows no write: `--allow read` answers a `read` question naming the file.
        ("read", "asked-write read made.txt", false),
        // A glob matching the question through one path (the title and the paths are
        // matched together) grants only the paths it allows alone: the other still asks.
        ("edit:*a.txt*", "asked-write edit a.txt made.txt", false),
        // Allowed alone by the rule, each path is granted.
        ("edit:*.txt", "asked-write edit a.txt made.txt", true),
    ] {
        let run = ws.run(&["--backend", "acp", "--allow", rule, prompt]);
        let out = run.stdout();
        match written {
            true => assert_eq!(out, "asked-write ok\n", "{rule}"),
            false => assert!(out.starts_with("asked-write refused: not written"), "{out}"),
        }
        assert_eq!(made.exists(), written, "{rule}");
    }
    ws.assert_no_leftovers();
}

#[test]
fn an_always_for_a_kind_that_changes_nothing_allows_no_write() {
    let ws = acp("");
    // The user answers "always" for `read` questions; the agent then asks one naming a
    // file and writes it: the write still asks, and the user refuses it.
    let steps = [
        ("agent-loop with backend", 1, "asked-write read a.txt\n"),
        ("[a]lways", 1, "a\n"),
        ("[a]lways", 2, "n\n"),
        (
            "asked-write refused: not written",
            1,
            "asked-write read made.txt\n",
        ),
        ("[a]lways", 3, "n\n"),
        ("asked-write refused: not written", 2, "exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend acp", &steps);
    assert_eq!(code, 0, "{screen}");
    assert!(!ws.work().join("made.txt").exists(), "{screen}");
    assert!(!ws.work().join("a.txt").exists(), "{screen}");
    // The write's question shows what the agent would write, not only the path.
    assert!(
        screen.contains("It asks to write made.txt (the agent writes it;")
            && screen.contains("(1 line):\n  | written after asking\\n\n"),
        "{screen}"
    );
}

#[test]
fn a_guard_that_cannot_work_is_a_config_error() {
    for (guard, why) in [
        ("file = \"x\"\n", "no `args` or `env` names `{file}`"),
        ("args = [\"{file}\"]\n", "there is no `file`"),
        (
            "args = [\"{file}\"]\nfile = \"x\"\nfile_name = \"../x\"\n",
            "`file_name` is a name, not a path",
        ),
        ("colour = \"red\"\n", "colour"),
        (
            "env = { A = \"x\" }\nreplaces = \"/etc/a.json\"\n",
            "`replaces` is set, but no variable of `env` is `{file}`",
        ),
        (
            "refuse_keys = { \"../s.json\" = [\"hooks\"] }\n",
            "`refuse_keys` hold paths inside a project folder",
        ),
        (
            "keep_env_from = [\"~/.env\"]\n",
            "`keep_env_from` is set, but `keep_env` names no variable",
        ),
        (
            "per_name = { files = [\"~/c.toml\"], table = \"t\", args = [\"-c\", \"t.{name}\"] }\n",
            "`per_name` needs a `table` and `args` that name `{entries}`, the one table of \
             every name (`{name}`, one name an argument, is no longer taken",
        ),
    ] {
        let ws = widened(guard);
        let run = ws.run(&["--backend", "acp", "hello"]);
        run.expect_code(2);
        assert!(run.stderr().contains(why), "{guard}: {}", run.stderr());
    }
    let ws = Workspace::new();
    ws.add_config(
        "[backends.h]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:9\"\n\
         [backends.h.guard]\nargs = [\"x\"]\n",
    );
    let run = ws.run(&["--backend", "h", "hello"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("key `guard`: an HTTP backend runs no program"),
        "{}",
        run.stderr()
    );
}

#[test]
fn an_agent_clis_guard_is_passed_in_loop_mode_only() {
    // As the gemini preset's: in `loop` mode agent-loop runs the tools, whatever the
    // approval, so its own are denied by a file it is given; `own` mode is left as it is.
    let ws = Workspace::new();
    let entry = |name: &str, extra: &str| {
        format!(
            "[backends.{name}]\ncommand = \"sh\"\n\
             args = [\"-c\", 'cat \"$1\" 2>/dev/null && echo \" $1\" || echo unguarded', \"sh\"]\n\
             {extra}\n[backends.{name}.guard]\nargs = [\"{{file}}\"]\nfile = \"denied\"\n"
        )
    };
    ws.add_config(&(entry("g", "") + &entry("own", "tools = \"own\"")));
    let run = ws.run(&["--backend", "g", "--yes", "hello"]);
    run.expect_code(0);
    let out = run.stdout();
    let (text, path) = out.trim().split_once(' ').unwrap();
    assert_eq!(text, "denied");
    assert!(!std::path::Path::new(path).exists(), "{path} is left");
    let run = ws.run(&["--backend", "own", "hello"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "unguarded\n");
}

#[test]
fn a_terminal_agents_settings_are_outranked_by_its_guard_too() {
    let guarded =
        "[backends.tui.guard]\nenv = { FAKE_TUI_ASK_FILE = \"{file}\" }\nfile = \"ask\"\n";
    for (guard, code, ran) in [("", 0, true), (guarded, 4, false)] {
        let ws = crate::pty::tui(guard);
        std::fs::create_dir_all(ws.path("home/.fake-tui")).unwrap();
        std::fs::write(
            ws.path("home/.fake-tui/settings.json"),
            r#"{"allow": true}"#,
        )
        .unwrap();
        let run = ws.run(&["--backend", "tui", "run touch made.txt"]);
        run.expect_code(code);
        assert_eq!(ws.work().join("made.txt").exists(), ran, "{}", run.stderr());
        ws.assert_no_leftovers();
    }
    let ws = crate::pty::tui("[backends.tui.guard]\nmeta = { a = 1 }\n");
    let run = ws.run(&["--backend", "tui", "hello"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("`meta` is for ACP agents"),
        "{}",
        run.stderr()
    );
}
