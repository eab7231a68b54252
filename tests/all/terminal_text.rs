//! What a CLI backend's answer becomes when the agent draws on the terminal: a spinner
//! (`fixtures/agents/spinner.sh`, frames drawn over each other with `\r` and erase-line)
//! leaves only its answer, on screen and in the context sent back (`render = "terminal"`,
//! the default); `render = "strip"` keeps every frame.

use crate::common::{fixture, Workspace};

const READ_CALL: &str = "Let me read it.\n<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>\n";

/// A workspace whose backend `spin` draws a spinner before each scripted reply: a read of
/// notes.txt, then the answer.
fn spinning(render: Option<&str>) -> Workspace {
    let ws = Workspace::new();
    let render = render.map_or(String::new(), |r| format!("render = \"{r}\"\n"));
    ws.add_config(&format!(
        "\n[backends.spin]\ncommand = \"{}\"\ntimeout_s = 20\n{render}",
        fixture("agents/spinner.sh").display()
    ));
    std::fs::write(ws.work().join("notes.txt"), "the secret is 42\n").unwrap();
    ws.reply(1, READ_CALL);
    ws.reply(2, "The secret is 42.\n");
    ws
}

#[test]
fn a_spinner_leaves_only_the_answer_shown_and_sent_back() {
    let ws = spinning(None);
    let run = ws.run(&["--backend", "spin", "what is the secret?"]);
    run.expect_code(0);
    assert_eq!(ws.runs(), 2);
    assert_eq!(run.stdout(), "The secret is 42.\n");
    let err = run.stderr();
    assert!(err.contains("Let me read it."), "{err}");
    assert!(err.contains("[tool read] notes.txt"), "{err}");
    assert!(!err.contains("Thinking"), "{err}");
    // The first reply goes back as the agent's turn, its text exactly what was left on the
    // line once the spinner was erased.
    let second = ws.prompt(2);
    assert!(
        second.contains("Assistant: Let me read it.\n<tool_call>{\"name\":\"read\""),
        "{second}"
    );
    assert!(
        !second.contains("Thinking") && !second.contains('\r'),
        "{second}"
    );
}

#[test]
fn with_render_strip_every_frame_stays() {
    let ws = spinning(Some("strip"));
    let run = ws.run(&["--backend", "spin", "what is the secret?"]);
    run.expect_code(0);
    let frames = "⠋ Thinking⠙ Thinking⠹ Thinking⠸ Thinking⠼ Thinking";
    assert_eq!(run.stdout(), format!("{frames}The secret is 42.\n"));
    let second = ws.prompt(2);
    assert!(
        second.contains(&format!("Assistant: {frames}Let me read it.\n")),
        "{second}"
    );
}

#[test]
fn an_unknown_render_mode_is_a_config_error_naming_the_line() {
    let ws = spinning(Some("screen"));
    let run = ws.run(&["--backend", "spin", "hi"]);
    let err = run.stderr();
    assert_ne!(run.code(), 0, "{err}");
    assert!(
        err.contains("backend `spin`: key `render`: unknown render `screen`"),
        "{err}"
    );
    assert!(err.contains("backends.toml:"), "{err}");
}
