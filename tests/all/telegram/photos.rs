//! Photos sent to the bot reach the model: the largest size within the image limit (or an
//! image sent as a document) fetched with `getFile` and downloaded from the mock, sent in the
//! HTTP backend's request as `--image` files are, and kept in the chat's session; an album
//! is one turn. A backend without images refuses as the CLI does; a file over the limit or
//! of another type gets a reply and no turn; a stranger's photo is never fetched.

use serde_json::{json, Value};

use super::mock::Mock;
use super::{Bot, ME};
use crate::common::{fixture, Workspace};
use crate::http::images::PIXEL;
use crate::http::server::Server;
use crate::http::{setup, streamed, Format};

/// The bot on backend `api` of `setup`, with `--debug` (which must not show the bytes either).
pub(super) fn bot(ws: &Workspace, mock: &Mock) -> Bot {
    let cmd = crate::http::cmd(
        ws,
        &[
            "telegram",
            "--poll-timeout",
            "1",
            "--allow-user",
            "42",
            "--debug",
        ],
    );
    Bot::spawn(ws, mock, cmd)
}

/// The HTTP backend `api`, Anthropic's format, with `answers` text answers.
pub(super) fn anthropic(answers: usize) -> (Workspace, Server) {
    let answers = (0..answers)
        .map(|_| streamed(Format::Anthropic, "text"))
        .collect();
    setup(Format::Anthropic, answers, "")
}

/// The mock with the photo file `m`, and the bot after answering "first"; returns them and
/// the chat's session file.
pub(super) fn after_a_first_turn(ws: &Workspace) -> (Mock, Bot, std::path::PathBuf) {
    let mock = Mock::start();
    mock.file("m", pixel(), true);
    let bot = bot(ws, &mock);
    mock.message(ME, ME, "first");
    mock.wait_sent(ME, "The notes say hello.");
    let session = ws.path("data/agent-loop/sessions/telegram-42/session.json");
    (mock, bot, session)
}

pub(super) fn pixel() -> Vec<u8> {
    std::fs::read(fixture("images/pixel.png")).unwrap()
}

/// A photo of three sizes: `s` and `m` within the limit, `l` over it.
pub(super) fn photo(caption: Option<&str>) -> Value {
    let mut fields = json!({"photo": [
        {"file_id": "s", "file_unique_id": "s", "width": 90, "height": 90, "file_size": 70},
        {"file_id": "m", "file_unique_id": "m", "width": 800, "height": 800, "file_size": 70},
        {"file_id": "l", "file_unique_id": "l", "width": 2560, "height": 2560,
         "file_size": 6 * 1024 * 1024},
    ]});
    if let Some(caption) = caption {
        fields["caption"] = json!(caption);
    }
    fields
}

fn image_block() -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}})
}

fn first_user_message(server: &Server, request: usize) -> Value {
    let body = server.requests()[request].json();
    body["messages"][0].clone()
}

#[test]
fn a_photo_reaches_the_model_and_stays_in_the_session() {
    let (ws, server) = anthropic(3);
    let mock = Mock::start();
    mock.file("m", pixel(), true);
    let mut bot = bot(&ws, &mock);
    mock.media(ME, ME, &[photo(Some("what is this?"))]);
    mock.wait_sent(ME, "The notes say hello.");
    assert_eq!(
        first_user_message(&server, 0),
        json!({"role": "user", "content": [image_block(), {"type": "text", "text": "what is this?"}]})
    );
    // The largest size within the limit, and nothing else, was fetched.
    let files: Vec<Value> = mock
        .calls()
        .iter()
        .filter(|c| c.method == "getFile")
        .map(|c| c.body.clone())
        .collect();
    assert_eq!(files, [json!({"file_id": "m"})]);
    assert_eq!(mock.downloads(), ["m"]);
    // /retry runs the turn again with its image; the next message sends it again: it is in
    // the chat's session.
    mock.message(ME, ME, "/retry");
    mock.wait_for("the retried request", |_| {
        (server.requests().len() == 2).then_some(())
    });
    assert_eq!(
        server.requests()[1].json()["messages"],
        server.requests()[0].json()["messages"]
    );
    mock.message(ME, ME, "and now?");
    mock.wait_for("the third request", |_| {
        (server.requests().len() == 3).then_some(())
    });
    let third = server.requests()[2].json();
    assert_eq!(third["messages"][0]["content"][0], image_block());
    assert_eq!(
        third["messages"].as_array().unwrap().last().unwrap(),
        &json!({"role": "user", "content": [{"type": "text", "text": "and now?"}]})
    );
    mock.wait_for("three answers", |_| {
        (mock
            .sent(ME)
            .iter()
            .filter(|t| t.contains("The notes say"))
            .count()
            == 3)
            .then_some(())
    });
    assert_eq!(bot.terminate(), 0);
    let session = ws.path("data/agent-loop/sessions/telegram-42/session.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(session).unwrap()).unwrap();
    assert_eq!(
        saved["conversation"]["messages"][0]["images"][0]["data"],
        PIXEL
    );
    // The log and stderr name the image; its bytes stay out.
    let log = ws.session_log("telegram-42");
    let user = log.iter().find(|r| r["event"] == "user_message").unwrap();
    assert_eq!(
        user["images"],
        json!([{"name": "photo", "mime": "image/png", "bytes": 70}])
    );
    let logged =
        std::fs::read_to_string(ws.path("data/agent-loop/sessions/telegram-42/log.jsonl")).unwrap();
    assert!(!logged.contains(PIXEL));
    let stderr = bot.stderr();
    assert!(stderr.contains("debug: chat 42"), "{stderr}");
    assert!(!stderr.contains(PIXEL));
}

#[test]
fn openai_gets_the_photo_as_a_data_url() {
    let (ws, server) = setup(
        Format::OpenAi,
        vec![streamed(Format::OpenAi, "text")],
        "images = true\n",
    );
    let mock = Mock::start();
    mock.file("m", pixel(), true);
    let mut bot = bot(&ws, &mock);
    mock.media(ME, ME, &[photo(Some("what is this?"))]);
    mock.wait_sent(ME, "The notes say hello.");
    let body = server.requests()[0].json();
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .cloned();
    assert_eq!(
        user,
        Some(json!({"role": "user", "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}},
        ]}))
    );
    assert_eq!(bot.terminate(), 0);
}

