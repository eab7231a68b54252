//! Every REPL slash command and multi-line input, typed on a pseudo-terminal.

use crate::common::{Pty, Workspace};
use crate::repl::{dialogue_in, repl};

#[test]
fn commands_that_inspect_and_switch() {
    let ws = Workspace::new();
    ws.takes_models("fake");
    std::fs::write(ws.work().join("hello.txt"), "hi\n").unwrap();
    ws.reply(0, "noted\nTokens: 100 in, 5 out\n");
    let keys = "/help\nsave my work\n/tokens\n/history 2\n/backend\n/backend demo\n/model foo\nlist the files here\n\
                /backend fake\n/model big-model\n/model\n/tools\n/yes on\n/yes off\n/frobnicate\n/backend nope\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake --session slash", keys);
    assert_eq!(code, 0, "{screen}");
    for expected in [
        "  /retry              send the last message again",
        "Multi-line input: end a line with \\ to continue it",
        "[session slash: 1 turn, tokens in 100 / out 5]",
        "You: save my work\nAssistant: noted",
        "[backend fake; configured: aider, claude, claude-acp, claude-api, codex, codex-acp, coro, crush, deepseek, demo, fake, gemini, gemini-acp, gemini-tui, llm, mistral, ollama, ollama-cli, openai, opencode, opencode-acp, openrouter, qwen, qwen-acp, qwen-tui]",
        "[backend demo]",
        "error: backend demo takes no model: its entry has no `model_args`, nor {model} in its `args`",
        "[tool ls] .",
        "[model big-model]",
        "  bash   asks first",
        "  read   runs without asking",
        "[tools run without asking]",
        "[tools ask before they change things]",
        "error: unknown command /frobnicate; the commands are: /help, /image, /exit, /clear",
        "error: no backend named `nope`",
    ] {
        assert!(
            screen.contains(expected),
            "missing {expected:?} in\n{screen}"
        );
    }
    // "save my work" was a prompt, not a command.
    assert!(ws.prompt(1).contains("User: save my work"));
    // After switching back, the fake backend gets the demo's turn in its history.
    let session =
        std::fs::read_to_string(ws.path("data/agent-loop/sessions/slash/session.json")).unwrap();
    assert!(session.contains("\"model\": \"big-model\""), "{session}");
    assert!(session.contains("list the files here"), "{session}");
}

#[test]
fn save_load_undo_retry_export() {
    let ws = Workspace::new();
    ws.reply(1, "first answer\n");
    ws.reply(2, "second answer\n");
    ws.reply(3, "second answer again\n");
    ws.reply(4, "after load\n");
    let keys = "one\ntwo\n/retry\n/save snap\n/save snap\n/undo\n/history\n/export out.md\n/export out.json\n/export out.txt\n\
                /load snap\nthree\n/load missing\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake --session main", keys);
    assert_eq!(code, 0, "{screen}");
    // /retry resent "two" without the answer it got.
    let third = ws.prompt(3);
    assert!(
        third.contains("User: two") && !third.contains("second answer"),
        "{third}"
    );
    assert!(screen.contains("[retrying: two]"), "{screen}");
    assert!(
        screen.contains("[saved a copy as session snap]"),
        "{screen}"
    );
    // A second /save of the name does not write over the first copy.
    assert!(
        screen.contains("error: session snap exists already"),
        "{screen}"
    );
    assert!(screen.contains("[dropped the last turn]"), "{screen}");
    // After /undo the export holds only the first turn.
    let md = std::fs::read_to_string(ws.work().join("out.md")).unwrap();
    assert!(
        md.starts_with("# Session main\n\n## User\n\none\n\n## Assistant\n\nfirst answer\n"),
        "{md}"
    );
    assert!(!md.contains("two"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.work().join("out.json")).unwrap())
            .unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    assert!(
        screen.contains("error: /export out.txt: name a .md or .json file"),
        "{screen}"
    );
    // /load brought back the snapshot, which has the retried second turn.
    let fourth = ws.prompt(4);
    assert!(
        fourth.contains("User: two\n\nAssistant: second answer again\n\nUser: three"),
        "{fourth}"
    );
    assert!(
        screen.contains("error: no session named `missing`"),
        "{screen}"
    );
}

