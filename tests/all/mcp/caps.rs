//! The caps on what an MCP server sends, each against a server that floods it
//! (fixtures/mcp/flood-server.js): one endless stdout line, 256 MiB of stderr (four times the peak allowed), an endless
//! tool list, a tool list too large, an endless JSON body and an endless event. Each time the
//! server (or the call) fails with a message naming the cap, and agent-loop's own peak memory,
//! measured as the other flood tests do, stays under 64 MiB. The measure also holds the peak
//! of the server, which agent-loop reaps (node alone is some 45 MiB), so the fixture writes its
//! floods a piece at a time.

use super::{call, server, walk, HttpServer};
use crate::common::{fixture, Workspace};

/// agent-loop's own peak memory must stay under this, whatever a server sends.
const PEAK_KIB: u64 = 64 * 1024;

fn flood() -> String {
    fixture("mcp/flood-server.js").display().to_string()
}

/// Runs one turn with `ws`'s config, measured; its stderr and peak memory in KiB.
fn measured_turn(ws: &Workspace) -> (String, String, u64) {
    let (run, peak_kib) = ws.run_measured(ws.cmd(&["--backend", "fake", "go"]));
    run.expect_code(0);
    eprintln!("agent-loop peak RSS {} MiB", peak_kib >> 10);
    (run.stdout(), run.stderr(), peak_kib)
}

fn assert_bounded(peak_kib: u64) {
    assert!(peak_kib < PEAK_KIB, "peak RSS {peak_kib} KiB");
}

#[test]
fn an_endless_stdout_line_fails_the_server_at_its_cap() {
    let ws = Workspace::new();
    ws.add_config(&server("flood", &flood(), "args = ['line']"));
    ws.reply(1, "Fine without it.\n");
    let (out, err, peak) = measured_turn(&ws);
    assert_eq!(out, "Fine without it.\n");
    assert!(
        err.contains(
            "MCP server `flood` did not start, its tools are left out: it sent a line longer \
             than 16 MiB, the cap on one message"
        ),
        "{err}"
    );
    assert_bounded(peak);
}

#[test]
fn a_flood_of_stderr_keeps_a_bounded_tail() {
    let ws = Workspace::new();
    ws.add_config(&server(
        "flood",
        &flood(),
        // Writing and draining the flood takes what the machine takes: no call timeout
        // may cut it short.
        "args = ['stderr']\ntrust = true\ntimeout_s = 3600",
    ));
    // `ok` is answered once the whole flood is written; `bye` exits after one more MiB
    // without a newline.
    ws.reply(1, call("mcp.flood.ok", "{}") + &call("mcp.flood.bye", "{}"));
    ws.reply(2, "Done.\n");
    let (_, _, peak) = measured_turn(&ws);
    let second = ws.prompt(2);
    assert!(second.contains("ok from ok"), "{second}");
    let (_, bye) = second
        .split_once("name=\"mcp.flood.bye\" status=\"error\">")
        .expect("bye's result is an error");
    let bye = bye.split("</tool_result>").next().unwrap();
    assert!(bye.contains("its stderr ended with:"), "{bye}");
    assert!(bye.contains("flood: the end of stderr"), "{bye}");
    // 20 lines of at most 2 KiB each, cut with an ellipsis (the note ends the result, in
    // brackets).
    assert!(bye.len() < 50_000, "{} bytes", bye.len());
    assert!(
        bye.trim_end().ends_with("…)"),
        "{}",
        &bye[bye.len() - 100..]
    );
    // Nor does the session's log or any file hold more than that.
    let saved: u64 = walk(&ws.path(""))
        .iter()
        .map(|f| f.metadata().unwrap().len())
        .max()
        .unwrap();
    assert!(saved < 2 << 20, "a file of {saved} bytes");
    assert_bounded(peak);
}

#[test]
fn an_endless_tool_list_fails_the_server_at_its_count() {
    let ws = Workspace::new();
    ws.add_config(&server("flood", &flood(), "args = ['tools']"));
    ws.reply(1, "Fine.\n");
    let (_, err, peak) = measured_turn(&ws);
    assert!(
        err.contains(
            "`flood` did not start, its tools are left out: listing its tools failed: it offers \
             more than 1000 tools, the cap on one server's tools"
        ),
        "{err}"
    );
    assert_bounded(peak);
}

#[test]
fn a_tool_list_too_large_fails_the_server_at_its_size() {
    let ws = Workspace::new();
    ws.add_config(&server("flood", &flood(), "args = ['wide']"));
    ws.reply(1, "Fine.\n");
    let (_, err, peak) = measured_turn(&ws);
    assert!(
        err.contains("its tool list passed 4 MiB, the cap on one server's tools"),
        "{err}"
    );
    assert_bounded(peak);
}

fn http_flood(ws: &Workspace, mode: &str) -> HttpServer {
    let http = HttpServer::start(&fixture("mcp/flood-server.js"), &[mode], &[]);
    ws.add_config(&format!("\n[mcp.servers.flood]\nurl = '{}'\n", http.url));
    ws.reply(1, "Fine.\n");
    http
}

#[test]
fn an_endless_json_body_fails_the_server_at_its_cap() {
    let ws = Workspace::new();
    let _http = http_flood(&ws, "body");
    let (_, err, peak) = measured_turn(&ws);
    assert!(
        err.contains("its reply passed 16 MiB, the cap on one body"),
        "{err}"
    );
    assert_bounded(peak);
}

#[test]
fn an_endless_event_fails_the_server_at_its_cap() {
    let ws = Workspace::new();
    let _http = http_flood(&ws, "event");
    let (_, err, peak) = measured_turn(&ws);
    assert!(
        err.contains("it sent an event longer than 16 MiB, the cap on one event"),
        "{err}"
    );
    assert_bounded(peak);
}