/// An album's photos, in one `getUpdates` answer, are one turn; without a caption its text
/// is "(photo)". An image sent as a document is taken as a photo is.
#[test]
fn an_album_is_one_turn() {
    let (ws, server) = setup(
        Format::Anthropic,
        vec![streamed(Format::Anthropic, "text")],
        "",
    );
    let mock = Mock::start();
    mock.file("m", pixel(), true);
    mock.file("doc", pixel(), false);
    let mut bot = bot(&ws, &mock);
    let mut first = photo(None);
    first["media_group_id"] = json!("album1");
    let second = json!({"media_group_id": "album1", "document":
        {"file_id": "doc", "file_unique_id": "doc", "file_name": "shot.png",
         "mime_type": "image/png", "file_size": 70}});
    mock.media(ME, ME, &[first, second]);
    mock.wait_sent(ME, "The notes say hello.");
    assert_eq!(
        first_user_message(&server, 0),
        json!({"role": "user", "content": [image_block(), image_block(),
                                           {"type": "text", "text": "(photo)"}]})
    );
    assert_eq!(server.requests().len(), 1);
    assert_eq!(bot.terminate(), 0);
    let log = ws.session_log("telegram-42");
    let user = log.iter().find(|r| r["event"] == "user_message").unwrap();
    assert_eq!(user["images"][1]["name"], "shot.png");
}

