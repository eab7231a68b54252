//! The offline demo backend, run exactly as the README tells a new user to.

use crate::common::Workspace;

#[test]
fn lists_the_files_through_a_real_subprocess_round_trip() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("hello.txt"), "hi\n").unwrap();
    let run = ws.run(&["--backend", "demo", "list the files here"]);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.starts_with("Done. For \"list the files here\" the tool answered (1 line):"),
        "{out}"
    );
    assert!(out.contains("hello.txt  (3 bytes)"), "{out}");
    let err = run.stderr();
    assert!(
        err.contains("I will look at the files here first."),
        "{err}"
    );
    assert!(err.contains("[tool ls] ."), "{err}");
    assert!(err.contains("[tokens in "), "{err}");
    // The banner line is a skip_lines match, not part of the answer.
    assert!(
        !out.contains("demo-agent v1") && !err.contains("demo-agent v1"),
        "{out}{err}"
    );
}

#[test]
fn runs_a_command_with_yes() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "demo", "--yes", "run echo hello from bash"]);
    run.expect_code(0);
    assert!(
        run.stdout().contains("  hello from bash"),
        "{}",
        run.stdout()
    );
    assert!(
        run.stderr().contains("[tool bash] echo hello from bash"),
        "{}",
        run.stderr()
    );
}

#[test]
fn reads_a_file() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.md"), "first\nsecond\n").unwrap();
    let run = ws.run(&["--backend", "demo", "read notes.md"]);
    run.expect_code(0);
    assert!(
        run.stdout().contains("1\tfirst") && run.stdout().contains("2\tsecond"),
        "{}",
        run.stdout()
    );
}

#[test]
fn a_question_it_cannot_answer_gets_what_it_can_do_not_a_listing() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "demo", "what is the capital of France?"]);
    run.expect_code(0);
    let (out, err) = (run.stdout(), run.stderr());
    assert!(!err.contains("[tool "), "{err}");
    for phrase in ["list the files here", "read FILE", "run COMMAND", "--yes"] {
        assert!(out.contains(phrase), "{phrase} missing from\n{out}");
    }
    assert!(out.contains("\"what is the capital of France?\""), "{out}");
}

#[test]
fn uses_every_line_of_a_multi_line_task() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.md"), "first\n").unwrap();
    let run = ws.run(&["--backend", "demo", "Please help me.\nread notes.md"]);
    run.expect_code(0);
    assert!(run.stdout().contains("1\tfirst"), "{}", run.stdout());
    assert!(
        run.stdout().contains("\"Please help me.\nread notes.md\""),
        "{}",
        run.stdout()
    );
}
