//! A prompt over the context budget sent to the bot, as text or as a photo's caption: the
//! bot answers with the refusal the CLI gives (the budget and where `max_context_tokens` is
//! set), nothing reaches the backend, and the chat's conversation and session file are as
//! they were, so the next message goes on as if the refused one never came.

use serde_json::{json, Value};

use super::photos::{after_a_first_turn, anthropic, photo};
use super::ME;
use crate::budget::budget;

#[test]
fn a_prompt_over_the_budget_is_refused_and_the_chat_is_unchanged() {
    let (ws, server) = anthropic(2);
    let config = budget(&ws, 1500);
    let (mock, mut bot, session) = after_a_first_turn(&ws);
    let before = std::fs::read(&session).unwrap();

    let big = "word ".repeat(1_600);
    let big_photo = photo(Some(&big));
    for (what, fields) in [("text", json!({ "text": big })), ("photo", big_photo)] {
        let sent = mock.sent(ME).len();
        mock.media(ME, ME, &[fields]);
        mock.wait_for(&format!("the {what}'s reply"), |_| {
            (mock.sent(ME).len() > sent).then_some(())
        });
        let reply = mock.sent(ME)[sent].clone();
        assert!(
            reply.starts_with("error: ")
                && reply.contains("does not fit in max_context_tokens (1500)")
                && reply.contains(&format!("is set in {}:1", config.display())),
            "{what}: {reply}"
        );
        assert_eq!(server.requests().len(), 1, "{what}: nothing sent");
        assert!(
            std::fs::read(&session).unwrap() == before,
            "{what}: the refused prompt changed the session file"
        );
    }
    assert_eq!(mock.downloads(), ["m"]);

    mock.message(ME, ME, "second");
    mock.wait_for("the second answer", |_| {
        (mock
            .sent(ME)
            .iter()
            .filter(|t| t.contains("The notes say"))
            .count()
            == 2)
            .then_some(())
    });
    let messages = server.requests()[1].json()["messages"].clone();
    let texts: Vec<Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(
        texts,
        [
            json!([{"type": "text", "text": "first"}]),
            json!([{"type": "text", "text": "second"}])
        ]
    );
    // The chat shows the two answers and the two refusals, nothing else (no progress left).
    let shown = mock.shown(ME);
    assert_eq!(shown.len(), 4, "{shown:#?}");
    assert!(shown[1].starts_with("error: backend `api`: the request does not fit"));
    assert!(shown[2].starts_with("error: backend `api`: the request does not fit"));
    assert_eq!(bot.terminate(), 0);
    let saved: Value = serde_json::from_slice(&std::fs::read(&session).unwrap()).unwrap();
    assert_eq!(saved["turns"], 2);
}
