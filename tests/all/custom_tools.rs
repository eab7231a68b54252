//! Custom command tools (`[tools.NAME]`) end to end: offered to a CLI fake agent in its
//! prompt and to an HTTP mock as a native tool, run with the argv filled per parameter (never
//! through a shell), asked about like bash, killed at their timeout, confined to --root for
//! `path` parameters; `confirm` for built-ins; and each kind of bad definition.

use serde_json::Value;

use crate::common::Workspace;
use crate::http::server::json;
use crate::http::{run_api, setup, Format};

const WORD_COUNT: &str = r#"
[tools.word_count]
description = "Count the words of a file"
command = ["wc", "-w", "{path}"]
confirm = false
timeout_s = 30
[tools.word_count.parameters.path]
type = "path"
description = "the file"
required = true
"#;

fn call(name: &str, args: &str) -> String {
    format!("<tool_call>{{\"name\":\"{name}\",\"arguments\":{args}}}</tool_call>\n")
}

#[test]
fn a_cli_agent_is_offered_the_tool_and_its_argv_never_meets_a_shell() {
    let ws = Workspace::new();
    ws.add_config(WORD_COUNT);
    // A name a shell would act on: it must reach wc as one argument.
    let name = "it's $(touch pwned) a;b.txt";
    std::fs::write(ws.work().join(name), "one two three\n").unwrap();
    ws.reply(
        1,
        call("word_count", &format!("{{\"path\":{}}}", Value::from(name))),
    );
    ws.reply(2, "three words\n");
    let run = ws.run(&["--backend", "fake", "count the words"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "three words\n");
    let first = ws.prompt(1);
    assert!(
        first.contains("\n## word_count\nCount the words of a file\nArguments (JSON schema): {\"properties\":{\"path\":{\"description\":\"the file (a path inside the working folder)\",\"type\":\"string\"}},\"required\":[\"path\"],\"type\":\"object\"}\n"),
        "{first}"
    );
    let second = ws.prompt(2);
    let work = std::fs::canonicalize(ws.work()).unwrap();
    let expected = format!(
        "name=\"word_count\" status=\"ok\">\nexit code: 0\nstdout:\n3 {}\n</tool_result>",
        work.join(name).display()
    );
    assert!(second.contains(&expected), "{second}");
    assert!(
        !ws.work().join("pwned").exists(),
        "a shell ran the argument"
    );
}

#[test]
fn confirm_asks_like_bash_and_allow_or_confirm_false_lets_it_run() {
    let touch = |confirm: &str| {
        format!(
            "[tools.touch_it]\ndescription = \"Create a file\"\ncommand = [\"touch\", \"{{name}}\"]\n{confirm}\
             [tools.touch_it.parameters.name]\ntype = \"string\"\nrequired = true\n"
        )
    };
    // `confirm` unset means true: without a terminal or --yes the call is refused.
    let ws = Workspace::new();
    ws.add_config(&touch(""));
    ws.reply(1, call("touch_it", "{\"name\":\"made.txt\"}"));
    ws.reply(2, "could not\n");
    // 4: every tool call of the turn was refused (docs/reliability.md).
    ws.run(&["--backend", "fake", "make it"]).expect_code(4);
    assert!(!ws.work().join("made.txt").exists(), "ran without approval");
    assert!(ws.prompt(2).contains(
        "name=\"touch_it\" status=\"error\">\nnot run: agent-loop cannot ask for approval"
    ));
    // --allow names it like a built-in.
    ws.reply(3, call("touch_it", "{\"name\":\"made.txt\"}"));
    ws.reply(4, "made\n");
    ws.run(&["--backend", "fake", "--allow", "touch_it", "make it"])
        .expect_code(0);
    assert!(ws.work().join("made.txt").exists());
    // confirm = false: it runs without asking.
    let ws = Workspace::new();
    ws.add_config(&touch("confirm = false\n"));
    ws.reply(1, call("touch_it", "{\"name\":\"made.txt\"}"));
    ws.reply(2, "made\n");
    ws.run(&["--backend", "fake", "make it"]).expect_code(0);
    assert!(ws.work().join("made.txt").exists());
}

#[test]
fn confirm_applies_to_builtins_with_a_warning_for_bash() {
    let ws = Workspace::new();
    ws.add_config("[tools.bash]\nconfirm = false\n[tools.read]\nconfirm = true\n");
    std::fs::write(ws.work().join("notes.txt"), "n\n").unwrap();
    ws.reply(
        1,
        call("bash", "{\"command\":\"touch ran.txt\"}") + &call("read", "{\"path\":\"notes.txt\"}"),
    );
    ws.reply(2, "done\n");
    // read was refused (it could not ask): not done, exit 4.
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(4);
    assert!(ws.work().join("ran.txt").exists(), "bash asked");
    let err = run.stderr();
    assert!(
        err.contains(
            "backends.toml:6: [tools.bash] confirm = false: bash will change things without asking"
        ),
        "{err}"
    );
    assert!(
        ws.prompt(2).contains(
            "name=\"read\" status=\"error\">\nnot run: agent-loop cannot ask for approval"
        ),
        "read did not ask"
    );
}

#[test]
fn a_slow_tool_is_killed_at_its_timeout_with_exit_124() {
    let ws = Workspace::new();
    ws.add_config(
        "[tools.slow]\ndescription = \"Wait\"\ncommand = [\"sleep\", \"300\"]\nconfirm = false\ntimeout_s = 1\n",
    );
    ws.reply(1, call("slow", "{}"));
    ws.reply(2, "gave up\n");
    ws.run(&["--backend", "fake", "wait"]).expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains("name=\"slow\" status=\"error\">\nexit code: 124\ntimed out after 1s: the command and everything it started were killed\n</tool_result>"),
        "{second}"
    );
}