#[test]
fn commit_goes_through_bash_and_its_approval() {
    let ws = Workspace::new();
    let git = |args: &[&str]| {
        let ok = ws
            .hermetic(&mut std::process::Command::new("git"))
            .args(args)
            .current_dir(ws.work())
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
        String::from_utf8_lossy(&ok.stdout).into_owned()
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "Test"]);
    std::fs::write(ws.work().join("file.txt"), "content\n").unwrap();
    let steps = [
        ("agent-loop with backend", 1, "/commit it's the first\n"),
        ("[n]o", 1, "y\n/commit nothing to do\n"),
        ("[n]o", 2, "n\n/exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend fake", &steps);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("  | git add -A && git commit -m 'it'\\''s the first'\n"),
        "{screen}"
    );
    assert_eq!(git(&["log", "--format=%s"]).trim(), "it's the first");
    assert!(screen.contains("not run: the user said no"), "{screen}");
}

/// Plain reading, and the line editor (terminfo), which keeps both forms.
#[test]
fn multi_line_input() {
    for display in ["plain", "terminfo"] {
        let ws = Workspace::new();
        ws.reply(0, "ok\n");
        let keys =
            "first line \\\nsecond line\n\"\"\"\nblock one\n\n  block three\n\"\"\"\n/exit\n";
        let steps = [("agent-loop with backend", 1, keys)];
        let (code, screen) = dialogue_in(&ws, display, "--backend fake", &steps);
        assert_eq!(code, 0, "{display}: {screen}");
        let sent = [
            "User: first line \nsecond line\n",
            "User: block one\n\n  block three\n",
        ];
        for (n, sent) in sent.into_iter().enumerate() {
            let prompt = ws.prompt(n + 1);
            assert!(prompt.contains(sent), "{display}: {prompt}");
        }
    }
}

#[test]
fn context_and_memory_commands() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let keys = "one\ntwo\nthree\n/context\n/context sliding:1\nfour\n/context sometimes\n/memory use tabs\n/tokens\n/memory\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake", keys);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("[context continue: 6 messages, "),
        "{screen}"
    );
    assert!(screen.contains("[context mode sliding:1]"), "{screen}");
    // With sliding:1 the fourth prompt carries only the current message.
    let fourth = ws.prompt(4);
    assert!(
        fourth.contains("User: four") && !fourth.contains("User: three"),
        "{fourth}"
    );
    assert!(screen.contains("error: unknown context mode"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(ws.work().join("AGENTS.md")).unwrap(),
        "* use tabs\n"
    );
    assert!(screen.contains("[added to "), "{screen}");
    assert!(screen.contains("[context sliding:1: "), "{screen}");
    assert!(
        screen.contains("error: /memory needs an argument"),
        "{screen}"
    );
}

/// `/compact` summarises what came before the last turn with the backend; the next request
/// carries the summary in place of those messages. The summary call's tokens are counted.
#[test]
fn compact_summarises_the_older_turns() {
    let ws = Workspace::new();
    ws.reply(1, "first answer\n");
    ws.reply(2, "second answer\n");
    ws.reply(3, "We talked about apples.\nTokens: 100 in, 7 out\n");
    ws.reply(4, "third answer\n");
    let keys = "/compact\none about apples\ntwo\n/compact\nthree\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake --session packed", keys);
    assert_eq!(code, 0, "{screen}");
    for expected in [
        "[nothing to compact: the conversation holds at most one turn]",
        "[compacted 2 messages into a summary; context mode summarize]",
    ] {
        assert!(
            screen.contains(expected),
            "missing {expected:?} in\n{screen}"
        );
    }
    assert!(
        ws.prompt(3).contains("User: one about apples"),
        "{}",
        ws.prompt(3)
    );
    let fourth = ws.prompt(4);
    assert!(fourth.contains("We talked about apples."), "{fourth}");
    assert!(!fourth.contains("first answer"), "{fourth}");
    assert!(
        fourth.contains("User: two") && fourth.contains("User: three"),
        "{fourth}"
    );
    // The only call that reported tokens is the summary's.
    assert!(
        screen.contains("[context: fake summarised 2 older messages]")
            && screen.contains("[tokens in 100 / out 7]"),
        "{screen}"
    );
    let usage = &ws.saved_session()["usage"];
    assert_eq!(
        (&usage["input"], &usage["output"]),
        (&100.into(), &7.into())
    );
    let logged = ws.session_log("packed");
    let usage: Vec<_> = logged.iter().filter(|r| r["event"] == "usage").collect();
    assert_eq!(usage.len(), 1, "{logged:?}");
    assert_eq!(usage[0]["input_tokens"], 100);
    assert_eq!(usage[0]["for"], "summary");
}

