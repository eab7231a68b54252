//! Fan-out: `--backend a,b` and `/compare a,b TASK` run one task on two fake backends at once,
//! each writing in its own copy of the working directory; the answers come one after another
//! under headings, and the conversation keeps the first, or the one `/pick N` names.

use std::path::PathBuf;

use crate::common::{fixture, Run, Workspace};
use crate::repl::repl;

/// Two scripted backends, `a` and `b`, each with its own script folder: a `write` call of
/// `out.txt`, then an answer.
fn two_backends() -> Workspace {
    let ws = Workspace::new();
    for name in ["a", "b"] {
        let dir = ws.path(&format!("fake-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("reply.1"),
            format!("<tool_call>{{\"name\":\"write\",\"arguments\":{{\"path\":\"out.txt\",\"content\":\"from {name}\"}}}}</tool_call>\nTokens: 10 in, 2 out\n"),
        )
        .unwrap();
        std::fs::write(
            dir.join("reply.2"),
            format!("Answer {name}.\nTokens: 20 in, 3 out\n"),
        )
        .unwrap();
        std::fs::write(dir.join("reply.default"), format!("Later {name}.\n")).unwrap();
        ws.add_config(&format!(
            "\n[backends.{name}]\ncommand = \"{}\"\ntokens_regex = 'Tokens: (?P<input>\\d+) in, (?P<output>\\d+) out'\nenv = {{ FAKE_DIR = \"{}\" }}\n",
            fixture("agents/scripted.sh").display(),
            dir.display()
        ));
    }
    std::fs::write(ws.work().join("seed.txt"), "seed\n").unwrap();
    ws
}

/// Runs agent-loop with `args` in `ws`, the comparison's copies going under `ws`'s `tmp`.
fn run_in_tmp(ws: &Workspace, args: &[&str]) -> Run {
    std::fs::create_dir_all(ws.path("tmp")).unwrap();
    let mut cmd = ws.cmd(args);
    cmd.env("TMPDIR", ws.path("tmp"));
    ws.run_cmd(cmd)
}

/// The folder a heading says backend N worked in.
fn folder(text: &str, n: usize) -> PathBuf {
    let start = text
        .find(&format!("=== [{n}] "))
        .unwrap_or_else(|| panic!("no heading {n} in {text}"));
    let line = text[start..].lines().next().unwrap();
    let path = line.split("worked in ").nth(1).unwrap();
    PathBuf::from(path.trim_end_matches(" ==="))
}

#[test]
fn backend_list_runs_each_in_its_own_folder_and_keeps_the_first() {
    let ws = two_backends();
    let run = run_in_tmp(
        &ws,
        &["--backend", "a,b", "--yes", "--session", "fan", "write it"],
    );
    run.expect_code(0);
    let out = run.stdout();
    // The answers in the order the backends were named, each under its heading.
    let a = out.find("=== [1] a: ").expect(&out);
    let answer_a = out.find("Answer a.").expect(&out);
    let b = out.find("=== [2] b: ").expect(&out);
    let answer_b = out.find("Answer b.").expect(&out);
    assert!(a < answer_a && answer_a < b && b < answer_b, "{out}");
    assert!(out.contains("tokens in 30 / out 5"), "{out}");
    // Each wrote in its own copy of the working directory, which holds the original files.
    for (n, name) in [(1, "a"), (2, "b")] {
        let dir = folder(&out, n);
        assert!(dir.starts_with(ws.path("tmp")), "{}", dir.display());
        assert_eq!(
            std::fs::read_to_string(dir.join("out.txt")).unwrap(),
            format!("from {name}")
        );
        assert!(dir.join("seed.txt").is_file());
    }
    assert!(
        !ws.work().join("out.txt").exists(),
        "the real folder is untouched"
    );
    assert!(
        run.stderr().contains("[kept answer 1 (a)]\n"),
        "{}",
        run.stderr()
    );
    // `/pick` is a REPL command: a one-shot run does not offer it.
    assert!(!run.stderr().contains("/pick"), "{}", run.stderr());
    let session =
        std::fs::read_to_string(ws.path("data/agent-loop/sessions/fan/session.json")).unwrap();
    assert!(
        session.contains("Answer a.") && !session.contains("Answer b."),
        "{session}"
    );
    // Both backends' tokens are the session's, each under its own name.
    let session: serde_json::Value = serde_json::from_str(&session).unwrap();
    assert_eq!(session["usage"]["input"], 60, "{session}");
    for name in ["a", "b"] {
        let spent = &session["usage_by_backend"][name];
        assert_eq!(
            (&spent["input"], &spent["output"]),
            (&30.into(), &5.into()),
            "{session}"
        );
    }
}

#[test]
fn compare_and_pick_in_the_repl() {
    let ws = two_backends();
    let keys = "/compare a,b write it\n/pick 2\n/pick 7\n/history 1\n/compare a\n/exit\n";
    let (code, screen) = repl(&ws, "--backend a --yes --session cmp", keys);
    assert_eq!(code, 0, "{screen}");
    for expected in [
        "[kept answer 1 (a); /pick N keeps another]",
        "[kept answer 2 (b)]",
        "error: /pick takes a number from 1 to 2",
        "Assistant: Answer b.",
        "error: `a`: name at least two backends",
    ] {
        assert!(
            screen.contains(expected),
            "missing {expected:?} in\n{screen}"
        );
    }
    let (first, second) = (folder(&screen, 1), folder(&screen, 2));
    assert_eq!(
        std::fs::read_to_string(first.join("out.txt")).unwrap(),
        "from a"
    );
    assert_eq!(
        std::fs::read_to_string(second.join("out.txt")).unwrap(),
        "from b"
    );
    let _ = std::fs::remove_dir_all(first.parent().unwrap());
    let session =
        std::fs::read_to_string(ws.path("data/agent-loop/sessions/cmp/session.json")).unwrap();
    assert!(
        session.contains("Answer b.") && !session.contains("Answer a."),
        "{session}"
    );
    // No escape byte and no bare carriage return from the comparison.
    assert!(!screen.contains('\x1b'), "{screen}");
}

#[test]
fn switching_backend_mid_conversation_sends_the_history_in_the_new_format() {
    let ws = two_backends();
    // `b` writes its conversation as XML; `a` as plain text.
    let config = std::fs::read_to_string(ws.path("backends.toml")).unwrap();
    ws.config(&config.replace("[backends.b]\n", "[backends.b]\ncontext_format = \"xml\"\n"));
    std::fs::write(ws.path("fake-a/reply.1"), "Plain answer.\n").unwrap();
    std::fs::write(ws.path("fake-b/reply.1"), "XML answer.\n").unwrap();
    let keys = "first question\n/backend b\nsecond question\n/exit\n";
    let (code, screen) = repl(&ws, "--backend a --session sw", keys);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("[backend b]"), "{screen}");
    let prompt = std::fs::read_to_string(ws.path("fake-b/prompt.1")).unwrap();
    for part in [
        "<message role=\"user\">\nfirst question",
        "<message role=\"assistant\">\nPlain answer.",
        "<message role=\"user\">\nsecond question",
    ] {
        assert!(prompt.contains(part), "missing {part:?} in\n{prompt}");
    }
}

