//! Images from an editor: `initialize` says whether the backend takes them; an image block
//! reaches the HTTP API in its wire format and stays in the session (a loaded session shows
//! it again); after a switch to a backend that takes none, an image prompt is refused with
//! an error naming it, the conversation unchanged.

use serde_json::{json, Value};

use super::{drive_with, open};
use crate::common::{fixture, Workspace};
use crate::http::{setup, streamed, Format};

/// `fixtures/images/pixel.png`, base64.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const KEY: (&str, &str) = ("AGENT_LOOP_TEST_API_KEY", "test-key");

fn image_prompt(session: usize) -> Value {
    json!({"op": "prompt", "session": session, "prompt": [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "mimeType": "image/png", "data": PIXEL, "uri": "file:///shot.png"},
    ]})
}

/// What `initialize` answers of images with `backend`.
fn advertised(ws: &Workspace, backend: &str) -> Value {
    let seen = drive_with(
        ws,
        json!({"steps": [{"op": "initialize"}]}),
        &["--backend", backend, "--no-save"],
        &[KEY],
    );
    seen.result(0)["result"]["agentCapabilities"]["promptCapabilities"]["image"].clone()
}

#[test]
fn initialize_says_whether_the_backend_takes_images() {
    let (ws, _server) = setup(Format::Anthropic, vec![], "");
    assert_eq!(advertised(&ws, "api"), true);
    let (ws, _server) = setup(Format::Ollama, vec![], "");
    assert_eq!(advertised(&ws, "api"), false);
    ws.add_config(&format!(
        "[backends.fake]\ncommand = \"{}\"\n",
        fixture("agents/scripted.sh").display()
    ));
    assert_eq!(advertised(&ws, "fake"), false);
}

#[test]
fn an_image_prompt_reaches_the_api_and_is_refused_after_a_switch() {
    let (ws, server) = setup(
        Format::Anthropic,
        vec![streamed(Format::Anthropic, "text")],
        "",
    );
    ws.add_config(&format!(
        "[backends.fake]\ncommand = \"{}\"\n",
        fixture("agents/scripted.sh").display()
    ));
    let mut steps = open(&ws);
    steps.push(image_prompt(0));
    steps.push(json!({"op": "prompt", "session": 0, "text": "/backend fake"}));
    steps.push(image_prompt(0));
    let seen = drive_with(
        &ws,
        json!({ "steps": steps }),
        &["--backend", "api"],
        &[KEY],
    );
    assert_eq!(
        seen.result(2)["result"]["stopReason"],
        "end_turn",
        "{}",
        seen.all
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].json()["messages"][0]["content"],
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
            {"type": "text", "text": "what is this?"},
        ])
    );
    let refused = &seen.result(4)["error"];
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("backend `fake` takes text only"),
        "{refused}"
    );
    assert_eq!(ws.runs(), 0, "the agent CLI never ran");
    // The refused prompt left nothing: the image turn's two messages only.
    let saved = ws.saved_session();
    assert_eq!(
        saved["conversation"]["messages"].as_array().unwrap().len(),
        2
    );

    // Loaded again, the session shows the image with its message.
    let id = seen.result(1)["result"]["sessionId"].as_str().unwrap();
    let again = drive_with(
        &ws,
        json!({"steps": [{"op": "initialize"}, {"op": "load", "sessionId": id, "cwd": ws.work()}]}),
        &["--backend", "api"],
        &[KEY],
    );
    let users = again.of_kind("user_message_chunk");
    assert_eq!(users[0]["content"]["text"], "what is this?");
    assert_eq!(users[1]["content"]["type"], "image");
    assert_eq!(users[1]["content"]["data"], PIXEL);
    assert_eq!(users[1]["content"]["uri"], "file:///shot.png");
}