/// `/export` into a folder that is not there is refused, as `>` in a shell is: a typo does
/// not make a tree.
#[test]
fn export_into_a_missing_folder_is_refused() {
    let ws = Workspace::new();
    ws.reply(1, "first answer\n");
    let keys = "one\n/export nodir/deeper/out.md\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake", keys);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("no folder nodir/deeper"), "{screen}");
    assert!(!ws.work().join("nodir").exists());
}

/// `/export` onto a file that is there (Tab completes to one) is refused, naming the file and
/// the way to replace it; `/export --force` does replace it. A guessed `-f` is refused, not
/// taken as the start of a file name.
#[test]
fn export_over_a_file_needs_force() {
    let ws = Workspace::new();
    ws.reply(1, "first answer\n");
    std::fs::write(ws.work().join("README.md"), "mine\n").unwrap();
    let keys = "one\n/export README.md\n/export -f README.md\n/export --force README.md\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake", keys);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains(
            "error: /export -f: unknown option (/export --force FILE replaces a file that is \
             there; write a FILE whose name starts with - as ./-f...)"
        ),
        "{screen}"
    );
    assert!(!ws.work().join("-f README.md").exists());
    assert!(
        screen.contains(
            "error: /export README.md: README.md is there already; to replace it, \
             /export --force README.md"
        ),
        "{screen}"
    );
    assert!(
        screen.contains("[wrote 2 messages to README.md]"),
        "{screen}"
    );
    let md = std::fs::read_to_string(ws.work().join("README.md")).unwrap();
    assert!(md.contains("first answer"), "{md}");
}

/// A write that fails loses nothing: `/export --force` writes a temporary file beside the
/// old one and puts it in its place only once written whole, and a new file that could not
/// be written whole is not left half-written. The failure is a file size limit set on the
/// running REPL (SIGXFSZ ignored, so the write fails with EFBIG), which binds root too.
#[test]
fn an_export_that_fails_to_write_leaves_the_old_file_whole() {
    let ws = Workspace::new();
    ws.reply(1, format!("first answer {}\n", "x".repeat(1500)));
    std::fs::write(ws.work().join("README.md"), "mine\n").unwrap();
    let setup = "stty -onlcr; trap '' XFSZ; echo $$ > ../repl.pid";
    let mut pty = Pty::spawn_after(
        &ws,
        &[],
        setup,
        &["--display", "plain", "--backend", "fake"],
    );
    pty.wait_for("agent-loop with backend");
    pty.send("one\n");
    pty.wait_for_nth("You: ", 2);
    let pid: i32 = std::fs::read_to_string(ws.path("repl.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let pid = rustix::process::Pid::from_raw(pid).unwrap();
    let small = rustix::process::Rlimit {
        current: Some(1024),
        maximum: None,
    };
    rustix::process::prlimit(Some(pid), rustix::process::Resource::Fsize, small).unwrap();
    pty.send("/export --force README.md\n/export new.md\n/exit\n");
    let (code, bytes) = pty.finish();
    let screen = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 0, "{screen}");
    for name in ["README.md", "new.md"] {
        let failed = format!("error: cannot write {name}: File too large");
        assert!(screen.contains(&failed), "{failed:?} in {screen}");
    }
    let readme = std::fs::read_to_string(ws.work().join("README.md")).unwrap();
    assert_eq!(readme, "mine\n");
    let left: Vec<_> = std::fs::read_dir(ws.work())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["README.md"]);
}

/// `--model` for a backend with nowhere to put a model is said to be unused, not dropped
/// unsaid; the run goes on.
#[test]
fn a_model_flag_for_a_backend_that_takes_none_is_told() {
    let ws = Workspace::new();
    let run = ws.run(&["--model", "foo", "--backend", "demo", "list the files here"]);
    run.expect_code(0);
    assert!(
        run.stderr().contains(
            "warning: backend demo takes no model: its entry has no `model_args`, nor {model} in \
             its `args`: --model is not used"
        ),
        "{}",
        run.stderr()
    );
}
