//! Images attached with `--image`: each wire format's request carries them in its own shape
//! (Anthropic image blocks, OpenAI `image_url` data URLs, Ollama's `images`), the type read
//! from the bytes and not the name; a resumed session sends them again; a backend that takes
//! none refuses the turn before any request, the conversation unchanged; a bad file stops
//! the run before any turn.

use serde_json::{json, Value};

use super::*;

/// `fixtures/images/pixel.png`, base64.
pub(crate) const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The workspace with the pixel copied in as `shot.jpg` (a PNG under another name).
fn with_image(format: Format, answers: Vec<Answer>, extra: &str) -> (Workspace, Server) {
    let (ws, server) = setup(format, answers, extra);
    std::fs::copy(fixture("images/pixel.png"), ws.work().join("shot.jpg")).unwrap();
    (ws, server)
}

/// The user message of `body` that holds the task, as the format sends it.
fn user_message(format: Format, body: &Value) -> Value {
    let messages = body["messages"].as_array().unwrap();
    messages
        .iter()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap_or_else(|| panic!("{format:?}: no user message in {body}"))
}

#[test]
fn each_format_sends_the_image_in_its_own_shape() {
    for format in [Anthropic, OpenAi, Ollama] {
        let (ws, server) = with_image(format, vec![streamed(format, "text")], "images = true\n");
        let run = run_api(
            &ws,
            &["--session", "pic", "--image", "shot.jpg", "what is this?"],
        );
        run.expect_code(0);
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{format:?}");
        let message = user_message(format, &requests[0].json());
        let expected = match format {
            Anthropic => json!({"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
                {"type": "text", "text": "what is this?"},
            ]}),
            OpenAi => json!({"role": "user", "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}},
            ]}),
            Ollama => json!({"role": "user", "content": "what is this?", "images": [PIXEL]}),
        };
        assert_eq!(message, expected, "{format:?}");
        // The log notes the image, not its bytes.
        let logged = ws.session_log("pic");
        let user = logged
            .iter()
            .find(|r| r["event"] == "user_message")
            .unwrap();
        assert_eq!(
            user["images"],
            json!([{"name": "shot.jpg", "mime": "image/png", "bytes": 70}]),
            "{format:?}"
        );
        assert!(!user.to_string().contains(PIXEL));
    }
}

#[test]
fn a_resumed_session_sends_its_image_again() {
    let (ws, server) = with_image(
        Anthropic,
        vec![streamed(Anthropic, "text"), streamed(Anthropic, "text")],
        "",
    );
    run_api(&ws, &["--session", "pic", "--image", "shot.jpg", "look"]).expect_code(0);
    let saved = ws.saved_session();
    assert_eq!(
        saved["conversation"]["messages"][0]["images"][0]["data"],
        PIXEL
    );
    std::fs::remove_file(ws.work().join("shot.jpg")).unwrap();
    run_api(&ws, &["--session", "pic", "and now?"]).expect_code(0);
    let second = server.requests()[1].json();
    assert_eq!(
        second["messages"][0]["content"][0]["source"]["data"], PIXEL,
        "{second}"
    );
}

#[test]
fn a_backend_without_images_refuses_before_any_request() {
    // Ollama's default: no images.
    let (ws, server) = with_image(Ollama, vec![streamed(Ollama, "text")], "");
    run_api(&ws, &["--session", "s", "first"]).expect_code(0);
    let before = ws.saved_session()["conversation"].clone();
    let run = run_api(&ws, &["--session", "s", "--image", "shot.jpg", "look"]);
    run.expect_code(2);
    let stderr = run.stderr();
    assert!(
        stderr.contains("backend `api` does not take images")
            && stderr.contains("set `images = true`"),
        "{stderr}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "no request for the refused turn"
    );
    let after = ws.saved_session();
    assert_eq!(after["conversation"], before);
    assert_eq!(after["turns"], 1);
}

