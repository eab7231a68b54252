//! The agent CLI presets' command lines, through the built binary with fake agents in place of
//! the real CLIs: the model reaches each CLI's model flag only when one is given, the CLIs' own
//! tools are off in `loop` mode, a long conversation goes on stdin, and aider leaves the folder
//! as it found it. The recordings under `fixtures/<cli>/` were made with these same command
//! lines (`scripts/record-fixtures/preset.py` reads them from `backends.toml`): their
//! `.requests` files show what each real CLI then sent, their `.tree` files what it left.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common::{fixture, Run, Workspace};
use crate::presets::parse;

/// What the replaying agent was given: its arguments and its stdin.
struct Sent {
    args: Vec<String>,
    stdin: String,
}

impl Sent {
    fn has(&self, pair: [&str; 2]) -> bool {
        self.args.windows(2).any(|w| w == pair)
    }
}

/// A workspace whose `preset` runs `agent` (under `fixtures/agents/`) replaying `recording`.
fn workspace(preset: &str, agent: &str, extra_config: &str) -> Workspace {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.{preset}]\ncommand = \"{}\"\ntimeout_s = 20\n{extra_config}",
        fixture(&format!("agents/{agent}")).display()
    ));
    std::fs::create_dir_all(ws.path("tmp")).unwrap();
    ws
}

/// `agent-loop --backend PRESET FLAGS... TASK` replaying `recording`; TMPDIR is the
/// workspace's `tmp/`.
fn command(ws: &Workspace, preset: &str, recording: &str, flags: &[&str]) -> Command {
    let mut args = vec!["--backend", preset, "--no-save"];
    args.extend(flags);
    let mut cmd = ws.cmd(&args);
    cmd.env("REPLAY", fixture(recording))
        .env("REPLAY_SAVE", ws.path("fake/sent"))
        .env("TMPDIR", ws.path("tmp"));
    cmd
}

fn sent(ws: &Workspace) -> Sent {
    let text = std::fs::read_to_string(ws.path("fake/sent")).expect("the agent ran");
    let (args, stdin) = text
        .split_once("--- stdin ---\n")
        .expect("replay.sh's format");
    Sent {
        args: args
            .strip_suffix('\n')
            .unwrap_or(args)
            .split('\n')
            .map(String::from)
            .collect(),
        stdin: stdin.to_string(),
    }
}

fn run(preset: &str, recording: &str, flags: &[&str]) -> (Run, Sent) {
    let ws = workspace(preset, "replay.sh", "");
    let mut flags = flags.to_vec();
    flags.push("what is six times seven?");
    let run = ws.run_cmd(command(&ws, preset, recording, &flags));
    let sent = sent(&ws);
    (run, sent)
}

/// Each CLI preset, a recording its parsers read without an error, and its model flag.
const PRESETS: [(&str, &str, &str); 8] = [
    ("claude", "claude/json", "--model"),
    ("codex", "codex/json", "--model"),
    ("gemini", "gemini/json", "-m"),
    ("qwen", "qwen/json", "--model"),
    ("opencode", "opencode/json", "--model"),
    ("crush", "llm/plain", "--model"),
    ("aider", "aider/plain", "--model"),
    ("llm", "llm/plain", "-m"),
];

#[test]
fn the_model_reaches_each_clis_model_flag_only_when_given() {
    for (preset, recording, flag) in PRESETS {
        let (given, sent) = run(preset, recording, &["--model", "test-model"]);
        given.expect_code(0);
        assert!(sent.has([flag, "test-model"]), "{preset}: {:?}", sent.args);
        assert_eq!(
            sent.args.iter().filter(|a| *a == flag).count(),
            1,
            "{preset}: {:?}",
            sent.args
        );
        let (none, sent) = run(preset, recording, &[]);
        none.expect_code(0);
        if preset == "gemini" {
            // Its default model keeps gemini from asking a router model before each step.
            assert!(sent.has(["-m", "gemini-3.8-flash"]), "{:?}", sent.args);
        } else {
            assert!(
                !sent.args.iter().any(|a| a == flag),
                "{preset}: {:?}",
                sent.args
            );
        }
    }
}

