//! The plain display's own tests: what reaches stdout and stderr, byte for byte.

use super::*;
use crate::cli::display::shared::Captured;

#[test]
fn tokens_unknown_when_nothing_was_reported() {
    assert_eq!(tokens(None, None), "tokens unknown");
    assert_eq!(tokens(Some(0), Some(0)), "tokens unknown");
    assert_eq!(tokens(Some(12), None), "tokens in 12 / out ?");
    assert_eq!(tokens(Some(12), Some(3)), "tokens in 12 / out 3");
}
fn display() -> (PlainDisplay, Captured, Captured) {
    let (out, err) = (Captured::default(), Captured::default());
    let d = PlainDisplay::new(out.boxed(), err.boxed());
    (d, out, err)
}

fn delta(text: &str) -> Event {
    Event::TextDelta {
        backend: "b".into(),
        text: text.into(),
    }
}

#[test]
fn own_lines_break_at_spaces_on_a_terminal_and_answers_stay_whole() {
    let long = "one two three four five six seven eight nine ten eleven twelve";
    let show = |fit: WidthFn| {
        let (mut d, out, err) = display();
        d.fit_width = fit;
        d.render(&Event::ContextNotice {
            message: long.into(),
        });
        d.notice(long);
        d.render(&Event::Text {
            text: long.into(),
            final_answer: false,
        });
        d.render(&Event::Text {
            text: long.into(),
            final_answer: true,
        });
        (out.text(), err.text())
    };
    // 40 columns: lines of 39 at most, the rest hanging two columns in.
    let (out, err) = show(|| Some(40));
    assert_eq!(out, format!("{long}\n"));
    assert_eq!(
        err,
        format!(
            "[context: one two three four five six\n  seven eight nine ten eleven twelve]\n\
             one two three four five six seven eight\n  nine ten eleven twelve\n{long}\n"
        )
    );
    // A pipe: every line whole.
    let (_, err) = show(|| None);
    assert_eq!(err, format!("[context: {long}]\n{long}\n{long}\n"));
}

#[test]
fn an_approval_is_laid_out_at_the_terminals_width_of_the_moment() {
    let request = ApprovalRequest {
        call: agent_loop::chat::ToolCall {
            id: "c".into(),
            name: "bash".into(),
            args: serde_json::json!({ "command": "x" }),
        },
        summary: "echo ".repeat(20),
        change: None,
    };
    let widest = |fit: WidthFn| {
        let (mut d, _, err) = display();
        d.fit_width = fit;
        d.approval_prompt(&request, false);
        let text = err.text();
        let lines = text.lines().filter(|l| l.starts_with("  | "));
        lines.map(str::len).max().unwrap()
    };
    // The terminal's width (a phone turned to 40 columns), else the width given.
    assert!(widest(|| Some(40)) <= 40);
    assert!(widest(|| None) > 40);
}

#[test]
fn streamed_text_is_shown_once_and_its_line_ended() {
    let (mut d, out, err) = display();
    d.render(&delta("Hel"));
    // A streaming CLI's own lines and a waiting line come between its pieces: the
    // answer's bytes on stdout stay as they were streamed.
    d.render(&Event::BackendOutput {
        backend: "b".into(),
        stream: OutputStream::Stdout,
        line: "{\"type\":\"delta\"}".into(),
    });
    d.render(&Event::Waiting {
        backend: "b".into(),
        elapsed_s: 10,
    });
    d.render(&delta("lo\x1b[31m"));
    d.render(&Event::Text {
        text: "Hello\x1b[31m".into(),
        final_answer: true,
    });
    assert_eq!(out.text(), "Hello[31m\n");
    assert_eq!(err.text(), "");
    // A later reply that did not stream is printed as usual.
    d.render(&Event::BackendStarted {
        backend: "b".into(),
        iteration: 2,
    });
    d.render(&Event::Text {
        text: "whole".into(),
        final_answer: true,
    });
    assert_eq!(out.text(), "Hello[31m\nwhole\n");
}

#[test]
fn crlf_split_across_deltas_is_one_newline_and_a_lone_cr_becomes_one() {
    let (mut d, out, _) = display();
    d.render(&delta("a\r"));
    d.render(&delta("\nb\r"));
    d.render(&delta("c\r"));
    d.render(&Event::Error {
        message: "cut".into(),
        kind: agent_loop::ErrorKind::Backend,
    });
    assert_eq!(out.text(), "a\nb\nc\n");
}

#[test]
fn retry_waits_are_shown() {
    let (mut d, _, err) = display();
    for wait_ms in [2000, 1500, 20] {
        d.render(&Event::Retrying {
            backend: "claude-api".into(),
            retry: 1,
            retries: 2,
            wait_ms,
            reason: "HTTP 429".into(),
        });
    }
    assert_eq!(
        err.text(),
        "[retrying claude-api in 2s after HTTP 429 (retry 1 of 2)]\n\
         [retrying claude-api in 1.5s after HTTP 429 (retry 1 of 2)]\n\
         [retrying claude-api in 20ms after HTTP 429 (retry 1 of 2)]\n"
    );
}