#[test]
fn approvals_are_asked_one_backend_at_a_time_and_named() {
    let ws = two_backends();
    // No --yes and no terminal: each write is asked for, and refused.
    let run = run_in_tmp(&ws, &["--backend", "a,b", "--no-save", "write it"]);
    // Every call refused, in every backend: the exit code says nothing ran.
    run.expect_code(4);
    let err = run.stderr();
    assert!(
        err.contains("[1] a asks:") && err.contains("[2] b asks:"),
        "{err}"
    );
    for n in [1, 2] {
        assert!(!folder(&run.stdout(), n).join("out.txt").exists());
    }
    // The model was told why, in each backend's own conversation.
    let prompt = std::fs::read_to_string(ws.path("fake-b/prompt.2")).unwrap();
    assert!(prompt.contains("cannot ask for approval"), "{prompt}");
}

/// A FIFO in the working folder is left out of each backend's copy: opening it would wait for
/// a writer for ever.
#[test]
fn a_fifo_in_the_folder_is_left_out_of_the_copies() {
    let ws = two_backends();
    std::fs::create_dir_all(ws.path("tmp")).unwrap();
    let fifo = ws.work().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()));
    // Were a copy to open the FIFO, this writer lets each go on (an empty file) rather than
    // hang the test; it is let go below.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (fifo, done) = (fifo.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                drop(std::fs::OpenOptions::new().write(true).open(&fifo));
            }
        })
    };
    let mut cmd = ws.cmd(&["--backend", "a,b", "--yes", "write it"]);
    cmd.env("TMPDIR", ws.path("tmp"));
    let run = ws.run_cmd(cmd);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    use std::os::unix::fs::OpenOptionsExt;
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(0o4000) // O_NONBLOCK: lets the writer above go, if it still waits.
        .open(&fifo);
    writer.join().unwrap();
    drop(reader);
    run.expect_code(0);
    let out = run.stdout();
    for n in [1, 2] {
        let copy = folder(&out, n);
        assert!(copy.join("seed.txt").exists(), "{}", copy.display());
        assert!(
            copy.join("fifo").symlink_metadata().is_err(),
            "{}",
            copy.display()
        );
    }
}

