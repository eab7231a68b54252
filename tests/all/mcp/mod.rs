//! MCP servers end to end: real servers from npm (installed by scripts/test.sh into
//! tests/mcp-servers/) and a tiny fixture server for the failures, driven through full turns of
//! the built binary by the scripted fake agent; the library's server list and restart; `/mcp`
//! in the REPL. `client` covers the protocol handling itself against fixture servers, `caps`
//! the caps on what a server sends, `credentials` a URL server's token and headers, `oauth`
//! `agent-loop mcp login`, refresh and logout against a fixture authorization server,
//! `progress` a running tool's progress reports.

mod caps;
mod client;
mod credentials;
mod oauth;
mod progress;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use agent_loop_config::{Config, Source};
use agent_loop_mcp::{McpError, McpServers, ServerState, ServerStatus};
use agent_loop_tools::{Registry, ToolContext};
use serde_json::json;

use crate::common::{fixture, hermetic, wait_gone, Workspace};

/// A server installed from npm at the version pinned in tests/mcp-servers/package-lock.json.
pub(crate) fn npm_server(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp-servers/node_modules/.bin")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: scripts/test.sh installs it (npm ci in tests/mcp-servers)",
        path.display()
    );
    path
}

fn tiny() -> String {
    fixture("mcp/tiny-server.js").display().to_string()
}

/// One tool call in the fake agent's reply.
fn call(name: &str, args: &str) -> String {
    format!("<tool_call>{{\"name\":\"{name}\",\"arguments\":{args}}}</tool_call>\n")
}

/// A `[mcp.servers.NAME]` table running `command` with `extra` keys.
fn server(name: &str, command: &str, extra: &str) -> String {
    format!("\n[mcp.servers.{name}]\ncommand = '{command}'\n{extra}\n")
}

/// server-everything on stdio as `everything`, with `extra` keys.
fn everything_stdio(ws: &Workspace, extra: &str) {
    let everything = npm_server("mcp-server-everything");
    ws.add_config(&server(
        "everything",
        &everything.display().to_string(),
        extra,
    ));
}

