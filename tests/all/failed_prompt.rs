//! A turn that fails after its prompt was recorded leaves the prompt in the conversation
//! (nothing the user typed is lost), and every front end says so at the failure, with the way
//! out: else the next prompt goes glued to it, and the model answers a question the user
//! moved away from. (The Telegram bot's case is in telegram/failed.rs.)

use serde_json::json;

use crate::acp_server::{drive, open};
use crate::common::Workspace;
use crate::repl::repl;

const STAYS: &str = "[the prompt stays in the conversation: /retry sends it again, /undo drops it]";

/// The fake agent's first run fails.
fn failing_first() -> Workspace {
    let ws = Workspace::new();
    ws.fake_file("rc.1", "1\n");
    ws.reply(0, "an answer\n");
    ws
}

#[test]
fn the_repl_says_the_prompt_stays_and_undo_drops_it() {
    let ws = failing_first();
    let keys = "this one fails\n/undo\nthe next one\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake --session s", keys);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains(STAYS), "{screen}");
    // What the notice promised: /undo dropped the failed prompt, not an earlier turn.
    assert!(screen.contains("[dropped the last turn]"), "{screen}");
    let second = ws.prompt(2);
    assert!(
        second.contains("the next one") && !second.contains("this one fails"),
        "{second}"
    );
}

#[test]
fn a_one_shot_run_names_the_session_the_prompt_stays_in() {
    let ws = failing_first();
    let run = ws.run(&["--backend", "fake", "-s", "work", "this one fails"]);
    assert_ne!(run.code(), 0);
    assert!(
        run.stderr().contains(
            "[the prompt stays in session work, unanswered: in `agent-loop -s work`, /retry \
             sends it again, /undo drops it]"
        ),
        "{}",
        run.stderr()
    );
    // Without a session nothing stays, and nothing is said.
    let ws = failing_first();
    let run = ws.run(&["--backend", "fake", "--no-save", "this one fails"]);
    assert_ne!(run.code(), 0);
    assert!(!run.stderr().contains("stays"), "{}", run.stderr());
}

#[test]
fn an_editor_is_told_in_the_error() {
    let ws = failing_first();
    let mut steps = open(&ws);
    steps.push(json!({"op": "prompt", "session": 0, "text": "this one fails"}));
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    let message = seen.result(2)["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.ends_with(STAYS), "{}", seen.result(2));
}

/// A prompt refused before it was sent (an image to an agent CLI) is not in the conversation:
/// no word of it staying, even after a failed turn; the images that went with it are said
/// to be gone, so the user knows to attach them again.
#[test]
fn a_refused_prompt_after_a_failed_one_says_its_images_are_gone() {
    let ws = failing_first();
    std::fs::copy(
        crate::common::fixture("images/pixel.png"),
        ws.work().join("shot.png"),
    )
    .unwrap();
    let keys = "this one fails\n/image shot.png\nlook\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake --no-save", keys);
    assert_eq!(code, 0, "{screen}");
    assert_eq!(screen.matches(STAYS).count(), 1, "{screen}");
    assert!(
        screen.contains("backend `fake` takes text only"),
        "{screen}"
    );
    assert!(
        screen.contains(
            "[image shot.png (image/png, 70 bytes)] not kept with the refused prompt: /image \
             attaches again, on a backend that takes images"
        ),
        "{screen}"
    );
    assert_eq!(ws.runs(), 1, "the refused prompt never reached the agent");
}