/// An album whose second photo comes in a later `getUpdates` answer than its first (long
/// polling answers as soon as one update waits) is still one turn.
#[test]
fn an_album_across_two_answers_is_one_turn() {
    let (ws, server) = anthropic(1);
    let mock = Mock::start();
    mock.file("m", pixel(), true);
    let mut bot = bot(&ws, &mock);
    let mut first = photo(Some("both"));
    first["media_group_id"] = json!("album2");
    let mut second = photo(None);
    second["media_group_id"] = json!("album2");
    mock.media(ME, ME, &[first]);
    mock.media_later(ME, ME, &[second]);
    mock.wait_sent(ME, "The notes say hello.");
    assert_eq!(
        first_user_message(&server, 0),
        json!({"role": "user", "content": [image_block(), image_block(),
                                           {"type": "text", "text": "both"}]})
    );
    assert_eq!(bot.terminate(), 0);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_backend_without_images_refuses_and_the_conversation_is_unchanged() {
    // Ollama's default: no images.
    let (ws, server) = setup(Format::Ollama, vec![streamed(Format::Ollama, "text")], "");
    let (mock, mut bot, session) = after_a_first_turn(&ws);
    let read =
        || -> Value { serde_json::from_str(&std::fs::read_to_string(&session).unwrap()).unwrap() };
    let before = read()["conversation"].clone();
    mock.media(ME, ME, &[photo(Some("look"))]);
    let refusal = mock.wait_sent(ME, "does not take images");
    assert!(
        refusal.starts_with("error: backend `api` does not take images")
            && refusal.contains("set `images = true`"),
        "{refusal}"
    );
    assert_eq!(bot.terminate(), 0);
    assert_eq!(
        server.requests().len(),
        1,
        "no request for the refused turn"
    );
    assert!(mock.downloads().is_empty(), "asked before the download");
    assert_eq!(read()["conversation"], before);
}

/// A file over the image limit (said by the message, by the download's length, or by its
/// bytes), one that is no image, another type, or one Telegram will not give, gets a reply;
/// no turn runs.
#[test]
fn what_the_model_cannot_take_gets_a_reply_and_no_turn() {
    let (ws, server) = setup(Format::Anthropic, vec![], "");
    let mock = Mock::start();
    let mut big = pixel();
    big.resize(5 * 1024 * 1024 + 1, 0);
    mock.file("sized", big.clone(), true);
    mock.file("unsized", big, false);
    mock.file("text", b"not an image at all".to_vec(), true);
    let mut bot = bot(&ws, &mock);
    let doc = |id: &str, mime: &str, size: u64| {
        json!({"document": {"file_id": id, "file_unique_id": id, "file_name": format!("{id}.png"),
                            "mime_type": mime, "file_size": size}})
    };
    let only_big = json!({"photo": [{"file_id": "l", "file_unique_id": "l", "width": 2560,
                                     "height": 2560, "file_size": 6 * 1024 * 1024}]});
    mock.media(
        ME,
        ME,
        &[
            only_big,
            doc("declared", "image/png", 6 * 1024 * 1024),
            doc("sized", "image/png", 70),
            doc("unsized", "image/png", 70),
            doc("text", "image/png", 19),
            doc("heic", "image/heic", 70),
            doc("pdf", "application/pdf", 70),
            doc("gone", "image/png", 70),
        ],
    );
    mock.wait_for("eight replies", |_| {
        (mock.sent(ME).len() == 8).then_some(())
    });
    let sent = mock.sent(ME);
    let count = |needle: &str| sent.iter().filter(|t| t.contains(needle)).count();
    assert_eq!(count("over the 5 MiB an image may have"), 4, "{sent:#?}");
    assert_eq!(
        count("text.png: not a PNG, JPEG, GIF or WebP image"),
        1,
        "{sent:#?}"
    );
    assert_eq!(count("image/heic is not a PNG"), 1, "{sent:#?}");
    assert_eq!(count("this file is application/pdf"), 1, "{sent:#?}");
    assert_eq!(
        count("gone.png: getFile: 400 Bad Request: invalid file_id"),
        1,
        "{sent:#?}"
    );
    assert!(
        sent.iter().all(|t| t.starts_with("Not sent to the model")),
        "{sent:#?}"
    );
    // Fetched only where the message did not already say no.
    let mut downloads = mock.downloads();
    downloads.sort();
    assert_eq!(downloads, ["sized", "text", "unsized"]);
    assert_eq!(bot.terminate(), 0);
    assert!(server.requests().is_empty());
}

#[test]
fn a_strangers_photo_is_never_fetched() {
    let (ws, server) = setup(Format::Anthropic, vec![], "");
    let mock = Mock::start();
    mock.file("m", pixel(), true);
    let mut bot = bot(&ws, &mock);
    mock.media(7, 7, &[photo(Some("look"))]);
    mock.wait_sent(7, "your user id is 7");
    assert_eq!(bot.terminate(), 0);
    assert!(mock.calls().iter().all(|c| c.method != "getFile"));
    assert!(mock.downloads().is_empty());
    assert!(server.requests().is_empty());
}

/// A photo captioned "look" sent to the bot, whose download is held; returns once the bot
/// asked for it. The HTTP backend has `answers` text answers.
fn photo_being_downloaded(answers: usize) -> (Workspace, Server, Mock, Bot) {
    let (ws, server) = anthropic(answers);
    let mock = Mock::start();
    mock.file("m", pixel(), true);
    mock.hold("m");
    let bot = bot(&ws, &mock);
    mock.media(ME, ME, &[photo(Some("look"))]);
    mock.wait_for("the download", |_| {
        (!mock.downloads().is_empty()).then_some(())
    });
    (ws, server, mock, bot)
}

/// A photo being downloaded is the chat's running work: `/stop` ends it with no turn, and a
/// message sent meanwhile runs after it.
#[test]
fn stop_during_a_download_ends_it_and_the_next_message_follows() {
    let (_ws, server, mock, mut bot) = photo_being_downloaded(1);
    mock.message(ME, ME, "after the photo");
    mock.message(ME, ME, "/stop");
    mock.wait_sent(ME, "The notes say hello.");
    let sent = mock.sent(ME);
    let stopped = sent.iter().position(|t| t == "Stopped before it started.");
    let answer = sent.iter().position(|t| t.contains("The notes say hello."));
    assert!(stopped.is_some() && stopped < answer, "{sent:#?}");
    assert!(
        !sent.iter().any(|t| t.contains("Nothing is running")),
        "{sent:#?}"
    );
    assert_eq!(bot.terminate(), 0);
    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        server.requests()[0].json()["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "after the photo"}]}])
    );
}

/// A message sent while a photo downloads waits for the photo's turn, as behind any turn.
#[test]
fn a_message_during_a_download_follows_its_turn() {
    let (_ws, server, mock, mut bot) = photo_being_downloaded(2);
    mock.message(ME, ME, "after the photo");
    mock.release("m");
    mock.wait_for("two requests", |_| {
        (server.requests().len() == 2).then_some(())
    });
    assert_eq!(first_user_message(&server, 0)["content"][0], image_block());
    let second = server.requests()[1].json();
    assert_eq!(
        second["messages"].as_array().unwrap().last().unwrap(),
        &json!({"role": "user", "content": [{"type": "text", "text": "after the photo"}]})
    );
    assert_eq!(bot.terminate(), 0);
}