#[test]
fn everything_server_echo_and_sum_through_a_turn() {
    let ws = Workspace::new();
    everything_stdio(&ws, "trust = true");
    ws.reply(
        1,
        call(
            "mcp.everything.echo",
            r#"{"message":"hello from the model"}"#,
        ) + &call("mcp.everything.get-sum", r#"{"a":2,"b":40}"#),
    );
    ws.reply(2, "The sum is 42.\n");
    let run = ws.run(&["--backend", "fake", "echo, then add 2 and 40"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The sum is 42.\n");
    let first = ws.prompt(1);
    assert!(first.contains("\n## mcp.everything.echo\n"), "{first}");
    assert!(first.contains("\"message\""), "{first}");
    assert!(first.contains("\n## bash\n"), "{first}");
    let second = ws.prompt(2);
    assert!(
        second.contains("<tool_result id=\"call_1\" name=\"mcp.everything.echo\" status=\"ok\">\nEcho: hello from the model\n</tool_result>"),
        "{second}"
    );
    assert!(
        second.contains("<tool_result id=\"call_2\" name=\"mcp.everything.get-sum\" status=\"ok\">\nThe sum of 2 and 40 is 42.\n</tool_result>"),
        "{second}"
    );
    // The server's own stderr goes nowhere near agent-loop's output.
    let err = run.stderr();
    assert!(!err.contains("Starting default"), "{err}");
    assert!(
        err.contains("[tool mcp.everything.echo] hello from the model"),
        "{err}"
    );
}

#[test]
fn untrusted_mcp_tools_ask_first() {
    let ws = Workspace::new();
    everything_stdio(&ws, "");
    ws.reply(1, call("mcp.everything.echo", r#"{"message":"hi"}"#));
    ws.reply(2, "refused\n");
    // No terminal to ask on and no --yes: the call is refused and the model told why.
    // The only call was refused: exit 4.
    ws.run(&["--backend", "fake", "echo"]).expect_code(4);
    let second = ws.prompt(2);
    assert!(
        second.contains("name=\"mcp.everything.echo\" status=\"error\">\nnot run: agent-loop cannot ask for approval"),
        "{second}"
    );
    assert!(!second.contains("Echo: hi"), "{second}");
}

#[test]
fn filesystem_server_lists_and_reads_a_folder() {
    let ws = Workspace::new();
    let notes = ws.work().join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("alpha.txt"), "the first note\n").unwrap();
    std::fs::write(notes.join("beta.txt"), "the second note\n").unwrap();
    let fs = npm_server("mcp-server-filesystem");
    ws.add_config(&server(
        "fs",
        &fs.display().to_string(),
        &format!("args = ['{}']\ntrust = true", ws.work().display()),
    ));
    ws.reply(
        1,
        call("mcp.fs.list_directory", &json!({"path": notes}).to_string())
            + &call(
                "mcp.fs.read_text_file",
                &json!({"path": notes.join("beta.txt")}).to_string(),
            ),
    );
    ws.reply(2, "Two notes.\n");
    ws.run(&["--backend", "fake", "what notes are there?"])
        .expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains("[FILE] alpha.txt\n[FILE] beta.txt"),
        "{second}"
    );
    assert!(
        second.contains("name=\"mcp.fs.read_text_file\" status=\"ok\">\nthe second note"),
        "{second}"
    );
}

#[test]
fn a_missing_command_is_reported_once_and_the_other_servers_work() {
    let ws = Workspace::new();
    ws.add_config(&server("gone", "no-such-mcp-server", ""));
    ws.add_config(&server("tiny", &tiny(), "trust = true"));
    ws.reply(1, call("mcp.tiny.picture", "{}"));
    ws.reply(2, "A picture.\n");
    let run = ws.run(&["--backend", "fake", "show me"]);
    run.expect_code(0);
    let err = run.stderr();
    assert_eq!(
        err.matches("MCP server `gone` did not start").count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("agent-loop: MCP server `gone` did not start, its tools are left out: command `no-such-mcp-server` is not on PATH"),
        "{err}"
    );
    assert!(!ws.prompt(1).contains("mcp.gone"), "{}", ws.prompt(1));
    // Text joined, the image described rather than dropped.
    let second = ws.prompt(2);
    assert!(
        second.contains(
            "status=\"ok\">\nhere is a picture\n[image: image/png, 8 bytes]\n</tool_result>"
        ),
        "{second}"
    );
    assert!(!err.contains("noise on stderr"), "{err}");
}

#[test]
fn a_server_that_exits_at_start_is_reported_with_its_stderr() {
    let ws = Workspace::new();
    ws.add_config(&server("quitter", &tiny(), "args = ['exit-now']"));
    ws.reply(1, "Fine without it.\n");
    let run = ws.run(&["--backend", "fake", "anything"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "Fine without it.\n");
    let err = run.stderr();
    assert!(
        err.contains("agent-loop: MCP server `quitter` did not start, its tools are left out:"),
        "{err}"
    );
    assert!(err.contains("tiny-server: giving up at once"), "{err}");
}

#[test]
fn a_call_that_times_out_is_an_error_result_and_the_server_goes_on() {
    let ws = Workspace::new();
    ws.add_config(&server("tiny", &tiny(), "trust = true\ntimeout_s = 1"));
    ws.reply(
        1,
        call("mcp.tiny.hang", "{}") + &call("mcp.tiny.fail", r#"{"note":"x"}"#),
    );
    ws.reply(2, "Both failed.\n");
    ws.run(&["--backend", "fake", "try"]).expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains("name=\"mcp.tiny.hang\" status=\"error\">\nmcp.tiny.hang: MCP server `tiny` gave no answer within 1s (its timeout_s); the call was abandoned"),
        "{second}"
    );
    // isError reaches the model as an error, from the same server, still running.
    assert!(
        second.contains("name=\"mcp.tiny.fail\" status=\"error\">\nit failed on purpose\n"),
        "{second}"
    );
}

#[test]
fn a_server_that_dies_mid_session_fails_its_calls() {
    let ws = Workspace::new();
    ws.add_config(&server("tiny", &tiny(), "trust = true"));
    ws.reply(
        1,
        call("mcp.tiny.die", "{}") + &call("mcp.tiny.picture", "{}"),
    );
    ws.reply(2, "It died.\n");
    ws.run(&["--backend", "fake", "try"]).expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains("name=\"mcp.tiny.die\" status=\"error\">\nmcp.tiny.die: MCP server `tiny` stopped during the call"),
        "{second}"
    );
    assert!(second.contains("tiny-server: dying as asked"), "{second}");
    assert!(
        second.contains("name=\"mcp.tiny.picture\" status=\"error\">\nmcp.tiny.picture: MCP server `tiny` is not running (exited:"),
        "{second}"
    );
}

#[test]
fn servers_and_what_they_started_are_gone_after_exit() {
    let ws = Workspace::new();
    let pids = ws.path("pids");
    ws.add_config(&server(
        "tiny",
        &tiny(),
        &format!("env = {{ TINY_PID_FILE = '{}' }}", pids.display()),
    ));
    ws.reply(1, "Done.\n");
    ws.run(&["--backend", "fake", "nothing"]).expect_code(0);
    let pids = std::fs::read_to_string(&pids).expect("the server wrote its pids");
    for pid in pids.split_whitespace() {
        let pid: i32 = pid.parse().unwrap();
        assert!(wait_gone(pid), "process {pid} outlived agent-loop");
    }
}

/// A Streamable HTTP server on a free local port (`PORT`), ready once it says `listening on
/// port` on stderr; killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
    /// HOME, the XDG folders and TMPDIR of the server, removed after it.
    _root: tempfile::TempDir,
}

impl HttpServer {
    /// server-everything in its Streamable HTTP mode.
    fn everything() -> Self {
        Self::start(
            &npm_server("mcp-server-everything"),
            &["streamableHttp"],
            &[],
        )
    }

    fn start(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let root = tempfile::tempdir().unwrap();
        let mut child = hermetic(&mut Command::new(program), root.path())
            .args(args)
            .env("PORT", port.to_string())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Ready when it says so on stderr; the rest of its stderr is drained by a thread.
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let ready = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains("listening on port"));
        assert!(ready, "{} did not start listening", program.display());
        std::thread::spawn(move || lines.for_each(drop));
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            _root: root,
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn streamable_http_server_through_a_turn() {
    let http = HttpServer::everything();
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[mcp.servers.web]\nurl = '{}'\ntrust = true\ntimeout_s = 300\n",
        http.url
    ));
    ws.reply(
        1,
        call("mcp.web.echo", r#"{"message":"over http"}"#) + &call("mcp.web.get-tiny-image", "{}"),
    );
    ws.reply(2, "Done.\n");
    ws.run(&["--backend", "fake", "echo over http"])
        .expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains("name=\"mcp.web.echo\" status=\"ok\">\nEcho: over http\n"),
        "{second}"
    );
    assert!(second.contains("[image: image/png, "), "{second}");
}

#[test]
fn an_unreachable_url_is_reported_with_the_cause() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[mcp.servers.web]\nurl = 'http://127.0.0.1:{port}/mcp'\n"
    ));
    ws.reply(1, "Fine without it.\n");
    let run = ws.run(&["--backend", "fake", "anything"]);
    run.expect_code(0);
    let err = run.stderr();
    assert!(
        err.contains(&format!(
            "agent-loop: MCP server `web` did not start, its tools are left out: http://127.0.0.1:{port}/mcp: "
        )),
        "{err}"
    );
    assert!(err.contains("Connection refused"), "{err}");
}

