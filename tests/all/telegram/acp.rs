//! An ACP agent (fixtures/agents/fake-acp.py) behind the bot: /stop cancels its turn through
//! the chat's canceller (the agent gets `session/cancel`, the answer so far is kept), and a
//! permission question nobody answers gets the agent's reject option; its plan and an
//! answer cut short are told in the progress message.

use serde_json::Value;

use super::mock::Mock;
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

#[test]
fn an_unanswered_permission_question_gets_the_agents_reject_option() {
    let ws = acp();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp", "--approval-timeout", "1"]);
    mock.message(ME, ME, "permission");
    mock.wait_sent(ME, "permission: cancel");
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn a_plan_and_an_answer_cut_short_are_told_in_the_progress() {
    let ws = acp();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "acp"]);
    // The progress message may be sent with all its lines or sent and edited, at any pace:
    // what is asserted is what the chat shows once the answer is in. The turn's progress is
    // all sent before its answer, so the progress message comes before the answer.
    let progress_before = |answer: &str| {
        mock.wait_sent(ME, answer);
        let shown = mock.shown(ME);
        let at = shown.iter().position(|t| t.contains(answer)).unwrap();
        assert!(at > 0, "no progress before {answer:?}: {shown:#?}");
        shown[at - 1].clone()
    };
    mock.message(ME, ME, "tool please");
    let progress = progress_before("You said: tool please");
    assert!(
        progress.contains("running: Shell: ls") && progress.contains("plan: [x] look; [~] answer"),
        "{progress}"
    );
    mock.message(ME, ME, "max_tokens");
    let progress = progress_before("cut here");
    assert_eq!(
        progress,
        "acp: the answer was cut short: the model reached its output limit (max_tokens)"
    );
    assert_eq!(bot.terminate(), 0);
}
