//! The MCP client's protocol handling (rmcp's, through agent-loop's transports), against
//! fixture servers that do what the real ones may: a server's requests to the client (`ping`,
//! `roots/list`) over stdio and inside an event stream, a stray line on stdout, a server with
//! no tools, a timed-out call cancelled on the server, tools listed in pages and listed again
//! when they change, a tool name given twice, the session and revision headers of Streamable
//! HTTP, an event stream resumed from its last event, a session the server forgot begun again,
//! a redirect to another origin, and a server whose only output is a banner on stdout.

use serde_json::{json, Value};

use super::{call, server, tiny, HttpServer};
use crate::common::{fixture, Workspace};

/// The JSON lines a fixture server logged.
fn logged(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the server wrote its log");
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The tiny stdio server as `tiny`, trusted, with calls' `timeout_s` and logging what it
/// gets to the file returned.
fn logging_tiny(ws: &Workspace, timeout_s: u32) -> std::path::PathBuf {
    let log = ws.path("notifications");
    // The fake agent's third prompt: `stall` ends when it is written.
    let third = ws.path("fake").join("prompt.3");
    ws.add_config(&server(
        "tiny",
        &tiny(),
        &format!(
            "trust = true\ntimeout_s = {timeout_s}\nenv = {{ TINY_LOG_FILE = '{}', \
             TINY_STALL_UNTIL = '{}' }}",
            log.display(),
            third.display()
        ),
    ));
    log
}

#[test]
fn a_stdio_servers_ping_is_answered_and_its_stray_output_passed_over() {
    let ws = Workspace::new();
    ws.add_config(&server("tiny", &tiny(), "trust = true"));
    ws.reply(1, call("mcp.tiny.asking", "{}"));
    ws.reply(2, "Answered.\n");
    let run = ws.run(&["--backend", "fake", "ask"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "Answered.\n");
    let second = ws.prompt(2);
    assert!(
        second.contains("name=\"mcp.tiny.asking\" status=\"ok\">\npong: {}\n"),
        "{second}"
    );
    assert!(!run.stderr().contains("not JSON-RPC"), "{}", run.stderr());
}

#[test]
fn a_server_without_tools_is_not_asked_for_them() {
    let ws = Workspace::new();
    ws.add_config(&server("prompts", &tiny(), "args = ['no-tools']"));
    ws.add_config(&server("tiny", &tiny(), "trust = true"));
    ws.reply(1, "Fine.\n");
    let run = ws.run(&["--backend", "fake", "anything"]);
    run.expect_code(0);
    // It declared prompts only: running with no tools, not failed on a refused tools/list.
    assert!(!run.stderr().contains("did not start"), "{}", run.stderr());
    let first = ws.prompt(1);
    assert!(!first.contains("mcp.prompts."), "{first}");
    assert!(first.contains("\n## mcp.tiny.picture\n"), "{first}");
}

#[test]
fn a_call_that_times_out_is_cancelled_on_the_server() {
    let ws = Workspace::new();
    let log = logging_tiny(&ws, 1);
    ws.reply(1, call("mcp.tiny.hang", "{}"));
    // A second call after it: the server reads its stdin in order, so by its answer the
    // cancellation has been read too.
    ws.reply(2, call("mcp.tiny.picture", "{}"));
    ws.reply(3, "Done.\n");
    ws.run(&["--backend", "fake", "try"]).expect_code(0);
    assert!(
        ws.prompt(3).contains("here is a picture"),
        "{}",
        ws.prompt(3)
    );
    let methods: Vec<Value> = logged(&log);
    assert_eq!(methods[0]["method"], "notifications/initialized");
    let cancelled = &methods[1];
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{methods:?}"
    );
    assert_eq!(cancelled["params"]["reason"], "request timeout");
    // Its id is the hung call's: the one after initialize (0) and tools/list (1).
    assert_eq!(cancelled["params"]["requestId"], 2);
}

#[test]
fn a_call_abandoned_mid_write_leaves_no_half_line_behind() {
    let ws = Workspace::new();
    let log = logging_tiny(&ws, 2);
    // The server stops reading until the third turn; 300 KB of arguments fill the pipe, and
    // the call runs out of its 2 s with the message half written.
    ws.reply(1, call("mcp.tiny.stall", "{}"));
    let big = json!({ "note": "x".repeat(300_000) }).to_string();
    ws.reply(2, call("mcp.tiny.picture", &big));
    ws.reply(3, call("mcp.tiny.picture", "{}"));
    ws.reply(4, "Done.\n");
    ws.run(&["--backend", "fake", "try"]).expect_code(0);
    let third = ws.prompt(3);
    assert!(
        third.contains("MCP server `tiny` gave no answer within 2s"),
        "{third}"
    );
    // The rest of it, and the cancellation, reached the server whole once it read again, and
    // the next call went through.
    let fourth = ws.prompt(4);
    assert!(
        fourth.contains("name=\"mcp.tiny.picture\" status=\"ok\">\nhere is a picture"),
        "{fourth}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("BAD LINE"), "{text}");
}

#[test]
fn streamable_http_sessions_events_pages_and_resumption() {
    let ws = Workspace::new();
    let log = ws.path("requests");
    let http = HttpServer::start(
        &fixture("mcp/tiny-http-server.js"),
        &[],
        &[("TINY_LOG_FILE", &log)],
    );
    ws.add_config(&format!(
        "\n[mcp.servers.web]\nurl = '{}'\ntrust = true\n",
        http.url
    ));
    ws.reply(
        1,
        call("mcp.web.echo", r#"{"message":"one"}"#)
            + &call("mcp.web.asking", "{}")
            + &call("mcp.web.resume", "{}")
            + &call("mcp.web.broken", "{}")
            + &call("mcp.web.poll", "{}")
            + &call("mcp.web.vanish", "{}")
            + &call("mcp.web.forget", "{}"),
    );
    ws.reply(2, call("mcp.web.echo", r#"{"message":"two"}"#));
    ws.reply(3, "Done.\n");
    ws.run(&["--backend", "fake", "go"]).expect_code(0);

    // Both pages of the tool list were read.
    let first = ws.prompt(1);
    assert!(first.contains("\n## mcp.web.echo\n"), "{first}");
    assert!(first.contains("\n## mcp.web.forget\n"), "{first}");
    let second = ws.prompt(2);
    for result in [
        "name=\"mcp.web.echo\" status=\"ok\">\necho: one\n",
        // The server's ping, sent in the call's event stream, was answered.
        "name=\"mcp.web.asking\" status=\"ok\">\npong: {}\n",
        // Each stream ended or broke before its answer, after an event with an id (e1 was
        // nothing but its id); the answer came on a stream resumed from it, for p1 on the
        // second one.
        "name=\"mcp.web.resume\" status=\"ok\">\nresumed from e1\n",
        "name=\"mcp.web.broken\" status=\"ok\">\nresumed from b1\n",
        "name=\"mcp.web.poll\" status=\"ok\">\nresumed from p1\n",
        // A request that failed is an error result, and the server is not taken for gone:
        // the next call went through.
        "name=\"mcp.web.vanish\" status=\"error\">\nmcp.web.vanish: the request to MCP server `web` failed: ",
        "name=\"mcp.web.forget\" status=\"ok\">\nforgotten\n",
    ] {
        assert!(second.contains(result), "{result}\n{second}");
    }
    // The session the server forgot was begun again, and the call went through.
    let third = ws.prompt(3);
    assert!(
        third.contains("name=\"mcp.web.echo\" status=\"ok\">\necho: two\n"),
        "{third}"
    );

    let requests = logged(&log);
    let shown: Vec<String> = requests
        .iter()
        .map(|r| {
            let field = |k: &str| r[k].as_str().unwrap_or("-").to_string();
            [
                field("http"),
                field("method"),
                field("session"),
                field("version"),
                field("lastEvent"),
            ]
            .join(" ")
        })
        // The stream a client opens for the server's own messages (which this server does
        // not offer: 405), after each handshake.
        .filter(|r| !(r.starts_with("GET ") && r.ends_with(" -")))
        .collect();
    let expected = [
        "POST initialize - - -",
        // After the handshake every request names the session and the revision the server
        // chose (2025-06-18), not the one the client asked for.
        "POST notifications/initialized s1 2025-06-18 -",
        "POST tools/list s1 2025-06-18 -",
        "POST tools/list s1 2025-06-18 -",
        "POST tools/call s1 2025-06-18 -",
        "POST tools/call s1 2025-06-18 -",
        "POST answer s1 2025-06-18 -",
        "POST tools/call s1 2025-06-18 -",
        "GET - s1 2025-06-18 e1",
        "POST tools/call s1 2025-06-18 -",
        "GET - s1 2025-06-18 b1",
        "POST tools/call s1 2025-06-18 -",
        "GET - s1 2025-06-18 p1",
        "GET - s1 2025-06-18 p1",
        "POST tools/call s1 2025-06-18 -",
        "POST tools/call s1 2025-06-18 -",
        "POST tools/call s1 2025-06-18 -",
        "POST initialize - - -",
        "POST notifications/initialized s2 2025-06-18 -",
        "POST tools/call s2 2025-06-18 -",
    ];
    assert_eq!(shown[..expected.len()], expected, "{shown:#?}");
    // No gzip: a compressed event stream could hold the server's own requests back.
    assert!(
        requests.iter().all(|r| r["encoding"].is_null()),
        "{requests:?}"
    );
}

#[test]
fn a_tool_name_given_twice_loses_no_other_servers_tools() {
    let ws = Workspace::new();
    let flood = fixture("mcp/flood-server.js").display().to_string();
    ws.add_config(&server("twice", &flood, "args = ['twice']"));
    ws.add_config(&server("tiny", &tiny(), ""));
    ws.reply(1, "Fine.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    assert!(
        run.stderr().contains(
            "agent-loop: MCP server `twice`: it offers two tools named `ok`; the second was left out"
        ),
        "{}",
        run.stderr()
    );
    // Two names an HTTP API would know by one: the second is left out as well.
    assert!(
        run.stderr().contains(
            "agent-loop: MCP server `twice`: tools `mcp.twice.a.b` and `mcp.twice.a__b` would \
             both be called `mcp__twice__a__b` by an HTTP API; the second was left out"
        ),
        "{}",
        run.stderr()
    );
    let first = ws.prompt(1);
    for tool in [
        "mcp.twice.ok",
        "mcp.twice.other",
        "mcp.twice.a.b",
        "mcp.tiny.picture",
    ] {
        assert!(first.contains(&format!("\n## {tool}\n")), "{tool}\n{first}");
    }
    assert!(first.contains("first"), "{first}");
    assert!(!first.contains("second"), "{first}");
    assert!(!first.contains("mcp.twice.a__b"), "{first}");
}

/// A tool whose name MCP does not allow is passed over with a note, its name escaped; the
/// descriptions of the others reach the prompt as plain text.
#[test]
fn tools_with_names_mcp_does_not_allow_are_passed_over() {
    let ws = Workspace::new();
    let flood = fixture("mcp/flood-server.js").display().to_string();
    ws.add_config(&server("names", &flood, "args = ['names']"));
    ws.reply(1, "Fine.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    let err = run.stderr();
    for shown in [
        "\"new\\nline\"",
        "\"esc\\u{1b}[31mred\"",
        "\"a\\u{202e}b\"",
        "\"star*\"",
        "\"safe:x\"",
        &format!("\"{}\"… (300 characters)", "x".repeat(40)),
        "\"\",",
    ] {
        assert!(
            err.contains(&format!(
                "agent-loop: MCP server `names`: it offers a tool named {shown}"
            )),
            "{shown}\n{err}"
        );
    }
    assert_eq!(err.matches("not a name MCP allows").count(), 7, "{err}");
    let first = ws.prompt(1);
    assert!(
        first.contains("\n## mcp.names.fine\nFine [2Jway\n## not a tool\n"),
        "{first}"
    );
    assert_eq!(first.matches("\n## mcp.names.").count(), 1, "{first}");
    assert!(
        !first.contains('\x1b') && !first.contains('\u{202e}'),
        "{first}"
    );
}

#[test]
fn a_redirect_to_another_origin_is_not_followed() {
    let ws = Workspace::new();
    let http = HttpServer::start(&fixture("mcp/flood-server.js"), &["redirect"], &[]);
    ws.add_config(&format!("\n[mcp.servers.moved]\nurl = '{}'\n", http.url));
    ws.reply(1, "Fine.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    let port = http
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    assert!(
        run.stderr().contains(&format!(
            "it redirected to http://127.0.0.2:{port}/mcp, another origin; MCP requests follow \
             redirects only within the server's own"
        )),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_changed_tool_list_is_read_before_the_next_turn_and_roots_are_the_folder() {
    let ws = Workspace::new();
    ws.add_config(&server(
        "tiny",
        &tiny(),
        "args = ['changing']\ntrust = true",
    ));
    ws.reply(
        1,
        call("mcp.tiny.roots", "{}") + &call("mcp.tiny.grow", "{}"),
    );
    ws.reply(2, "Grown.\n");
    ws.reply(3, call("mcp.tiny.grown", "{}"));
    ws.reply(4, "Done.\n");
    let (code, screen) = crate::repl::repl(&ws, "--backend fake", "go\nagain\nexit\n");
    assert_eq!(code, 0, "{screen}");
    // roots/list was answered with the working folder.
    let second = ws.prompt(2);
    let root = format!("file://{}/", ws.work().display());
    assert!(
        second.contains(&format!(
            "roots: {{\"roots\":[{{\"uri\":\"{root}\",\"name\":\"work\"}}]}}"
        )),
        "{second}"
    );
    // The tool the server added after the first turn's list is offered in the second turn,
    // and runs.
    assert!(
        !ws.prompt(1).contains("## mcp.tiny.grown"),
        "{}",
        ws.prompt(1)
    );
    assert!(
        ws.prompt(3).contains("\n## mcp.tiny.grown\n"),
        "{}",
        ws.prompt(3)
    );
    assert!(
        ws.prompt(4).contains("the new tool ran"),
        "{}",
        ws.prompt(4)
    );
}

#[test]
fn roots_are_the_root_given_and_the_folder_when_that_is_anywhere() {
    // `--root DIR` names DIR; `--root /` (anywhere) names the working folder.
    for anywhere in [false, true] {
        let ws = Workspace::new();
        ws.add_config(&server(
            "tiny",
            &tiny(),
            "args = ['changing']\ntrust = true",
        ));
        let sub = ws.work().join("project");
        std::fs::create_dir(&sub).unwrap();
        ws.reply(1, call("mcp.tiny.roots", "{}"));
        ws.reply(2, "Done.\n");
        let sub_arg = sub.display().to_string();
        let root = if anywhere { "/" } else { sub_arg.as_str() };
        ws.run(&["--backend", "fake", "--root", root, "go"])
            .expect_code(0);
        let (folder, name) = if anywhere {
            (ws.work(), "work")
        } else {
            (sub, "project")
        };
        let uri = format!("file://{}/", folder.display());
        let second = ws.prompt(2);
        assert!(
            second.contains(&format!(
                "roots: {{\"roots\":[{{\"uri\":\"{uri}\",\"name\":\"{name}\"}}]}}"
            )),
            "{second}"
        );
    }
}

#[test]
fn a_block_of_an_unknown_kind_is_named_and_the_rest_kept() {
    let ws = Workspace::new();
    ws.add_config(&server(
        "tiny",
        &tiny(),
        "args = ['progress']\ntrust = true",
    ));
    ws.reply(1, call("mcp.tiny.strange", "{}"));
    ws.reply(2, "Done.\n");
    ws.run(&["--backend", "fake", "go"]).expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains("status=\"ok\">\nbefore\n[hologram content]\nafter\n"),
        "{second}"
    );
}

/// A server's command that is a file but cannot be run is said to be so, not "not on PATH",
/// which would send the user looking for it.
#[test]
fn a_command_that_is_there_but_cannot_be_run_says_so() {
    let ws = Workspace::new();
    let file = ws.path("not-a-program");
    std::fs::write(&file, "plain text\n").unwrap();
    ws.add_config(&server("plain", &file.display().to_string(), ""));
    ws.reply(1, "Nothing to do.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    let err = run.stderr();
    assert!(
        err.contains("MCP server `plain` did not start") && err.contains("Permission denied"),
        "{err}"
    );
    assert!(!err.contains("is not on PATH"), "{err}");
}

/// A server that writes a banner on stdout and then never answers: the timeout names the
/// line it wrote, which rmcp passed over as not JSON-RPC, escaped and cut short. (3 s: the
/// line is read as soon as the server writes it, well within that on a loaded machine.)
#[test]
fn a_server_that_only_writes_a_banner_is_told_by_it() {
    let ws = Workspace::new();
    let script = r"printf 'Banner \\033[1mv2\\033[0m %0200d\\n' 0; cat";
    ws.add_config(&format!(
        "\n[mcp.servers.chatty]\ncommand = 'sh'\nargs = [\"-c\", \"{script}\"]\n\
         startup_timeout_s = 3\n"
    ));
    ws.reply(1, "Fine without it.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    let err = run.stderr();
    let shown = format!(r#""Banner \u{{1b}}[1mv2\u{{1b}}[0m {}"…"#, "0".repeat(62));
    assert!(
        err.contains(&format!(
            "MCP server `chatty` did not start, its tools are left out: no answer within 3s \
             (its startup_timeout_s); on stdout it wrote {shown}, which is not JSON-RPC"
        )),
        "{err}"
    );
    assert!(!err.contains('\x1b'), "{err}");
}

/// A log line on stdout that starts as JSON does (`[INFO] ...`, a JSON logger's record) is no
/// JSON-RPC message either: the failure names it too.
#[test]
fn a_log_line_that_looks_like_json_is_named() {
    let ws = Workspace::new();
    for (name, line) in [
        ("bracket", "[INFO] server listening on stdio"),
        ("pino", r#"{"level":30,"msg":"started"}"#),
    ] {
        let script = format!("echo '{line}'; cat");
        ws.add_config(&format!(
            "\n[mcp.servers.{name}]\ncommand = 'sh'\nargs = [\"-c\", {}]\n\
             startup_timeout_s = 3\n",
            toml_string(&script)
        ));
    }
    ws.reply(1, "Fine without them.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    let err = run.stderr();
    assert!(
        err.contains(
            "MCP server `bracket` did not start, its tools are left out: no answer within 3s \
             (its startup_timeout_s); on stdout it wrote \"[INFO] server listening on stdio\", \
             which is not JSON-RPC"
        ),
        "{err}"
    );
    // rmcp refuses a JSON line that is no message at once, and says only that.
    assert!(
        err.contains(
            r#"MCP server `pino` did not start, its tools are left out: Invalid request; on stdout it wrote "{\"level\":30,\"msg\":\"started\"}", which is not JSON-RPC"#
        ),
        "{err}"
    );
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}