#[test]
fn the_model_flags_reached_the_real_clis_providers() {
    for (cli, model) in [
        ("claude", "claude-sonnet-4-5"),
        ("codex", "other-model"),
        ("gemini", "gemini-2.5-flash"),
        ("qwen", "other-model"),
        ("opencode", "other-model"),
    ] {
        let requests = std::fs::read_to_string(fixture(&format!("{cli}/model.requests"))).unwrap();
        assert!(
            requests.contains(&format!("model={model} ")),
            "{cli}: {requests}"
        );
        assert_eq!(
            std::fs::read_to_string(fixture(&format!("{cli}/model.rc"))).unwrap(),
            "0\n"
        );
    }
    // gemini given a model sends one request per step: no router request before it.
    let gemini = std::fs::read_to_string(fixture("gemini/json.requests")).unwrap();
    assert_eq!(gemini.lines().count(), 1, "{gemini}");
}

#[test]
fn config_names_the_model_flag_as_the_origin() {
    let ws = Workspace::new();
    let run = ws.run(&["-m", "some-model", "config"]);
    run.expect_code(0);
    let line = run
        .stdout()
        .lines()
        .find(|l| l.starts_with("model "))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(
        line.contains("some-model") && line.ends_with("flag --model"),
        "{}",
        run.stdout()
    );
}

#[test]
fn the_clis_own_tools_are_off_in_loop_mode_and_on_with_tools_own() {
    let bypass = [
        "--yolo",
        "-y",
        "--dangerously-bypass-approvals-and-sandbox",
        "--dangerously-skip-permissions",
        "--auto",
    ];
    for (preset, recording, off) in [
        ("claude", "claude/json", ["--tools", ""]),
        ("codex", "codex/json", ["--disable", "shell_tool"]),
        ("codex", "codex/json", ["--sandbox", "read-only"]),
        // What your config (or a trusted project's) adds, run unasked in exec mode: an
        // installed plugin's MCP servers, a ChatGPT login's connectors, sub-agents, the
        // model's JavaScript, file copies.
        ("codex", "codex/json", ["--disable", "plugins"]),
        ("codex", "codex/json", ["--disable", "apps"]),
        ("codex", "codex/json", ["--disable", "multi_agent_v2"]),
        ("codex", "codex/json", ["--disable", "code_mode"]),
        ("codex", "codex/json", ["--disable", "code_mode_only"]),
        ("codex", "codex/json", ["--disable", "multi_env_copy_file"]),
        ("gemini", "gemini/json", ["--approval-mode", "default"]),
        ("qwen", "qwen/json", ["--core-tools", "none"]),
        ("opencode", "opencode/json", ["--agent", "agent-loop"]),
    ] {
        let (run, sent) = run(preset, recording, &[]);
        run.expect_code(0);
        assert!(sent.has(off), "{preset}: {:?}", sent.args);
        assert!(
            !sent.args.iter().any(|a| bypass.contains(&a.as_str())),
            "{preset}: {:?}",
            sent.args
        );
    }
    // qwen's --core-tools does not reach the tools it adds besides: each is excluded by name,
    // the eight 0.24.4 declared with the old list among them (now none: qwen/json.requests).
    let (_, qwen) = run("qwen", "qwen/json", &[]);
    let at = qwen.args.iter().position(|a| a == "--exclude-tools");
    let excluded: Vec<&str> = at
        .and_then(|i| qwen.args.get(i + 1))
        .map(|list| list.split(',').collect())
        .unwrap_or_default();
    for tool in [
        "tool_search",
        "tool_call",
        "agent",
        "skill",
        "enter_worktree",
        "exit_worktree",
        "get_goal",
        "update_goal",
        "list_agents",
        "report_findings",
        "record_artifact",
    ] {
        assert!(excluded.contains(&tool), "{tool}: {:?}", qwen.args);
    }
    // `tools = "own"` in the user's entry drops `loop_args`.
    let ws = workspace("claude", "replay.sh", "tools = \"own\"\n");
    ws.run_cmd(command(&ws, "claude", "claude/json", &["hi"]))
        .expect_code(0);
    assert!(!sent(&ws).args.iter().any(|a| a == "--tools"));
}

