//! `agent-loop doctor [BACKEND]` ends with a verdict a person or a script can read: a last
//! line `ok` with exit 0, or `failed: WHY` with exit 1 (the backend failed) or 2 (bad usage).

use crate::common::{fixture, Run, Workspace, TOKENS};

fn last_line(run: &Run) -> String {
    run.stdout().lines().last().unwrap_or_default().to_string()
}

#[test]
fn a_working_backend_ends_with_ok() {
    let ws = Workspace::new();
    ws.reply(0, "The answer is 42.\n");
    for args in [&["doctor", "demo"][..], &["doctor", "fake"]] {
        let run = ws.run(args);
        run.expect_code(0);
        assert_eq!(last_line(&run), "ok", "{args:?}: {}", run.stdout());
    }
}

/// The command line shown is the one run: the model in it, the prompt a placeholder.
#[test]
fn the_command_line_shows_the_model_the_run_uses() {
    let ws = Workspace::new();
    ws.reply(0, "The answer is 42.\n");
    ws.reply(1, "The answer is 42.\n");
    ws.add_config(&format!(
        "[backends.modelled]\ncommand = \"{}\"\nargs = [\"-p\", \"{{prompt}}\"]\n\
         model = \"m-1\"\nmodel_args = [\"--model\", \"{{model}}\"]\n{TOKENS}",
        fixture("agents/scripted.sh").display()
    ));
    let run = ws.run(&["doctor", "modelled"]);
    run.expect_code(0);
    let command = |run: &Run| {
        let line = run
            .stdout()
            .lines()
            .find(|l| l.starts_with("command: "))
            .map(String::from);
        line.unwrap_or_default()
    };
    assert!(
        command(&run).ends_with(" -p {prompt} --model m-1"),
        "{}",
        run.stdout()
    );
    let run = ws.run(&["--model", "m-2", "doctor", "modelled"]);
    run.expect_code(0);
    assert!(command(&run).ends_with(" --model m-2"), "{}", run.stdout());
}

/// A guard's arguments are part of the command line a run gives its agent, and the
/// variables it sets are named; `{file}` stays a placeholder (each run writes its own file).
/// With the agent's own tools there is no guard, and none is shown.
#[test]
fn the_command_line_shows_the_guard_a_run_adds() {
    let ws = Workspace::new();
    ws.reply(0, "The answer is 42.\n");
    ws.reply(1, "The answer is 42.\n");
    let entry = |name: &str, tools: &str| {
        format!(
            "[backends.{name}]\ncommand = \"{}\"\nargs = [\"-p\", \"{{prompt}}\"]\n\
             tools = \"{tools}\"\n{TOKENS}\n[backends.{name}.guard]\n\
             args = [\"--policy\", \"{{file}}\"]\n\
             env = {{ GUARD_SETTINGS = \"{{file}}\" }}\nfile = \"deny = true\"\n",
            fixture("agents/scripted.sh").display()
        )
    };
    ws.add_config(&(entry("guarded", "loop") + &entry("own", "own")));
    let run = ws.run(&["doctor", "guarded"]);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.lines()
            .any(|l| l.starts_with("command: ") && l.ends_with(" -p {prompt} --policy {file}")),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l == "guard sets: GUARD_SETTINGS"),
        "{out}"
    );
    let run = ws.run(&["doctor", "own"]);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        !out.contains("--policy") && !out.contains("guard sets"),
        "{out}"
    );
}

#[test]
fn without_a_name_it_checks_the_backend_a_run_would_use() {
    let ws = Workspace::new();
    ws.reply(0, "The answer is 42.\n");
    // The user's only backend that can run is `fake`: a run would take it.
    let run = ws.run(&["doctor"]);
    run.expect_code(0);
    assert!(
        run.stdout().starts_with("backend fake ("),
        "{}",
        run.stdout()
    );
    assert_eq!(last_line(&run), "ok");
    // The `backend` setting names it.
    let mut cmd = ws.cmd(&["doctor"]);
    cmd.env("AGENT_LOOP_BACKEND", "demo");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert!(
        run.stdout().starts_with("backend demo ("),
        "{}",
        run.stdout()
    );
    // None can run.
    ws.config("[backends.ghost]\ncommand = 'no-such-agent-cli-xyz'\n");
    let run = ws.run(&["doctor"]);
    run.expect_code(2);
    assert!(
        last_line(&run).starts_with("failed: no backend chosen, and none of the configured ones"),
        "{}",
        run.stdout()
    );
}

#[test]
fn a_failing_backend_ends_with_failed_and_why() {
    let ws = Workspace::new();
    // Exits 3.
    ws.reply(1, "half an answer\n");
    ws.fake_file("rc.1", "3\n");
    let run = ws.run(&["doctor", "fake"]);
    run.expect_code(1);
    assert_eq!(last_line(&run), "failed: the command exited with 3");
    assert!(run.stdout().contains("exit: 3"), "{}", run.stdout());
    // Prints nothing at all.
    ws.reply(2, "");
    let run = ws.run(&["doctor", "fake"]);
    run.expect_code(1);
    assert_eq!(
        last_line(&run),
        "failed: no answer was read from the output (see the sections above)"
    );
    // Not configured: bad usage.
    let run = ws.run(&["doctor", "fak"]);
    run.expect_code(2);
    assert!(
        last_line(&run).starts_with("failed: no backend named `fak` (did you mean `fake`?)"),
        "{}",
        run.stdout()
    );
    // Not installed.
    ws.add_config("[backends.ghost]\ncommand = 'no-such-agent-cli-xyz'\n");
    let run = ws.run(&["doctor", "ghost"]);
    assert_ne!(run.code(), 0);
    assert!(last_line(&run).starts_with("failed: "), "{}", run.stdout());
    assert!(
        last_line(&run).contains("no-such-agent-cli-xyz"),
        "{}",
        run.stdout()
    );
}

/// The command line can be pasted into a shell: an empty argument (claude's `--tools ""`)
/// is written `''`, not left out to shift the ones after it.
#[test]
fn the_command_line_keeps_an_empty_argument() {
    let ws = Workspace::new();
    ws.reply(0, "The answer is 42.\n");
    ws.add_config(&format!(
        "[backends.empty]\ncommand = \"{}\"\nargs = [\"-p\", \"{{prompt}}\", \"--tools\", \"\", \
         \"--strict\"]\n{TOKENS}",
        fixture("agents/scripted.sh").display()
    ));
    let run = ws.run(&["doctor", "empty"]);
    run.expect_code(0);
    assert!(
        run.stdout()
            .lines()
            .any(|l| l.starts_with("command: ") && l.ends_with(" -p {prompt} --tools '' --strict")),
        "{}",
        run.stdout()
    );
}