/// Starts the servers of a config text the way the binary does, in `cwd`.
fn start(text: &str, cwd: &Path, runtime: &tokio::runtime::Runtime) -> McpServers {
    let config = Config::from_sources(&[Source {
        name: "test.toml".into(),
        text: text.into(),
    }])
    .unwrap();
    runtime.block_on(McpServers::start(
        config.mcp_servers.into_values(),
        cwd,
        &agent_loop_tools::Root::Anywhere,
        Default::default(),
    ))
}

#[test]
fn servers_are_listed_and_one_is_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let text = server("tiny", &tiny(), "trust = true")
        + &server("off", &tiny(), "enabled = false")
        + &server("gone", "no-such-mcp-server", "");
    let servers = start(&text, dir.path(), &runtime);
    let mut registry = agent_loop_builtins::registry(None).unwrap();
    assert!(servers.register(&mut registry).is_empty());
    let tiny_tools = |r: &Registry| {
        r.names()
            .iter()
            .filter(|n| n.starts_with("mcp.tiny."))
            .count()
    };
    assert_eq!(tiny_tools(&registry), 6);
    let status = servers.status();
    assert_eq!(
        status[2],
        ServerStatus {
            name: "tiny".into(),
            state: ServerState::Running,
            tools: 6
        }
    );
    assert_eq!(status[1].state, ServerState::Disabled);
    assert!(matches!(&status[0].state, ServerState::Failed(why) if why.contains("not on PATH")));
    assert_eq!(
        servers.render_status(),
        "gone: failed: command `no-such-mcp-server` is not on PATH\noff: disabled\ntiny: running, 6 tools"
    );

    // The server dies; its tools say so; a restart brings them back, not twice.
    let ctx = ToolContext {
        cwd: dir.path().to_path_buf(),
        root: agent_loop_tools::Root::Anywhere,
        artifacts: None,
        env: Default::default(),
        web: Default::default(),
        progress: Default::default(),
        files: Default::default(),
    };
    let out = runtime.block_on(registry.get("mcp.tiny.die").unwrap().run(json!({}), &ctx));
    assert!(!out.ok, "{}", out.output);
    assert!(matches!(servers.status()[2].state, ServerState::Exited(_)));
    let restarted = runtime
        .block_on(servers.restart("tiny", &mut registry))
        .unwrap();
    assert_eq!(restarted.line(), "tiny: running, 6 tools");
    assert_eq!(tiny_tools(&registry), 6);
    let out = runtime.block_on(
        registry
            .get("mcp.tiny.picture")
            .unwrap()
            .run(json!({}), &ctx),
    );
    assert!(out.ok, "{}", out.output);

    let err = runtime
        .block_on(servers.restart("nope", &mut registry))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no MCP server named `nope`; configured servers: gone, off, tiny"
    );
    assert!(matches!(err, McpError::NoSuchServer { .. }), "{err:?}");
    let err = runtime
        .block_on(servers.restart("off", &mut registry))
        .unwrap_err();
    assert!(
        err.to_string().starts_with("MCP server `off` is disabled"),
        "{err}"
    );
    assert!(matches!(err, McpError::Disabled { .. }), "{err:?}");
    servers.shutdown();
    assert!(matches!(servers.status()[2].state, ServerState::Exited(_)));
}