#[test]
fn path_parameters_and_cwd_stay_inside_the_root() {
    let ws = Workspace::new();
    ws.add_config(WORD_COUNT);
    std::fs::write(ws.path("outside.txt"), "secret words\n").unwrap();
    ws.reply(1, call("word_count", "{\"path\":\"../outside.txt\"}"));
    ws.reply(2, "refused\n");
    ws.run(&["--backend", "fake", "count"]).expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second
            .contains("name=\"word_count\" status=\"error\">\nrefused: ../outside.txt resolves to"),
        "{second}"
    );
    // A FIFO is refused before the program runs: `wc` on it blocked until the timeout.
    let ws = Workspace::new();
    ws.add_config(WORD_COUNT);
    let made = std::process::Command::new("mkfifo")
        .arg(ws.work().join("fifo1"))
        .status()
        .unwrap();
    assert!(made.success());
    ws.reply(1, call("word_count", "{\"path\":\"fifo1\"}"));
    ws.reply(2, "refused\n");
    ws.run(&["--backend", "fake", "count"]).expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains(
            "name=\"word_count\" status=\"error\">\nrefused: fifo1 (`path` of word_count) is a \
             FIFO (named pipe); a path given to a command tool must be a regular file or a folder"
        ),
        "{second}"
    );
    // A wrong type is a result for the model too.
    let ws = Workspace::new();
    ws.add_config(WORD_COUNT);
    ws.reply(1, call("word_count", "{\"path\":3}"));
    ws.reply(2, "hm\n");
    ws.run(&["--backend", "fake", "count"]).expect_code(0);
    assert!(ws
        .prompt(2)
        .contains("invalid arguments for word_count: `path` must be a string, not 3"));
}

#[test]
fn tools_lists_custom_tools_and_config_shows_them() {
    let ws = Workspace::new();
    ws.add_config(WORD_COUNT);
    ws.add_config("[tools.later]\ndescription = \"Not filled in\"\ncommand = []\n");
    ws.reply(1, "no tools needed\n");
    ws.run(&["--backend", "fake", "--tools", "word_count,read", "hi"])
        .expect_code(0);
    let first = ws.prompt(1);
    assert!(
        first.contains("## word_count") && first.contains("## read"),
        "{first}"
    );
    assert!(
        !first.contains("## bash") && !first.contains("## later"),
        "{first}"
    );
    // A tool with no command yet is not offered, so --tools does not know it.
    let run = ws.run(&["--backend", "fake", "--tools", "later", "hi"]);
    run.expect_code(2);
    assert!(run.stderr().contains("--tools: unknown tool `later`; the tools are bash, read, write, edit, ls, grep, read_url, word_count"), "{}", run.stderr());
    let run = ws.run(&["config"]);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.contains("later            () confirm = true: (disabled: no command yet)"),
        "{out}"
    );
    assert!(
        out.contains("word_count       (path) confirm = false: wc -w {path}"),
        "{out}"
    );
}

