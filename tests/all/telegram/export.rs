//! `/export` in a chat: the conversation comes to the chat as a document, redacted, and
//! nothing is written on the bot's machine, wherever the name points.

use super::mock::{Mock, TOKEN};
use super::{Bot, ME};
use crate::common::Workspace;

#[test]
fn an_export_is_sent_to_the_chat_and_writes_no_file() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.md"), "KEEP ME\n").unwrap();
    ws.reply(1, format!("The answer is 42. The token is {TOKEN}.\n"));
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "what is it?");
    mock.wait_sent(ME, "The answer is 42");
    let outside = ws.path("outside.json");
    for name in ["notes.md", &format!("--force {}", outside.display())] {
        mock.message(ME, ME, &format!("/export {name}"));
    }
    mock.message(ME, ME, "/export notes.txt");
    mock.wait_sent(ME, "name a .md or .json file");
    let documents: Vec<_> = mock
        .calls()
        .into_iter()
        .filter(|c| c.method == "sendDocument")
        .collect();
    assert_eq!(documents.len(), 2, "{documents:?}");
    let (md, json) = (&documents[0].body, &documents[1].body);
    assert_eq!(md["chat_id"], ME);
    assert_eq!(md["document"]["filename"], "notes.md");
    let text = md["document"]["content"].as_str().unwrap();
    assert!(text.starts_with("# Session telegram-"), "{text}");
    assert!(text.contains("The answer is 42"), "{text}");
    assert!(
        !text.contains(TOKEN) && text.contains("[REDACTED]"),
        "{text}"
    );
    assert_eq!(json["document"]["filename"], "outside.json");
    let messages: serde_json::Value =
        serde_json::from_str(json["document"]["content"].as_str().unwrap()).unwrap();
    assert_eq!(messages.as_array().map(Vec::len), Some(2), "{messages}");
    assert_eq!(
        std::fs::read_to_string(ws.work().join("notes.md")).unwrap(),
        "KEEP ME\n"
    );
    assert!(!outside.exists());
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn help_says_an_export_comes_to_the_chat() {
    let ws = Workspace::new();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "/help");
    let help = mock.wait_sent(ME, "/export");
    assert!(
        help.contains("/export - send the conversation here as a file"),
        "{help}"
    );
    let registered = mock
        .calls()
        .into_iter()
        .find(|c| c.method == "setMyCommands")
        .expect("setMyCommands");
    assert!(
        registered.body["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["command"] == "export"
                && c["description"].as_str().unwrap().starts_with("send the")),
        "{:?}",
        registered.body
    );
    assert_eq!(bot.terminate(), 0);
}