/// A cloned repository's `.claude/settings.json` runs its hooks and `apiKeyHelper` at start
/// and can send the key and the conversation elsewhere (its `env`): in either mode the
/// claude preset reads the user's settings only.
#[test]
fn claude_reads_no_settings_of_the_project_in_either_mode() {
    let (run, loop_mode) = run("claude", "claude/json", &[]);
    run.expect_code(0);
    let pair = ["--setting-sources", "user"];
    assert!(loop_mode.has(pair), "{:?}", loop_mode.args);
    let ws = workspace("claude", "replay.sh", "tools = \"own\"\n");
    ws.run_cmd(command(&ws, "claude", "claude/json", &["hi"]))
        .expect_code(0);
    assert!(sent(&ws).has(pair));
}

/// A qwen never set up says why in its result's `error`, not as an `[API Error:` answer: that
/// message is the error, not qwen's whole JSON.
#[test]
fn qwen_not_set_up_says_why() {
    let (run, _) = run("qwen", "qwen/noauth", &[]);
    run.expect_code(1);
    assert!(
        run.stderr().contains(
            "error: backend `qwen` reported an error: No auth type is selected. Please \
             configure an auth type"
        ),
        "{}",
        run.stderr()
    );
    assert!(!run.stderr().contains("\"is_error\""), "{}", run.stderr());
}

#[test]
fn the_real_clis_declared_no_tools_of_their_own_in_loop_mode() {
    let requests =
        |cli: &str| std::fs::read_to_string(fixture(&format!("{cli}/json.requests"))).unwrap();
    for cli in ["claude", "qwen", "opencode"] {
        let r = requests(cli);
        assert!(
            !r.is_empty() && r.lines().all(|l| l.contains(" tools=0")),
            "{cli}: {r}"
        );
    }
    // codex keeps only the question tool exec mode cannot ask.
    assert!(requests("codex").contains(" tools=1 request_user_input"));
    // gemini keeps its read-only tools: no shell, no writes.
    let gemini = requests("gemini");
    for tool in ["run_shell_command", "write_file", "replace"] {
        assert!(!gemini.contains(tool), "{gemini}");
    }
    // One model step is one request (qwen's memory, which adds its own requests, is off).
    for cli in ["claude", "codex", "gemini", "qwen", "opencode"] {
        assert_eq!(requests(cli).lines().count(), 1, "{cli}");
    }
    // Their text modes, by contrast, offer the model their whole tool sets; qwen 0.24.4's
    // memory requests there have its shell and its writes.
    let text_mode = |cli: &str| std::fs::read_to_string(fixture(&format!("{cli}/plain.requests")));
    assert!(text_mode("claude").unwrap().contains("Bash"));
    assert!(text_mode("qwen")
        .unwrap()
        .contains("run_shell_command,write_file"));
}

#[test]
fn a_conversation_over_128_kib_reaches_qwen_and_gemini_on_stdin() {
    let task = format!(
        "{}What is six times seven?",
        "Here is some context you may ignore. ".repeat(3800)
    );
    assert!(task.len() > 140_000);
    for (preset, recording) in [("qwen", "qwen/big"), ("gemini", "gemini/big")] {
        let ws = workspace(preset, "small-argv.sh", "");
        let mut cmd = command(&ws, preset, recording, &["-"]);
        cmd.stdin(std::process::Stdio::piped());
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = {
            let task = task.clone();
            std::thread::spawn(move || std::io::Write::write_all(&mut stdin, task.as_bytes()))
        };
        let run = Run {
            output: child.wait_with_output().unwrap(),
        };
        writer.join().unwrap().unwrap();
        run.expect_code(0);
        assert_eq!(run.stdout(), "The answer is 42.\n", "{preset}");
        let sent = sent(&ws);
        assert!(sent.has(["-p", ""]), "{preset}: {:?}", sent.args);
        assert!(
            sent.stdin.contains(&task),
            "{preset}: the task went on stdin"
        );
        // The real CLIs took a 140 KB prompt that way.
        assert_eq!(
            std::fs::read_to_string(fixture(&format!("{recording}.rc"))).unwrap(),
            "0\n"
        );
    }
}

/// Every file and folder under `dir`: its kind, size, modification time and bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, (bool, u64, std::time::SystemTime, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                Vec::new()
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            out.insert(
                rel,
                (meta.is_dir(), meta.len(), meta.modified().unwrap(), bytes),
            );
        }
    }
    out
}