/// A working folder past the copy cap is refused before a file that passes it is copied, and
/// the comparison's folder is removed.
#[test]
fn a_folder_too_big_to_copy_is_refused_before_copying() {
    let ws = two_backends();
    std::fs::create_dir_all(ws.path("tmp")).unwrap();
    let big = std::fs::File::create(ws.work().join("big.bin")).unwrap();
    big.set_len(300 * 1024 * 1024).unwrap(); // sparse: nothing written
    let mut cmd = ws.cmd(&["--backend", "a,b", "--yes", "write it"]);
    cmd.env("TMPDIR", ws.path("tmp"));
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(
        run.stderr().contains("more than 200 MB"),
        "{}",
        run.stderr()
    );
    let left: Vec<_> = std::fs::read_dir(ws.path("tmp")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `/pick` applies only to the conversation the comparison left: after `/undo`, `/clear` or
/// `/load` it would write the comparison's conversation over another one (another session's,
/// on disk). It says there is nothing to pick; two picks in a row still go back and forth.
#[test]
fn pick_after_the_conversation_moved_on_has_nothing_to_pick() {
    let ws = two_backends();
    for name in ["a", "b"] {
        for n in [1, 2] {
            std::fs::remove_file(ws.path(&format!("fake-{name}/reply.{n}"))).unwrap();
        }
    }
    ws.run(&["--backend", "a", "-s", "mywork", "earlier task"])
        .expect_code(0);
    let keys = "/compare a,b one\n/pick 2\n/pick 1\n/undo\n/pick 2\n\
                /compare a,b two\n/clear\n/pick 2\n\
                /compare a,b three\n/load mywork\n/pick 2\n/exit\n";
    let (code, screen) = repl(&ws, "--backend a --session cmp", keys);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("[kept answer 2 (b)]\n") && screen.contains("[kept answer 1 (a)]\n"),
        "{screen}"
    );
    // No session took b's answer: each holds what its own turns left.
    let sessions = ws.path("data/agent-loop/sessions");
    for entry in std::fs::read_dir(&sessions).unwrap() {
        let file = entry.unwrap().path().join("session.json");
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains("Later b."), "{}: {text}", file.display());
    }
    let mywork = std::fs::read_to_string(sessions.join("mywork/session.json")).unwrap();
    let mywork: serde_json::Value = serde_json::from_str(&mywork).unwrap();
    let messages = mywork["conversation"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{mywork}");
    assert!(mywork.to_string().contains("earlier task"), "{mywork}");
    let nothing = "error: /pick: nothing to pick: it keeps another answer of the last /compare";
    assert_eq!(screen.matches(nothing).count(), 3, "{screen}");
}

/// A refused tool call counts against the answer kept, not against another backend's that
/// was dropped: the run's exit code follows the kept answer.
#[test]
fn the_exit_code_follows_the_kept_answer() {
    let ws = two_backends();
    std::fs::write(ws.path("fake-b/reply.1"), "Answer b.\n").unwrap();
    // No --yes and no terminal: a's write is refused; b answers without a tool.
    for (list, code) in [("b,a", 0), ("a,b", 4)] {
        for name in ["a", "b"] {
            let _ = std::fs::remove_file(ws.path(&format!("fake-{name}/count")));
        }
        let run = run_in_tmp(&ws, &["--backend", list, "--no-save", "write it"]);
        let err = run.stderr();
        assert!(
            err.contains("[2] a asks:") || err.contains("[1] a asks:"),
            "{err}"
        );
        run.expect_code(code);
        let not_done = "[not done: 1 tool call refused";
        assert_eq!(err.contains(not_done), code == 4, "{list}: {err}");
    }
}

/// Each heading says what its backend cost, as the session's footer does.
#[test]
fn the_heading_shows_the_cost() {
    let ws = two_backends();
    let config = std::fs::read_to_string(ws.path("backends.toml")).unwrap();
    ws.config(&config.replace(
        "[backends.a]\n",
        "[backends.a]\nprice_input_per_mtok = 1000.0\nprice_output_per_mtok = 0.0\n",
    ));
    let run = run_in_tmp(&ws, &["--backend", "a,b", "--yes", "--no-save", "write it"]);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.contains("tokens in 30 / out 5, $0.0300; worked in"),
        "{out}"
    );
    // b has no price: its heading names none.
    let b = &out[out.find("=== [2] b: ").expect(&out)..];
    assert!(
        b.lines().next().unwrap().ends_with(" ===") && !b.contains('$'),
        "{out}"
    );
}