#[test]
fn a_question_in_the_middle_of_an_answer_leaves_its_bytes_alone() {
    let (mut d, out, err) = display();
    d.render(&delta("Hel"));
    let request = ApprovalRequest {
        call: agent_loop::chat::ToolCall {
            id: "c".into(),
            name: "bash".into(),
            args: serde_json::json!({ "command": "ls" }),
        },
        summary: "ls".into(),
        change: None,
    };
    d.approval_prompt(&request, false);
    d.render(&delta("lo"));
    assert_eq!(out.text(), "Hello");
    assert!(err.text().starts_with("\nAllow bash?"), "{}", err.text());
}

#[test]
fn lines_beside_an_open_answer_break_it_once_and_keep_their_order() {
    let (mut d, out, err) = display();
    d.verbose = true;
    let line = |stream, line: &str| Event::BackendOutput {
        backend: "b".into(),
        stream,
        line: line.into(),
    };
    d.render(&Event::ThinkingDelta {
        backend: "b".into(),
        text: "I should look".into(),
    });
    d.render(&line(OutputStream::Screen, "(read foo)"));
    d.render(&delta("Hel"));
    d.render(&line(OutputStream::StreamedStdout, "one"));
    d.render(&line(OutputStream::StreamedStdout, "two"));
    d.render(&delta("lo"));
    d.render(&line(OutputStream::StreamedStdout, "three"));
    assert_eq!(out.text(), "Hello");
    // The thinking before the line that followed it; one break after each piece.
    let thought = err.text().find("I should look").unwrap();
    assert!(
        thought < err.text().find("(read foo)").unwrap(),
        "{}",
        err.text()
    );
    assert!(
        err.text()
            .ends_with("[b] (read foo)\n\n[b] one\n[b] two\n\n[b] three\n"),
        "{:?}",
        err.text()
    );
}

/// What a tool call, its result and a server's progress show of untrusted text stays on its
/// own line: a bare carriage return cannot start a line of the sender's choosing (a fake
/// `[tool ...]` line), and direction overrides cannot reorder it.
#[test]
fn a_bare_cr_or_a_direction_override_starts_no_line_and_reorders_nothing() {
    let (mut d, _, err) = display();
    let call = agent_loop::chat::ToolCall {
        id: "c".into(),
        name: "bash".into(),
        args: serde_json::json!({ "command": "echo a\rtouch pwn" }),
    };
    d.render(&Event::ToolCall {
        call,
        summary: "echo a\rtouch pwn \u{202e}txt.exe".into(),
    });
    d.render(&Event::ToolResult {
        call_id: "c".into(),
        tool: "bash".into(),
        ok: true,
        output: "line\r[tool bash] rm -rf ~\r\nnext\n".into(),
        exit_code: Some(0),
    });
    d.render(&Event::ToolProgress {
        call_id: "c".into(),
        tool: "mcp.s.t".into(),
        progress: 1.0,
        total: Some(2.0),
        message: Some("prog\rY".into()),
    });
    assert_eq!(
        err.text(),
        "[tool bash] echo a\\rtouch pwn \\u{202e}txt.exe\n  line\\r[tool bash] rm -rf ~\n  \
         next\n  [progress 1/2 (50%) prog\\rY]\n"
    );
}

/// The same for the lines that carry what a server, an HTTP body or a TUI's screen sent: an
/// API's error body, a terminal agent's screen line, a retry's reason. An error keeps its
/// own line breaks (a CLI's stderr), but a bare CR is shown, not obeyed.
#[test]
fn errors_and_backend_lines_show_a_bare_cr_and_start_no_line() {
    let (mut d, _, err) = display();
    d.render(&Event::Error {
        message: "HTTP 401: bad key \u{1b}[31mred line\rX\nstderr: two".into(),
        kind: agent_loop::ErrorKind::Backend,
    });
    d.render(&Event::BackendOutput {
        backend: "tui".into(),
        line: "? Allow\r[tool bash] ls \u{202e}exe".into(),
        stream: OutputStream::Screen,
    });
    d.render(&Event::Retrying {
        backend: "api".into(),
        retry: 1,
        retries: 2,
        wait_ms: 1000,
        reason: "HTTP 503\rfake".into(),
    });
    assert_eq!(
        err.text(),
        "error: HTTP 401: bad key [31mred line\\rX\nstderr: two\n[tui] ? Allow\\r[tool bash] ls \
         \\u{202e}exe\n[retrying api in 1s after HTTP 503\\rfake (retry 1 of 2)]\n"
    );
}