/// Each bad definition stops the run with exit 2 and names the file, the line and the key.
#[test]
fn bad_definitions_name_file_line_and_key() {
    let cases = [
        (
            "[tools.t]\ndescription = \"d\"\ncommand = [\"wc\", \"{fle}\"]\n[tools.t.parameters.file]\ntype = \"path\"\n",
            "backends.toml:3: tool `t`: key `command`: unknown placeholder `{fle}`; the parameters are file",
        ),
        (
            "[tools.t]\ncommand = [\"true\"]\n",
            "backends.toml:1: tool `t`: key `description`: missing; a command tool needs `description` and `command`",
        ),
        (
            "[tools.t]\ndescription = \"d\"\n",
            "backends.toml:1: tool `t`: key `command`: missing",
        ),
        (
            "[tools.read]\ndescription = \"mine\"\ncommand = [\"cat\"]\n",
            "backends.toml:2: tool `read`: key `description`: `read` is a built-in tool, so only `confirm` can be set for it",
        ),
        (
            "[tools.t]\ndescription = \"d\"\ncommand = [\"true\"]\n[tools.t.parameters.n]\ntype = \"float\"\n",
            "backends.toml:5: tool `t`: key `parameters.n.type`: unknown type `float`; the types are string, integer, number, boolean, path",
        ),
        (
            "[tools.t]\ndescription = \"d\"\ncommand = [\"true\"]\ntimeout_s = \"soon\"\n",
            "backends.toml:4: tool `t`: key `timeout_s`: invalid type: string \"soon\", expected a whole number from 1, written without quotes",
        ),
        (
            "[tools.t]\ndescription = \"d\"\ncommand = [\"true\"]\nconfrim = true\n",
            "backends.toml:4: tool `t`: key `confrim`: unknown field `confrim` (did you mean `confirm`?), expected",
        ),
    ];
    for (text, expected) in cases {
        let ws = Workspace::new();
        ws.config(text);
        let run = ws.run(&["backends"]);
        run.expect_code(2);
        let err = run.stderr();
        assert!(err.contains(expected), "expected {expected:?} in:\n{err}");
    }
}

/// An HTTP backend gets the tool as a native tool definition and the model's native call of
/// it runs.
#[test]
fn an_http_backend_calls_the_tool_natively() {
    let call = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Counting.",
        "tool_calls":[{"id":"call_wc","type":"function","function":{"name":"word_count","arguments":"{\"path\": \"notes.txt\"}"}}]},
        "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}"#;
    let done = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Three words."},
        "finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}"#;
    let (ws, server) = setup(
        Format::OpenAi,
        vec![json(200, call), json(200, done)],
        WORD_COUNT,
    );
    let run = run_api(&ws, &["--no-stream", "count the words of the notes"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "Three words.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    let tool = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "word_count")
        .expect("word_count is offered");
    assert_eq!(tool["function"]["description"], "Count the words of a file");
    assert_eq!(tool["function"]["parameters"]["required"][0], "path");
    let second = requests[1].json();
    let result = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the result goes back");
    assert_eq!(result["tool_call_id"], "call_wc");
    let text = result["content"].as_str().unwrap();
    assert!(text.starts_with("exit code: 0\nstdout:\n3 "), "{text}");
    assert!(text.ends_with("notes.txt"), "{text}");
}

/// Over an HTTP backend too, a tool that asks is refused without a terminal, a path outside
/// the root is refused, and a slow tool is killed at its timeout: each a result the next
/// request carries.
#[test]
fn an_http_backend_gets_approval_confinement_and_timeout_results() {
    let calls = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":null,
        "tool_calls":[
          {"id":"c_touch","type":"function","function":{"name":"touch_it","arguments":"{\"name\": \"made.txt\"}"}},
          {"id":"c_out","type":"function","function":{"name":"word_count","arguments":"{\"path\": \"../outside.txt\"}"}},
          {"id":"c_slow","type":"function","function":{"name":"slow","arguments":"{}"}}]},
        "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}"#;
    let done = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"None worked."},
        "finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}"#;
    let tools = format!(
        "{WORD_COUNT}\n[tools.touch_it]\ndescription = \"Create a file\"\ncommand = [\"touch\", \"{{name}}\"]\n\
         [tools.touch_it.parameters.name]\ntype = \"string\"\nrequired = true\n\
         [tools.slow]\ndescription = \"Wait\"\ncommand = [\"sleep\", \"300\"]\nconfirm = false\ntimeout_s = 1\n"
    );
    let (ws, server) = setup(
        Format::OpenAi,
        vec![json(200, calls), json(200, done)],
        &tools,
    );
    std::fs::write(ws.path("outside.txt"), "secret words\n").unwrap();
    // touch_it was refused (it could not ask): not done, exit 4.
    run_api(&ws, &["--no-stream", "try the tools"]).expect_code(4);
    assert!(
        !ws.work().join("made.txt").exists(),
        "touch_it ran without approval"
    );
    let second = server.requests()[1].json();
    let result = |id: &str| -> String {
        second["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("no result for {id}: {second}"))["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        result("c_touch").starts_with("not run: agent-loop cannot ask for approval"),
        "{}",
        result("c_touch")
    );
    assert!(
        result("c_out").starts_with("refused: ../outside.txt resolves to"),
        "{}",
        result("c_out")
    );
    assert_eq!(
        result("c_slow"),
        "exit code: 124\ntimed out after 1s: the command and everything it started were killed"
    );
}

