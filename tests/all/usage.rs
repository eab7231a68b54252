//! Bad usage is refused before anything is spent, with exit 2: a one-word task that is a
//! slip for a subcommand (`agent-loop sesions` would send "sesions" to the backend as a
//! task), a task typed without quotes, and an `import-spec` without a readable spec.

use crate::common::Workspace;

#[test]
fn a_one_word_task_near_a_subcommand_is_refused_with_the_subcommand() {
    let ws = Workspace::new();
    ws.reply(0, "answered\n");
    for (slip, meant) in [
        ("sesions", "sessions"),
        ("backend", "backends"),
        ("doctr", "doctor"),
        ("confg", "config"),
        ("completion", "completions"),
        ("import-spc", "import-spec"),
    ] {
        let run = ws.run(&["--backend", "fake", slip]);
        run.expect_code(2);
        assert!(
            run.stderr().contains(&format!("did you mean `{meant}`?")),
            "{slip}: {}",
            run.stderr()
        );
        assert!(
            run.stderr().contains(&format!("agent-loop -- {slip}")),
            "{}",
            run.stderr()
        );
        assert_eq!(run.stdout(), "");
    }
    assert_eq!(ws.runs(), 0, "a refused task reached the backend");
    // As JSON lines when those were asked for.
    let run = ws.run(&["--backend", "fake", "--output", "jsonl", "sesions"]);
    run.expect_code(2);
    let record: serde_json::Value = serde_json::from_str(run.stdout().trim()).unwrap();
    assert_eq!(record["event"], "error", "{record}");
    assert_eq!(ws.runs(), 0);
}

#[test]
fn after_double_dash_or_as_more_than_one_word_it_is_a_task() {
    let ws = Workspace::new();
    ws.reply(0, "answered\n");
    for args in [
        &["--backend", "fake", "--", "sesions"][..],
        &["--backend", "fake", "backend is slow: why?"],
        // Words far from every subcommand are tasks.
        &["--backend", "fake", "refactor"],
        &["--backend", "fake", "hello"],
        &["--backend", "fake", "test"],
    ] {
        let run = ws.run(args);
        run.expect_code(0);
        assert_eq!(run.stdout(), "answered\n", "{args:?}");
    }
    assert_eq!(ws.runs(), 5);
    assert!(ws.prompt(1).contains("sesions"), "{}", ws.prompt(1));
}

/// A task typed without quotes is refused with the words quoted, not clap's "unrecognized
/// subcommand": nor run as a subcommand when one of its later words is one.
#[test]
fn an_unquoted_task_is_refused_with_the_quoted_task() {
    let ws = Workspace::new();
    ws.reply(0, "answered\n");
    for (args, quoted, word) in [
        (
            &["--backend", "fake", "list", "the", "files", "here"][..],
            "agent-loop \"list the files here\"",
            "`the`",
        ),
        (
            &["list", "--backend", "fake", "the", "files"],
            "agent-loop \"list the files\"",
            "`the`",
        ),
        (
            &["--backend", "fake", "explain", "sessions"],
            "agent-loop \"explain sessions\"",
            "`sessions`",
        ),
    ] {
        let run = ws.run(args);
        run.expect_code(2);
        let err = run.stderr();
        assert!(
            err.contains(&format!(
                "the task is one argument: put it in quotes, {quoted}"
            )) && err.contains(&format!("{word} after the task was read as a subcommand")),
            "{args:?}: {err}"
        );
        assert_eq!(run.stdout(), "", "{args:?}");
    }
    assert_eq!(ws.runs(), 0);
}

#[test]
fn import_spec_usage_errors_exit_2() {
    let ws = Workspace::new();
    let missing = ws.path("no-such-spec.pl");
    let run = ws.run(&["import-spec", missing.to_str().unwrap()]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("cannot read the spec") && run.stderr().contains("no-such-spec.pl"),
        "{}",
        run.stderr()
    );
    // A folder is not a spec either; no file at all is clap's usage error.
    ws.run(&["import-spec", ws.work().to_str().unwrap()])
        .expect_code(2);
    ws.run(&["import-spec"]).expect_code(2);
}
