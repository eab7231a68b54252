//! An ACP agent (fixtures/agents/fake-acp.py) behind the bot: /stop cancels its turn through
//! the chat's canceller (the agent gets `session/cancel`, the answer so far is kept), and a
//! permission question nobody answers gets the agent's reject option; the call it asks
//! about is one progress line, which the question's states edit, and what the agent does
//! anyway after a Deny is a line of its own; its plan and an answer cut short are told in the
//! progress message.

use serde_json::Value;

use super::mock::{Call, Mock};
use super::{Bot, ME};
use crate::common::{fixture, poll, Workspace};

fn acp() -> Workspace {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n",
        fixture("agents/fake-acp.py").display()
    ));
    ws
}

/// The methods the fake agent has received so far.
fn methods(ws: &Workspace) -> Vec<String> {
    std::fs::read_to_string(ws.path("fake/acp.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|m| m["method"].as_str().map(String::from))
        .collect()
}

#[test]
fn stop_sends_session_cancel_and_keeps_the_answer_so_far() {
    let ws = acp();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp"]);
    mock.message(ME, ME, "stoppable");
    // The agent's tool call in the progress message: the chunk before it has been taken.
    let running = poll(|| {
        let shown = mock.shown(ME);
        shown
            .iter()
            .any(|m| m.contains("waiting for the cancel"))
            .then_some(())
    });
    assert!(
        running.is_some(),
        "no tool call shown: {:?}",
        mock.shown(ME)
    );
    mock.message(ME, ME, "/stop");
    mock.wait_sent(ME, "Stopped.");
    let cancelled = poll(|| {
        methods(&ws)
            .contains(&"session/cancel".into())
            .then_some(())
    });
    assert!(cancelled.is_some(), "no session/cancel: {:?}", methods(&ws));
    // The agent keeps running for the next message.
    mock.message(ME, ME, "hello after");
    mock.wait_sent(ME, "You said: hello after");
    assert_eq!(bot.terminate(), 0);
    let session =
        std::fs::read_to_string(ws.path("data/agent-loop/sessions/telegram-42/session.json"))
            .unwrap();
    assert!(
        session.contains("partial answer\\n[turn cancelled by the user]"),
        "{session}"
    );
}

/// The progress message above `answer`, once the answer is in. It may be sent with all its
/// lines or sent and edited, at any pace; the turn's progress is all sent before its answer,
/// so the progress message comes before the answer.
fn progress_before(mock: &Mock, answer: &str) -> String {
    mock.wait_sent(ME, answer);
    let shown = mock.shown(ME);
    let at = shown.iter().position(|t| t.contains(answer)).unwrap();
    assert!(at > 0, "no progress before {answer:?}: {shown:#?}");
    shown[at - 1].clone()
}

/// The progress message that shows the `permission` call, as the chat shows it: there is one.
/// The question and the progress message go out at once, in either order.
fn call_line(mock: &Mock) -> String {
    let mut shown = mock.shown(ME);
    shown.retain(|t| t.starts_with("edit: WriteFile notes.txt [edit]"));
    assert_eq!(shown.len(), 1, "{shown:#?}");
    shown.remove(0)
}

#[test]
fn an_unanswered_permission_question_gets_the_agents_reject_option() {
    let ws = acp();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp", "--approval-timeout", "1"]);
    mock.message(ME, ME, "permission");
    mock.wait_sent(ME, "permission: cancel");
    // Nobody pressed Deny: the line does not say anybody did.
    let progress = call_line(&mock);
    assert!(progress.ends_with("] (not answered)"), "{progress}");
    assert_eq!(bot.terminate(), 0);
}

/// Real agents report a call (status `pending`) before they ask about it: its line is the
/// one that says it awaits approval (never that it runs), then that it was denied, and the
/// agent's `failed` report of the call it was refused is no failure to show.
#[test]
fn the_call_an_agent_asks_about_is_one_line_with_the_questions_states() {
    let ws = acp();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp"]);
    mock.message(ME, ME, "permission");
    let question = mock.question(0);
    let waiting = mock.wait_for("the call awaiting approval", |calls| {
        calls
            .iter()
            .find(|c| c.chat() == ME && c.text().ends_with("] (awaiting approval)"))
            .map(|c| c.text().to_string())
    });
    // In the question's words, its first line: what the agent reported under the call's id
    // before is the agent's to choose.
    let line = "edit: WriteFile notes.txt [edit]";
    assert_eq!(waiting, format!("{line} (awaiting approval)"));
    mock.press(ME, ME, question.message_id, &question.button("Deny"));
    mock.wait_sent(ME, "permission: cancel");
    assert_eq!(call_line(&mock), format!("{line} (denied)"));
    let progress = mock.calls();
    let progress = progress
        .iter()
        .filter(|c| c.chat() == ME && c.body["reply_markup"].is_null())
        .map(Call::text);
    for text in progress {
        assert!(
            !text.contains("running") && !text.contains("failed"),
            "{text:?}"
        );
    }
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn a_plan_and_an_answer_cut_short_are_told_in_the_progress() {
    let ws = acp();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp"]);
    mock.message(ME, ME, "tool please");
    let progress = progress_before(&mock, "You said: tool please");
    assert!(
        progress.contains("Shell: ls") && progress.contains("plan: [x] look; [~] answer"),
        "{progress}"
    );
    mock.message(ME, ME, "max_tokens");
    let progress = progress_before(&mock, "cut here");
    assert_eq!(
        progress,
        "acp: the answer was cut short: the model reached its output limit (max_tokens)"
    );
    assert_eq!(bot.terminate(), 0);
}

/// /stop while the agent's question waits: the agent is cancelled, and the call's line and
/// the question say so rather than awaiting approval still (no result of agent-loop's tells of it: the call
/// is the agent's).
#[test]
fn a_question_left_open_by_stop_says_cancelled() {
    let ws = acp();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp"]);
    mock.message(ME, ME, "permission");
    let question = mock.question(0);
    mock.wait_for("the call awaiting approval", |calls| {
        calls
            .iter()
            .any(|c| c.chat() == ME && c.text().ends_with("] (awaiting approval)"))
            .then_some(())
    });
    mock.message(ME, ME, "/stop");
    mock.wait_sent(ME, "Stopped.");
    let progress = call_line(&mock);
    assert!(progress.ends_with("] (cancelled)"), "{progress}");
    // The question says so too, its buttons gone.
    assert!(mock.calls().iter().any(|c| c.method == "editMessageText"
        && c.body["message_id"] == question.message_id
        && c.text() == format!("{}\n(cancelled)", question.text())
        && c.body["reply_markup"].is_null()));
    assert_eq!(bot.terminate(), 0);
}

/// An untrusted agent that, denied, writes the file itself and reports the call `completed`
/// with its diff: the progress shows it, after the denied line and marked as such.
#[test]
fn what_an_agent_does_after_a_deny_is_shown() {
    let ws = acp();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp"]);
    mock.message(ME, ME, "permission anyway");
    let question = mock.question(0);
    mock.press(ME, ME, question.message_id, &question.button("Deny"));
    mock.wait_sent(ME, "permission: cancel");
    let notes = ws.work().join("notes.txt");
    let done = format!(
        "edit: WriteFile notes.txt [edit] (denied)\nWriteFile notes.txt ({}) (done after it was refused)",
        notes.display()
    );
    let shown = mock.shown(ME);
    assert!(shown.iter().any(|t| t.contains(&done)), "{shown:#?}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "written anyway\n");
    assert_eq!(bot.terminate(), 0);
}

/// An agent's file write that agent-loop serves asks first (into `.git/`, always): denied,
/// the question's line says so, and the write the agent then reports refused adds no line of
/// its own, nor a failure.
#[test]
fn a_denied_file_write_of_the_agent_is_one_line() {
    let ws = acp();
    std::fs::create_dir_all(ws.work().join(".git/hooks")).unwrap();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp"]);
    mock.message(ME, ME, "write .git/hooks/pre-commit");
    let question = mock.question(0);
    mock.press(ME, ME, question.message_id, &question.button("Deny"));
    mock.wait_sent(ME, "write refused");
    let shown = mock.shown(ME);
    let lines: Vec<&str> = (shown.iter().flat_map(|t| t.lines()))
        .filter(|l| l.starts_with("write"))
        .collect();
    assert!(
        lines.len() == 2 && lines[0].starts_with("write: ") && lines[0].ends_with("(denied)"),
        "{shown:#?}"
    );
    assert!(lines[1].starts_with("write refused"), "{shown:#?}");
    assert!(!ws.work().join(".git/hooks/pre-commit").exists());
    assert_eq!(bot.terminate(), 0);
}