/// `cwd` is taken under --root, and one that leads out of it is refused.
#[test]
fn cwd_is_under_the_root() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.work().join("sub")).unwrap();
    ws.add_config(
        "[tools.where]\ndescription = \"Where am I\"\ncommand = [\"pwd\"]\nconfirm = false\ncwd = \"sub\"\n\
         [tools.out]\ndescription = \"Escape\"\ncommand = [\"pwd\"]\nconfirm = false\ncwd = \"..\"\n",
    );
    ws.reply(1, call("where", "{}") + &call("out", "{}"));
    ws.reply(2, "done\n");
    ws.run(&["--backend", "fake", "where"]).expect_code(0);
    let second = ws.prompt(2);
    let sub = std::fs::canonicalize(ws.work().join("sub")).unwrap();
    assert!(
        second.contains(&format!(
            "name=\"where\" status=\"ok\">\nexit code: 0\nstdout:\n{}\n</tool_result>",
            sub.display()
        )),
        "{second}"
    );
    assert!(
        second.contains("name=\"out\" status=\"error\">\nout: cwd: refused: .. resolves to"),
        "{second}"
    );
}

const BACKUP: &str = r#"
[tools.backup]
description = "Copy a file"
command = ["cp", "{src}", "{dest}"]
[tools.backup.parameters.src]
type = "path"
required = true
[tools.backup.parameters.dest]
type = "string"
required = true
"#;

/// The question shows the whole argv the tool will run, not its first argument: `dest` is
/// where the harm is. An MCP tool's arguments (an agent-loop tool whose arguments it does not
/// know) are shown one a line the same way.
#[test]
fn the_prompt_shows_the_argv_it_will_run() {
    let ws = Workspace::new();
    ws.add_config(BACKUP);
    std::fs::write(ws.work().join("notes.txt"), "x\n").unwrap();
    ws.reply(
        1,
        call(
            "backup",
            r#"{"src":"notes.txt","dest":"/root/.ssh/authorized keys"}"#,
        ),
    );
    ws.reply(2, "stopped\n");
    let mut pty = crate::common::Pty::spawn(
        &ws,
        &[],
        &["--display", "plain", "--backend", "fake", "back it up"],
    );
    pty.wait_for("[n]o");
    let shown = String::from_utf8_lossy(&pty.output()).to_string();
    assert!(
        shown.contains("Allow backup? It asks to run (1 line):\r\n  | cp notes.txt '/root/.ssh/authorized keys'")
            || shown.contains("Allow backup? It asks to run (1 line):\n  | cp notes.txt '/root/.ssh/authorized keys'"),
        "{shown}"
    );
    pty.send("n\n");
    let (code, _) = pty.finish();
    assert_eq!(code, 0);
    assert!(ws.prompt(2).contains("not run: "), "{}", ws.prompt(2));
}