#[test]
fn repl_lists_and_restarts_servers() {
    let ws = Workspace::new();
    ws.add_config(&server("tiny", &tiny(), ""));
    let (code, screen) = crate::repl::repl(
        &ws,
        "--backend demo",
        "/mcp\n/mcp restart tiny\n/mcp restart nope\n/mcp what\nexit\n",
    );
    assert_eq!(code, 0, "{screen}");
    assert_eq!(
        screen.matches("tiny: running, 6 tools").count(),
        2,
        "{screen}"
    );
    assert!(
        screen.contains("error: no MCP server named `nope`; configured servers: tiny"),
        "{screen}"
    );
    assert!(screen.contains("usage: /mcp"), "{screen}");
}

/// MCP tools reach HTTP backends as native tools: `mcp.tiny.picture` is offered under a name
/// the APIs accept, the model's call under that name runs the MCP tool, and the result goes
/// back under the call's id.
#[test]
fn mcp_tools_work_through_an_http_backend() {
    use crate::http::server::{json, response};
    use crate::http::{run_api, setup, Format};
    let call = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_mcp_1", "type": "function",
                "function": {"name": "mcp__tiny__picture", "arguments": "{}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    });
    let done = serde_json::json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 0, "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Saw the picture."}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23}
    });
    let answers = vec![
        json(200, &call.to_string()),
        response(
            200,
            &[("Content-Type", "application/json")],
            done.to_string().as_bytes(),
        ),
    ];
    let (ws, api) = setup(Format::OpenAi, answers, "stream = false\n");
    ws.add_config(&server("tiny", &tiny(), "trust = true"));
    let run = run_api(&ws, &["show me a picture"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "Saw the picture.\n");
    let requests = api.requests();
    assert_eq!(requests.len(), 2);
    let offered: Vec<String> = requests[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        offered.contains(&"mcp__tiny__picture".to_string()),
        "{offered:?}"
    );
    let second = requests[1].json();
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool result message")
        .clone();
    assert_eq!(tool_message["tool_call_id"], "call_mcp_1");
    let content = tool_message["content"].as_str().unwrap();
    assert!(
        content.contains("here is a picture") && content.contains("[image: image/png"),
        "{content}"
    );
}

/// `--tools` limits MCP tools as it does the built-in ones: left out unless named, by name,
/// by `mcp.SERVER.*` or by `mcp.*`; a name no server offers is reported.
#[test]
fn tools_flag_limits_mcp_tools_too() {
    let offered = |tools: &str| {
        let ws = Workspace::new();
        ws.add_config(&server("tiny", &tiny(), "trust = true"));
        ws.reply(1, "Done.\n");
        let run = ws.run(&["--backend", "fake", "--tools", tools, "look"]);
        run.expect_code(0);
        let prompt = ws.prompt(1);
        let names: Vec<&str> = ["read", "bash", "mcp.tiny.picture", "mcp.tiny.fail"]
            .into_iter()
            .filter(|n| prompt.contains(&format!("## {n}\n")))
            .collect();
        (names.join(" "), run.stderr())
    };
    let (all, _) = offered("read,bash,mcp.*");
    assert_eq!(all, "read bash mcp.tiny.picture mcp.tiny.fail");
    assert_eq!(offered("read").0, "read");
    assert_eq!(
        offered("read,mcp.tiny.*").0,
        "read mcp.tiny.picture mcp.tiny.fail"
    );
    let (one, err) = offered("mcp.tiny.picture,mcp.tiny.nothing");
    assert_eq!(one, "mcp.tiny.picture");
    assert!(
        err.contains("agent-loop: --tools names `mcp.tiny.nothing`, which no MCP server offers"),
        "{err}"
    );
}

/// Every file under `dir`.
pub fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
