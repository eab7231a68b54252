//! The progress message of a turn whose calls need approval: a call is named with its tool
//! (`read: small.txt`), says it awaits approval while the question waits (never that it
//! runs), then whether the person allowed or denied it; a denied call is not a failure, and
//! one whose turn ended while its question waited says it was cancelled.

use super::mock::{Call, Mock};
use super::{Bot, ME};
use crate::common::{send_signal, Workspace};

/// Waits until a message sent or edited in the chat ends with `line`.
fn wait_shown(mock: &Mock, line: &str) {
    mock.wait_for(&format!("a progress line {line:?}"), |calls| {
        calls
            .iter()
            .any(|c| c.chat() == ME && c.text().ends_with(line))
            .then_some(())
    });
}

#[test]
fn a_call_awaiting_approval_says_so_and_then_what_was_decided() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("small.txt"), "small\n").unwrap();
    let call = |tool: &str, args: &str| {
        format!("<tool_call>{{\"name\":\"{tool}\",\"arguments\":{args}}}</tool_call>\n")
    };
    ws.reply(
        1,
        call("read", r#"{"path":"small.txt"}"#)
            + &call("bash", r#"{"command":"touch denied.txt"}"#),
    );
    ws.reply(2, call("bash", r#"{"command":"touch allowed.txt"}"#));
    ws.reply(3, "done\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "go");
    // While a question waits, its call's line says so (the reporter sends it on its own).
    let first = mock.question(0);
    wait_shown(&mock, "\nbash: touch denied.txt (awaiting approval)");
    mock.press(ME, ME, first.message_id, &first.button("Deny"));
    let second = mock.question(1);
    wait_shown(&mock, "\nbash: touch allowed.txt (awaiting approval)");
    mock.press(ME, ME, second.message_id, &second.button("Allow"));
    mock.wait_sent(ME, "done");
    assert!(!ws.work().join("denied.txt").exists());
    assert!(ws.work().join("allowed.txt").exists());
    // What the chat shows at the end: the questions with their answers, one progress message
    // with every call, sent with the first and edited since, and the answer.
    let shown = mock.shown(ME);
    let progress: Vec<&String> = shown.iter().filter(|t| t.starts_with("read: ")).collect();
    assert_eq!(
        progress,
        ["read: small.txt\nbash: touch denied.txt (denied)\nbash: touch allowed.txt (allowed)"],
        "{shown:#?}"
    );
    assert_eq!(shown.last().unwrap(), "done");
    // At no time did a line say a call runs, or that the denied one failed.
    let calls = mock.calls();
    for text in calls.iter().map(Call::text) {
        assert!(
            !text.contains("running") && !text.contains("failed"),
            "{text:?}"
        );
    }
    assert_eq!(bot.terminate(), 0);
}

/// A call that fails is still told as failing; one that needs no approval has no state.
#[test]
fn a_failed_call_is_told_and_an_allowed_tool_has_no_state() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"exit 3\"}}</tool_call>\n",
    );
    ws.reply(2, "it failed\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake", "--yes"]);
    mock.message(ME, ME, "fail");
    mock.wait_sent(ME, "it failed");
    let shown = mock.shown(ME);
    let answer = shown.iter().position(|t| t == "it failed").unwrap();
    assert_eq!(shown[answer - 1], "bash: exit 3\nbash failed", "{shown:#?}");
    assert_eq!(bot.terminate(), 0);
}

/// A turn that ends while its question waits, by /stop or by the bot shutting down: the
/// call's line says it was cancelled, not that it awaits approval still, and so does the
/// question, its buttons gone. A press on one of them after /stop is answered (Telegram
/// shows a spinner until it is) and changes nothing.
#[test]
fn a_question_the_turn_left_open_says_cancelled() {
    for stop in ["/stop", "SIGTERM"] {
        let ws = Workspace::new();
        ws.reply(
            1,
            "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"touch never.txt\"}}</tool_call>\n",
        );
        let mock = Mock::start();
        let mut bot = Bot::start(&ws, &mock, &["--backend", "fake", "--drain-timeout", "0"]);
        mock.message(ME, ME, "go");
        let question = mock.question(0);
        wait_shown(&mock, "bash: touch never.txt (awaiting approval)");
        let end = match stop {
            "/stop" => {
                mock.message(ME, ME, "/stop");
                mock.wait_sent(ME, "Stopped.")
            }
            _ => {
                send_signal(bot.child.id(), libc::SIGTERM);
                assert_eq!(bot.wait(), 0, "{}", bot.stderr());
                mock.wait_sent(ME, "shutting down")
            }
        };
        let shown = mock.shown(ME);
        let progress: Vec<&String> = shown.iter().filter(|t| t.starts_with("bash: ")).collect();
        assert_eq!(
            progress,
            ["bash: touch never.txt (cancelled)"],
            "{stop}: {shown:#?}"
        );
        assert_eq!(shown.last(), Some(&end), "{stop}");
        let calls = mock.calls();
        let edits: Vec<&Call> = (calls.iter())
            .filter(|c| {
                c.method == "editMessageText" && c.body["message_id"] == question.message_id
            })
            .collect();
        assert!(
            edits.len() == 1
                && edits[0].text() == format!("{}\n(cancelled)", question.text())
                && edits[0].body["reply_markup"].is_null(),
            "{stop}: {edits:#?}"
        );
        if stop == "/stop" {
            let before = calls.len();
            mock.press(ME, ME, question.message_id, &question.button("Allow"));
            let answered = mock.wait_for("the stale press answered", |calls| {
                (calls.iter())
                    .find(|c| c.method == "answerCallbackQuery")
                    .cloned()
            });
            assert!(answered.text().contains("no longer open"), "{answered:?}");
            // Answering it was all the press did: no run, no message, no edit.
            assert_eq!(bot.terminate(), 0);
            let after = mock.calls();
            let others: Vec<&Call> = (after[before..].iter())
                .filter(|c| !["answerCallbackQuery", "sendChatAction"].contains(&c.method.as_str()))
                .collect();
            assert!(others.is_empty(), "{others:#?}");
            assert_eq!(ws.runs(), 1);
        } else {
            assert_eq!(bot.terminate(), 0);
        }
        assert!(!ws.work().join("never.txt").exists());
    }
}

/// /stop while a tool runs: its line says it was cancelled, and the result the cancelled turn
/// gives it ("not run") is no failure to show.
#[test]
fn a_running_tool_stopped_says_cancelled_not_failed() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"sleep 30\"}}</tool_call>\n",
    );
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake", "--yes"]);
    mock.message(ME, ME, "go");
    wait_shown(&mock, "bash: sleep 30");
    ws.wait_for_process("sleep");
    mock.message(ME, ME, "/stop");
    let end = mock.wait_sent(ME, "Stopped.");
    let shown = mock.shown(ME);
    let progress: Vec<&String> = shown.iter().filter(|t| t.starts_with("bash")).collect();
    assert_eq!(progress, ["bash: sleep 30 (cancelled)"], "{shown:#?}");
    assert_eq!(shown.last(), Some(&end));
    assert_eq!(bot.terminate(), 0);
}