/// A folder with two files, and (`git`) the same as a committed git repository; false when
/// git failed.
fn project(ws: &Workspace, git: bool) -> bool {
    let work = ws.work();
    std::fs::write(work.join("a.txt"), "hello\n").unwrap();
    std::fs::write(work.join("notes.md"), "notes\n").unwrap();
    if !git {
        return true;
    }
    let git = |args: &[&str]| {
        ws.hermetic(&mut Command::new("git"))
            .args(args)
            .current_dir(&work)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    git(&["init", "-q"])
        && git(&["add", "."])
        && git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@localhost",
            "commit",
            "-qm",
            "init",
        ])
}

#[test]
fn aider_and_doctor_aider_leave_the_folder_as_they_found_it() {
    for in_git in [false, true] {
        let ws = workspace("aider", "replay.sh", "");
        assert!(
            project(&ws, in_git),
            "git is needed (scripts/test.sh installs it)"
        );
        let before = snapshot(&ws.work());
        let run = ws.run_cmd(command(&ws, "aider", "aider/git-repo", &["look at a.txt"]));
        run.expect_code(0);
        // Not even the banner of a user's own git-enabled setup reaches the answer.
        assert_eq!(run.stdout(), "Look at a.txt and notes.md first.\n");
        let sent = sent(&ws);
        for pair in [
            ["--chat-history-file", "/dev/null"],
            ["--input-history-file", "/dev/null"],
            ["--map-tokens", "0"],
        ] {
            assert!(sent.has(pair), "{:?}", sent.args);
        }
        for flag in [
            "--no-git",
            "--no-gitignore",
            "--dry-run",
            "--yes-always",
            "--no-suggest-shell-commands",
        ] {
            assert!(
                sent.args.iter().any(|a| a == flag),
                "{flag}: {:?}",
                sent.args
            );
        }
        // The prompt file was under TMPDIR, and is gone.
        let i = sent
            .args
            .iter()
            .position(|a| a == "--message-file")
            .unwrap();
        assert!(Path::new(&sent.args[i + 1]).starts_with(ws.path("tmp")));
        assert_eq!(std::fs::read_dir(ws.path("tmp")).unwrap().count(), 0);
        assert_eq!(snapshot(&ws.work()), before, "git: {in_git}");

        let mut doctor = command(&ws, "aider", "aider/git-repo", &[]);
        doctor.args(["doctor", "aider"]);
        let run = ws.run_cmd(doctor);
        run.expect_code(0);
        assert!(
            run.stdout().contains(" --no-git --no-gitignore "),
            "{}",
            run.stdout()
        );
        assert_eq!(snapshot(&ws.work()), before, "doctor, git: {in_git}");
    }
}

#[test]
fn the_real_aider_left_a_git_repository_as_it_found_it_with_one_request() {
    let tree = std::fs::read_to_string(fixture("aider/git-repo.tree")).unwrap();
    assert_eq!(tree, ".\n./a.txt\n./notes.md\n# git status:\n", "{tree}");
    for scenario in ["plain", "toolcall", "long", "error"] {
        let tree = std::fs::read_to_string(fixture(&format!("aider/{scenario}.tree"))).unwrap();
        assert_eq!(tree, ".\n", "{scenario}");
    }
    let requests = std::fs::read_to_string(fixture("aider/git-repo.requests")).unwrap();
    assert_eq!(requests.lines().count(), 1, "{requests}");
    let p = parse("aider", "aider", "git-repo.stdout", "git-repo.stderr");
    assert_eq!(p.text, "Look at a.txt and notes.md first.", "{p:?}");
    // What aider printed there without the preset's flags never reaches the answer.
    let old = "\nUpdate git name with: git config user.name \"Your Name\"\n\
               You can skip this check with --no-gitignore\nAdded .aider* to .gitignore\n\
               Aider v0.86.2\nThe answer is 42.\n";
    let p = crate::presets::parse_text("aider", old, "");
    assert_eq!(p.text, "The answer is 42.", "{p:?}");
}

#[test]
fn temp_on_an_agent_cli_stays_an_error_and_runs_nothing() {
    let ws = workspace("claude", "replay.sh", "");
    let run = ws.run_cmd(command(
        &ws,
        "claude",
        "claude/json",
        &["--temp", "0.2", "hi"],
    ));
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(
        run.stderr()
            .contains("--temp: backend `claude` is an agent CLI, which sets its own temperature"),
        "{}",
        run.stderr()
    );
    assert!(!ws.path("fake/sent").exists());
}
