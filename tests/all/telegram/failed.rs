//! A failed turn in a chat: the error says the prompt stays in the conversation, and how to
//! send it again or drop it, as every front end does.

use super::mock::Mock;
use super::{Bot, ME};
use crate::common::Workspace;

#[test]
fn a_failed_turn_says_the_prompt_stays() {
    let ws = Workspace::new();
    ws.fake_file("rc.1", "1\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "this one fails");
    let error = mock.wait_sent(ME, "the prompt stays");
    assert!(
        error.starts_with("error: ")
            && error.ends_with(
                "\n[the prompt stays in the conversation: /retry sends it again, /undo drops it]"
            ),
        "{error}"
    );
    assert_eq!(bot.terminate(), 0);
}