/// `--allow TOOL:GLOB` matches the argv it will run, path arguments resolved and relative to
/// --root: `docs/../.git/hooks/x` is `.git/hooks/x`, which a `docs/*` rule does not cover
/// and which always asks.
#[test]
fn allow_rules_match_the_resolved_argv_and_git_asks() {
    let newdoc = "[tools.newdoc]\ndescription = \"New doc\"\ncommand = [\"touch\", \"{path}\"]\n\
         [tools.newdoc.parameters.path]\ntype = \"path\"\nrequired = true\n";
    let ws = Workspace::new();
    ws.add_config(newdoc);
    std::fs::create_dir_all(ws.work().join("docs")).unwrap();
    std::fs::create_dir_all(ws.work().join(".git/hooks")).unwrap();
    ws.reply(
        1,
        call("newdoc", r#"{"path":"docs/a.md"}"#)
            + &call("newdoc", r#"{"path":"docs/../.git/hooks/pre-commit"}"#)
            + &call("newdoc", r#"{"path":"docs/../b.md"}"#),
    );
    ws.reply(2, "done\n");
    // Two were refused: not done, exit 4.
    ws.run(&["--backend", "fake", "--allow", "newdoc:touch docs/*", "go"])
        .expect_code(4);
    assert!(ws.work().join("docs/a.md").exists());
    assert!(!ws.work().join(".git/hooks/pre-commit").exists());
    assert!(!ws.work().join("b.md").exists());
    let results = ws.prompt(2);
    assert_eq!(
        results
            .matches("not run: agent-loop cannot ask for approval")
            .count(),
        2,
        "{results}"
    );
    // `always` for the tool still leaves .git/ asking.
    ws.reply(
        3,
        call("newdoc", r#"{"path":"docs/../.git/hooks/pre-commit"}"#),
    );
    ws.reply(4, "done\n");
    ws.run(&["--backend", "fake", "--allow", "newdoc", "go"])
        .expect_code(4);
    assert!(!ws.work().join(".git/hooks/pre-commit").exists());
}

/// A value starting with `-` where the program reads options is refused (`ssh {host}` with
/// `-oProxyCommand=...` would run a command), unless the parameter says `option = true` or
/// the template puts `--` before it.
#[test]
fn values_that_would_be_options_are_refused() {
    let tools = "[tools.lister]\ndescription = \"List\"\ncommand = [\"ls\", \"{dir}\"]\nconfirm = false\n\
         [tools.lister.parameters.dir]\ntype = \"string\"\nrequired = true\n\
         [tools.flagged]\ndescription = \"List with flags\"\ncommand = [\"ls\", \"{flags}\", \".\"]\nconfirm = false\n\
         [tools.flagged.parameters.flags]\ntype = \"string\"\nrequired = true\noption = true\n\
         [tools.ended]\ndescription = \"Echo\"\ncommand = [\"echo\", \"--\", \"{word}\"]\nconfirm = false\n\
         [tools.ended.parameters.word]\ntype = \"string\"\nrequired = true\n\
         [tools.inside]\ndescription = \"Name\"\ncommand = [\"echo\", \"--name={word}\"]\nconfirm = false\n\
         [tools.inside.parameters.word]\ntype = \"string\"\nrequired = true\n";
    let ws = Workspace::new();
    ws.add_config(tools);
    ws.reply(
        1,
        call("lister", r#"{"dir":"--format=commas"}"#)
            + &call("flagged", r#"{"flags":"-a"}"#)
            + &call("ended", r#"{"word":"-n"}"#)
            + &call("inside", r#"{"word":"-x"}"#),
    );
    ws.reply(2, "done\n");
    ws.run(&["--backend", "fake", "go"]).expect_code(0);
    let results = ws.prompt(2);
    assert!(
        results.contains("name=\"lister\" status=\"error\">\nrefused: `dir` of lister starts with `-`, so ls would read it as an option"),
        "{results}"
    );
    assert!(
        results.contains("name=\"flagged\" status=\"ok\">\nexit code: 0"),
        "{results}"
    );
    assert!(
        results.contains("name=\"ended\" status=\"ok\">\nexit code: 0\nstdout:\n-- -n"),
        "{results}"
    );
    assert!(
        results.contains("name=\"inside\" status=\"ok\">\nexit code: 0\nstdout:\n--name=-x"),
        "{results}"
    );
}