/// `-q` is the final answer alone on stdout: with several backends, the one kept.
#[test]
fn quiet_prints_only_the_kept_answer() {
    let ws = two_backends();
    let run = run_in_tmp(
        &ws,
        &["--backend", "a,b", "--yes", "--no-save", "-q", "write it"],
    );
    run.expect_code(0);
    assert_eq!(run.stdout(), "Answer a.\n");
    assert_eq!(run.stderr(), "");
    // Both still ran, each in its copy.
    let compare = std::fs::read_dir(ws.path("tmp")).unwrap().next().unwrap();
    for copy in ["1-a", "2-b"] {
        let out = compare.as_ref().unwrap().path().join(copy).join("out.txt");
        assert!(out.is_file(), "{}", out.display());
    }
}

/// `/compact` after a comparison summarises the turns before it, which every answer shares:
/// `/pick` still keeps another answer, and the summary with it (the next request carries the
/// summary, not the turns it replaced), back and forth.
#[test]
fn pick_after_compact_keeps_the_summary() {
    let ws = two_backends();
    for name in ["a", "b"] {
        for n in [1, 2] {
            std::fs::remove_file(ws.path(&format!("fake-{name}/reply.{n}"))).unwrap();
        }
    }
    // a's runs: the first turn, its lane, the summary, the turn after the picks.
    std::fs::write(ws.path("fake-a/reply.3"), "We talked about one.\n").unwrap();
    let keys = "one\n/compare a,b two\n/compact\n/pick 2\n/pick 1\n/pick 2\nthree\n/exit\n";
    let (code, screen) = repl(&ws, "--backend a --session cmp", keys);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("[compacted 2 messages into a summary"),
        "{screen}"
    );
    assert_eq!(
        screen.matches("[kept answer 2 (b)]\n").count(),
        2,
        "{screen}"
    );
    let prompt = std::fs::read_to_string(ws.path("fake-a/prompt.4")).unwrap();
    let sent = &prompt[prompt.find("# Conversation").expect(&prompt)..];
    assert_eq!(
        sent,
        "# Conversation\n\nSummary of earlier messages:\nWe talked about one.\n\n\
         User: two\n\nAssistant: Later b.\n\nUser: three\n\nAssistant:"
    );
}