#[test]
fn an_agent_cli_refuses_images() {
    let ws = Workspace::new();
    std::fs::copy(fixture("images/pixel.png"), ws.work().join("shot.png")).unwrap();
    let run = ws.run(&["--backend", "fake", "--image", "shot.png", "look"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("backend `fake` takes text only"),
        "{}",
        run.stderr()
    );
    assert_eq!(ws.runs(), 0, "the agent never ran");
}

#[test]
fn a_bad_image_file_stops_the_run_before_any_turn() {
    let (ws, server) = with_image(Anthropic, vec![], "");
    std::fs::write(ws.work().join("notes.png"), "not an image").unwrap();
    let big = ws.work().join("big.png");
    let mut bytes = std::fs::read(fixture("images/pixel.png")).unwrap();
    bytes.resize(5 * 1024 * 1024 + 1, 0);
    std::fs::write(&big, bytes).unwrap();
    // Text behind PNG's signature is text.
    let mut text = b"\x89PNG\r\n\x1a\n".to_vec();
    text.extend_from_slice(b"this is a text file, not an image at all\n");
    std::fs::write(ws.work().join("text.png"), text).unwrap();
    // A FIFO nobody writes to and an endless device: refused at once, nothing read.
    let fifo = ws.work().join("fifo.png");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (file, says) in [
        ("missing.png", "missing.png: cannot read the image"),
        ("notes.png", "notes.png: not a PNG, JPEG, GIF or WebP image"),
        ("text.png", "text.png: not a PNG, JPEG, GIF or WebP image"),
        ("fifo.png", "fifo.png: not a regular file"),
        ("/dev/zero", "/dev/zero: not a regular file"),
        ("big.png", "over the 5 MiB an image may have"),
    ] {
        let run = run_api(&ws, &["--image", file, "look"]);
        run.expect_code(2);
        assert!(run.stderr().contains(says), "{file}: {}", run.stderr());
    }
    let run = run_api(&ws, &["--image", "big.png", "backends"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("a subcommand takes none"),
        "{}",
        run.stderr()
    );
    assert!(server.requests().is_empty());
}

#[test]
fn the_repl_attaches_an_image_to_the_next_prompt() {
    let (ws, server) = with_image(Ollama, vec![streamed(Ollama, "text")], "images = true\n");
    let (code, screen) = crate::repl::repl(
        &ws,
        "--backend api --no-save",
        "/image nope.png\n/image shot.jpg\nlook\n/exit\n",
    );
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("nope.png: cannot read the image"),
        "{screen}"
    );
    assert!(
        screen.contains("[image shot.jpg (image/png, 70 bytes)] attached to your next prompt"),
        "{screen}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{screen}");
    assert_eq!(
        user_message(Ollama, &requests[0].json())["images"],
        json!([PIXEL])
    );
}

#[test]
fn the_rate_limiter_counts_an_image_as_its_tokens() {
    // Two requests in one turn (a tool round trip): counted as text, the first would spend
    // the minute's tokens and the second wait for the next minute.
    let (ws, server) = with_image(
        Anthropic,
        vec![streamed(Anthropic, "tools"), streamed(Anthropic, "text")],
        "tokens_per_minute = 5000\n",
    );
    // A 1x1 PNG padded to 1 MiB: about 350,000 tokens if its base64 were counted as text.
    let mut big = std::fs::read(fixture("images/pixel.png")).unwrap();
    big.resize(1024 * 1024, 0);
    std::fs::write(ws.work().join("big.png"), big).unwrap();
    let run = run_api(&ws, &["--image", "big.png", "look"]);
    run.expect_code(0);
    assert!(!run.stderr().contains("[waiting"), "{}", run.stderr());
    assert_eq!(server.requests().len(), 2);
}

/// An image in the history reaches an agent CLI, which takes text, as a note in its place (as
/// an API that takes none gets): the model is not left reading answers about an image it
/// cannot know was there.
#[test]
fn an_agent_cli_is_told_of_an_image_in_the_history() {
    let (ws, _server) = with_image(Anthropic, vec![streamed(Anthropic, "text")], "");
    ws.add_config(&format!(
        "[backends.fake]\ncommand = \"{}\"\ntimeout_s = 300\n",
        fixture("agents/scripted.sh").display()
    ));
    ws.reply(1, "It was a pixel.\n");
    run_api(
        &ws,
        &["--session", "pic", "--image", "shot.jpg", "what is this?"],
    )
    .expect_code(0);
    let run = ws.run(&["--session", "pic", "--backend", "fake", "and now?"]);
    run.expect_code(0);
    let prompt = ws.prompt(1);
    assert!(
        prompt.contains(
            "User: what is this?\n[shot.jpg (image/png) was attached here; not sent: this \
             conversation reaches the backend as text]\n"
        ),
        "{prompt}"
    );
}
