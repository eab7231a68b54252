//! A CLI backend's answer shown as the CLI prints it (`json_text_delta`), the `claude` and
//! `gemini` presets' among them (the latter in gemini_stream.rs): the first piece reaches
//! stdout while the CLI still runs, the answer is shown once, a tool call's markup never is
//! (fixtures/agents/streaming.sh prints each run in two parts around a gate), and the
//! stream's lines taken as pieces are not kept.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::common::{fixture, Workspace};

fn delta(text: &str) -> String {
    format!("{}\n", serde_json::json!({ "type": "delta", "text": text }))
}

fn result(text: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({ "type": "result", "result": text })
    )
}

/// A workspace whose backend `stream` runs the fake agent, with `extra` keys in its entry.
fn stream_backend(extra: &str) -> Workspace {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.stream]\ncommand = '{}'\noutput = \"jsonl\"\n\
         json_text = \"[type=result].result\"\njson_text_delta = \"[type=delta].text\"\n{extra}",
        fixture("agents/streaming.sh").display()
    ));
    ws
}

/// A task run on `stream` with `--display plain`, to its end.
fn run_plain(ws: &Workspace) -> crate::common::Run {
    run_plain_with(ws, &[])
}

/// [`run_plain`] with `flags` too.
fn run_plain_with(ws: &Workspace, flags: &[&str]) -> crate::common::Run {
    let mut args = vec!["--no-save", "--backend", "stream", "--display", "plain"];
    args.extend(flags);
    args.push("q");
    ws.run(&args)
}

/// A backend `stream` on the fake agent, with a gate before its first run's second part.
fn workspace() -> Workspace {
    // The timeout ends a run that never gets its gate opened: the test then fails, not hangs.
    gated(stream_backend("timeout_s = 30\n"))
}

/// `ws` with a gate (a FIFO) before the fake agent's first run's second part.
fn gated(ws: Workspace) -> Workspace {
    let made = Command::new("mkfifo")
        .arg(ws.path("fake/gate"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    ws
}

/// A workspace whose built-in preset `cli` runs `agent` (under `fixtures/agents/`).
fn preset(cli: &str, agent: &str) -> Workspace {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.{cli}]\ncommand = '{}'\ntimeout_s = 30\n",
        fixture(&format!("agents/{agent}")).display()
    ));
    ws
}

fn claude_preset(agent: &str) -> Workspace {
    preset("claude", agent)
}

/// The fake agent's run `n` prints what the real CLI printed in `recording` (under
/// `fixtures/`) in two parts: up to and with the first line that holds `upto`, and the rest.
fn recorded_run(ws: &Workspace, n: usize, recording: &str, upto: &str) {
    let text = std::fs::read_to_string(fixture(&format!("{recording}.stdout"))).unwrap();
    let at = text.find(upto).expect("in the recording");
    let end = at + text[at..].find('\n').unwrap() + 1;
    ws.fake_file(&format!("head.{n}"), &text[..end]);
    ws.fake_file(&format!("tail.{n}"), &text[end..]);
}

/// The `--output jsonl` records of a run that succeeded.
pub(crate) struct Records(Vec<serde_json::Value>);

impl Records {
    pub(crate) fn run(mut cmd: Command) -> Records {
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let lines = String::from_utf8(out.stdout).unwrap();
        Records(
            lines
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        )
    }

    /// The records of one `event`.
    pub(crate) fn of(&self, event: &str) -> Vec<&serde_json::Value> {
        self.0.iter().filter(|r| r["event"] == event).collect()
    }

    /// The texts of the `assistant_delta` records.
    pub(crate) fn pieces(&self) -> Vec<&str> {
        let deltas = self.0.iter().filter(|r| r["event"] == "assistant_delta");
        deltas.map(|r| r["text"].as_str().unwrap()).collect()
    }
}

/// The records of the built-in preset `cli` on its recording `json` with `--output jsonl`:
/// its pieces shown as `assistant_delta`, and the answer whole.
pub(crate) fn replayed_answer(cli: &str) -> Records {
    let ws = preset(cli, "replay.sh");
    let mut cmd = ws.cmd(&[
        "--no-save",
        "--backend",
        cli,
        "--output",
        "jsonl",
        "What is six times seven?",
    ]);
    cmd.env("REPLAY", fixture(&format!("{cli}/json")));
    let records = Records::run(cmd);
    assert_eq!(records.pieces(), ["The", " answer", " is", " 42."]);
    let answer = records.of("assistant_message")[0]["text"].clone();
    assert_eq!(answer, "The answer is 42.");
    records
}

/// Runs a task on `backend` with `--display plain`; reads stdout until it holds `first`,
/// then checks the agent is still waiting at its gate, opens it and returns all of stdout
/// and stderr once agent-loop has exited 0.
fn run_past_gate(ws: &Workspace, backend: &str, first: &str) -> (String, String) {
    let mut cmd = ws.cmd(&[
        "--no-save",
        "--backend",
        backend,
        "--display",
        "plain",
        "what is it?",
    ]);
    // The recordings of the toolcall reply call bash (`echo hi`): it may run.
    cmd.env("AGENT_LOOP_ALLOW", "bash");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains(first) {
        let n = out.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "stdout ended before {first:?}: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    // Shown while the agent has printed only its first part and waits.
    assert!(ws.path("fake/gate").exists());
    ws.open_gate();
    out.read_to_end(&mut seen).unwrap();
    let output = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{err}");
    (String::from_utf8_lossy(&seen).into_owned(), err)
}

#[test]
fn the_answer_shows_while_the_cli_runs_and_only_once() {
    let ws = workspace();
    ws.fake_file("head.1", delta("The answer"));
    ws.fake_file("tail.1", delta(" is 42.") + &result("The answer is 42."));
    let (out, _) = run_past_gate(&ws, "stream", "The answer");
    assert_eq!(out, "The answer is 42.\n");
}

/// The `claude` preset streams: the first pieces Claude Code printed are shown while it
/// still runs (here: held at a gate after them), and the answer is shown once.
#[test]
fn the_claude_preset_shows_its_answer_while_claude_runs() {
    preset_shows_its_answer_while_it_runs("claude", "text");
}

/// The built-in preset `cli` replays its recording of the answer, whose lines carry a piece
/// in their key `piece`, held at a gate after ` answer`.
pub(crate) fn preset_shows_its_answer_while_it_runs(cli: &str, piece: &str) {
    let ws = gated(preset(cli, "streaming.sh"));
    let upto = format!(r#""{piece}":" answer""#);
    recorded_run(&ws, 1, &format!("{cli}/json"), &upto);
    let (out, _) = run_past_gate(&ws, cli, "The answer");
    assert_eq!(out, "The answer is 42.\n");
}

/// Through the preset, a real reply with a call in agent-loop's format shows its text as it
/// comes and never the call's markup; the call runs and the next step's answer follows.
#[test]
fn the_claude_preset_never_shows_a_calls_markup() {
    preset_never_shows_a_calls_markup("claude", "text");
}

/// The built-in preset `cli` replays its recordings of the toolcall reply and then of the
/// answer, whose lines carry a piece in their key `piece`, held at a gate after ` will`.
pub(crate) fn preset_never_shows_a_calls_markup(cli: &str, piece: &str) {
    let ws = gated(preset(cli, "streaming.sh"));
    let upto = |word: &str| format!(r#""{piece}":" {word}""#);
    recorded_run(&ws, 1, &format!("{cli}/toolcall-json"), &upto("will"));
    recorded_run(&ws, 2, &format!("{cli}/json"), &upto("answer"));
    let (out, err) = run_past_gate(&ws, cli, "I will");
    assert_eq!(
        out, "I will run the command now.\nThe answer is 42.\n",
        "{err}"
    );
    assert!(err.contains("[tool bash]"), "{err}");
    assert!(ws.prompt(2).contains("echo hi"), "{}", ws.prompt(2));
}

#[test]
fn a_tool_calls_markup_is_never_shown_and_the_turn_goes_on() {
    let ws = workspace();
    std::fs::write(ws.work().join("a.txt"), "hello").unwrap();
    // The call's opening comes split over two pieces, and across the gate.
    ws.fake_file("head.1", delta("Let me look.\n<tool_"));
    let call = r#"<tool_call>{"name":"ls","arguments":{}}</tool_call>"#;
    ws.fake_file(
        "tail.1",
        delta(&call["<tool_".len()..]) + &result(&format!("Let me look.\n{call}")),
    );
    ws.fake_file("head.2", delta("Here: "));
    ws.fake_file("tail.2", delta("a.txt") + &result("Here: a.txt"));
    let (out, err) = run_past_gate(&ws, "stream", "Let me look.");
    assert!(
        !out.contains("<tool") && !out.contains("tool_call"),
        "{out}"
    );
    assert!(out.starts_with("Let me look.\n"), "{out}");
    assert!(out.ends_with("Here: a.txt\n"), "{out}");
    assert_eq!(out.matches("Here: a.txt").count(), 1, "{out}");
    assert!(err.contains("[tool ls]"), "{err}");
    // The second run was given the tool's result.
    assert!(ws.prompt(2).contains("a.txt"), "{}", ws.prompt(2));
}

/// The `claude` preset on what Claude Code 2.1.337 printed with its command line against
/// the mock provider (fixtures/claude/COMMAND): the answer's pieces as `assistant_delta`
/// records and nothing of the CLI's own lines, then the answer, its tokens and cost.
#[test]
fn the_claude_preset_reads_a_real_stream() {
    // The keys docs/backends-and-presets.md ("Streaming the answer") shows are the preset's.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/backends-and-presets.md")).unwrap();
    let section = &docs[docs.find("### Streaming the answer").unwrap()..];
    let start = section.find("```toml\n").unwrap() + "```toml\n".len();
    let keys = &section[start..start + section[start..].find("```").unwrap()];
    let presets = std::fs::read_to_string(root.join("backends.toml")).unwrap();
    let claude = &presets[presets.find("[backends.claude]\n").unwrap()..];
    let claude = &claude[..claude.find("\n[backends.").unwrap()];
    for line in keys.lines() {
        assert!(
            claude.lines().any(|l| l == line),
            "not in the preset: {line}"
        );
    }
    let records = replayed_answer("claude");
    let usage = records.of("usage")[0];
    assert_eq!(
        (
            usage["input_tokens"].as_u64(),
            usage["output_tokens"].as_u64()
        ),
        (Some(1523), Some(9))
    );
    assert!(
        usage["cost_usd"].as_f64().is_some_and(|c| c > 0.0),
        "{usage}"
    );
    // `doctor` counts the pieces the path finds.
    let ws = claude_preset("replay.sh");
    let mut cmd = ws.cmd(&["doctor", "claude"]);
    cmd.env("REPLAY", fixture("claude/json"));
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("--- pieces (json_text_delta): 4 ---"),
        "{text}"
    );
}

/// A run that showed pieces and then failed is not run again by `retry_regex` (its pieces
/// cannot be taken back); one that failed before any piece is.
#[test]
fn a_run_that_showed_pieces_is_not_retried() {
    let ws = stream_backend(
        "json_error = \"[type=result][is_error=true].result\"\nretry_regex = \"overloaded\"\n\
         retry_base_ms = 1\n",
    );
    let failed = serde_json::json!({"type": "result", "is_error": true, "result": "overloaded"});
    ws.fake_file("head.1", delta("Partial ans"));
    ws.fake_file("tail.1", format!("{failed}\n"));
    ws.fake_file("head.2", String::new());
    ws.fake_file(
        "tail.2",
        delta("The answer is 42.") + &result("The answer is 42."),
    );
    let run = run_plain(&ws);
    run.expect_code(1);
    let err = run.stderr();
    assert!(
        err.contains("overloaded (not run again: part of its answer was shown)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("fake/count"))
            .unwrap()
            .trim(),
        "1"
    );
    // Failed before its first piece, it is run again.
    std::fs::remove_file(ws.path("fake/count")).unwrap();
    ws.fake_file("head.1", String::new());
    let run = run_plain(&ws);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The answer is 42.\n");
    // With no retries to make, there is nothing not run again to speak of.
    ws.add_config("retries = 0\n");
    std::fs::remove_file(ws.path("fake/count")).unwrap();
    ws.fake_file("head.1", delta("Partial ans"));
    let run = run_plain(&ws);
    run.expect_code(1);
    assert!(!run.stderr().contains("not run again"), "{}", run.stderr());
}

/// With `--verbose` the CLI's own lines still show, on stderr; stdout holds the answer once.
#[test]
fn verbose_shows_the_clis_lines_beside_the_pieces() {
    let ws = stream_backend("");
    ws.fake_file("head.1", delta("The answer"));
    ws.fake_file("tail.1", delta(" is 42.") + &result("The answer is 42."));
    let run = run_plain_with(&ws, &["--verbose"]);
    run.expect_code(0);
    let (out, err) = (run.stdout(), run.stderr());
    assert!(out.starts_with("The answer is 42."), "{out}");
    assert_eq!(out.matches("The answer").count(), 1, "{out}");
    assert!(
        err.contains(r#"[stream] {"type":"delta","text":" is 42."}"#),
        "{err}"
    );
}

/// The lines taken as pieces are reported as lines (`--verbose`, `--tail`) up to
/// `max_output_bytes` of them, as kept lines are: tiny pieces on big lines shown whole
/// would cost memory and output that follow the stream, not the cap.
#[test]
fn verbose_reports_piece_lines_up_to_the_cap() {
    let ws = stream_backend(
        "max_output_bytes = 10000
",
    );
    let pad = "x".repeat(1000);
    let lines: String = (0..200)
        .map(|i| {
            format!(
                "{}\n",
                serde_json::json!({"type": "delta", "text": format!("{}", i % 10), "pad": pad})
            )
        })
        .collect();
    let answer: String = (0..200).map(|i| format!("{}", i % 10)).collect();
    ws.fake_file("head.1", lines);
    ws.fake_file("tail.1", result(&answer));
    let run = run_plain_with(&ws, &["--verbose"]);
    run.expect_code(0);
    assert_eq!(run.stdout().trim_end(), answer);
    let err = run.stderr();
    assert!(err.contains(&pad), "{err}");
    assert!(err.len() < 20_000, "{} bytes on stderr", err.len());
}

/// Text that only looks like a call's opening stops the pieces, and the rest of the answer
/// follows at the end, though the parser folded the blank lines shown before it.
#[test]
fn the_rest_follows_an_opening_that_was_no_call() {
    let ws = workspace();
    let answer = "def a():\n    pass\n\n\ndef b():\n    pass\nCalls look like <tool_call> then JSON.\nThe end.";
    ws.fake_file(
        "head.1",
        delta(&answer[..answer.find("<tool_call>").unwrap()]),
    );
    ws.fake_file(
        "tail.1",
        delta(&answer[answer.find("<tool_call>").unwrap()..]) + &result(answer),
    );
    let (out, _) = run_past_gate(&ws, "stream", "Calls look like");
    assert_eq!(
        out,
        "def a():\n    pass\n\n\ndef b():\n    pass\nCalls look like <tool_call> then JSON.\nThe end.\n"
    );
}

/// Lines taken as pieces are shown, not kept: an answer whose stream passes the default
/// `max_output_bytes` many times over (lines padded as Claude Code's are, about 250 bytes a
/// piece) is read whole from its last line.
#[test]
fn a_stream_many_times_the_cap_is_read_whole() {
    let ws = stream_backend("");
    let pad = "x".repeat(230);
    let pieces = 20_000;
    let head: String = (0..pieces)
        .map(|i| {
            let line =
                serde_json::json!({ "type": "delta", "text": format!("w{i} "), "uuid": pad });
            format!("{line}\n")
        })
        .collect();
    assert!(head.len() > 4 * 1024 * 1024, "{}", head.len());
    let answer: String = (0..pieces).map(|i| format!("w{i} ")).collect();
    ws.fake_file("head.1", head);
    ws.fake_file("tail.1", result(answer.trim_end()));
    let run = run_plain(&ws);
    run.expect_code(0);
    assert_eq!(run.stdout().trim_end(), answer.trim_end());
}

/// Past `max_output_bytes` of pieces' text, a piece's line is kept as any other: a flood of
/// them fills the cap; the stream's last line, where its answer is, is still kept, and a
/// notice beside the answer says what was dropped. The pieces shown stop within the room.
#[test]
fn a_flood_of_pieces_is_cut_at_the_cap_with_a_note() {
    let ws = stream_backend("max_output_bytes = 200\n");
    ws.fake_file(
        "head.1",
        (0..100)
            .map(|i| delta(&format!("word{i} ")))
            .collect::<String>(),
    );
    ws.fake_file("tail.1", result("the whole answer"));
    let run = run_plain(&ws);
    run.expect_code(0);
    let out = run.stdout();
    assert!(out.starts_with("word0 word1 "), "{out}");
    let shown = &out[..out.find("\nthe whole answer\n").expect("the answer")];
    assert!(shown.len() <= 200 && !shown.contains("word99"), "{out}");
    assert!(!out.contains("[output cut"), "{out}");
    let err = run.stderr();
    assert!(
        err.contains("past max_output_bytes (200); its last line, the answer, kept"),
        "{err}"
    );
}

/// Lines that are not pieces (a CLI's own tool results) past `max_output_bytes` are dropped
/// but the last, where the answer is: the run keeps its answer, whole, and a notice beside it
/// (not in it, where the model would read it in every later turn) says what was dropped.
#[test]
fn lines_past_the_cap_keep_the_answers_line() {
    let ws = stream_backend("max_output_bytes = 1000\n");
    let tool_result = serde_json::json!({ "type": "user", "text": "x".repeat(200) });
    ws.fake_file(
        "head.1",
        delta("The answer") + &format!("{tool_result}\n").repeat(30),
    );
    ws.fake_file("tail.1", delta(" is 42.") + &result("The answer is 42."));
    let run = run_plain(&ws);
    run.expect_code(0);
    let out = run.stdout();
    assert_eq!(out, "The answer is 42.\n");
    let err = run.stderr();
    assert!(
        err.contains("dropped past max_output_bytes (1000); its last line"),
        "{err}"
    );
    // A script reading --output jsonl gets it as a record of its own (the fake agent's
    // second run is its first again: the same files).
    ws.fake_file(
        "head.2",
        delta("The answer") + &format!("{tool_result}\n").repeat(30),
    );
    ws.fake_file("tail.2", delta(" is 42.") + &result("The answer is 42."));
    let cmd = ws.cmd(&["--no-save", "--backend", "stream", "--output", "jsonl", "q"]);
    let records = Records::run(cmd);
    let notice = records.of("notice");
    assert_eq!(notice.len(), 1, "{:?}", records.of("assistant_message"));
    assert_eq!(notice[0]["level"], "warn");
    assert!(notice[0]["text"]
        .as_str()
        .unwrap()
        .contains("the answer, kept"));
}

/// An answer read from several lines (`json_text` reaching more than the last) that lost one
/// in the middle past the cap says so in it, as any answer cut does: only one read from the
/// last line alone, kept whole, gets the notice beside it instead.
#[test]
fn an_answer_that_lost_a_line_past_the_cap_says_so_in_it() {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.stream]\ncommand = '{}'\noutput = \"jsonl\"\n\
         json_text = \"[type=msg].text\"\njson_text_delta = \"[type=delta].text\"\n\
         max_output_bytes = 1000\n",
        fixture("agents/streaming.sh").display()
    ));
    let msg = |text: &str| format!("{}\n", serde_json::json!({ "type": "msg", "text": text }));
    let tool_result = serde_json::json!({ "type": "user", "text": "x".repeat(200) });
    let middle = format!("{tool_result}\n").repeat(30);
    ws.fake_file("head.1", msg("Part one.") + &middle + &msg("Part two."));
    ws.fake_file("tail.1", msg("Part three."));
    let run = run_plain(&ws);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.starts_with("Part one.\nPart three.\n[output cut: "),
        "{out}"
    );
}

/// An answer's line longer than `max_output_bytes` cannot be kept: the error says the output
/// passed it and names the setting.
#[test]
fn an_answer_line_past_the_cap_fails_and_says_so() {
    let ws = stream_backend("max_output_bytes = 200\n");
    let answer = "word ".repeat(60);
    ws.fake_file("head.1", delta(&answer));
    ws.fake_file("tail.1", result(&answer));
    let run = run_plain(&ws);
    run.expect_code(1);
    let err = run.stderr();
    assert!(
        err.contains("its output passed max_output_bytes (200 bytes)")
            && err.contains("backends.toml:"),
        "{err}"
    );
}

/// A flood of pieces many times `max_output_bytes` (here 64 MiB of them, at the default cap)
/// is drained in bounded memory: the pieces shown stop within the cap's room, the lines past
/// it are dropped but the last, and a notice says that output was dropped.
#[test]
fn a_flood_of_pieces_is_drained_with_bounded_memory() {
    let ws = Workspace::new();
    let piece = delta(&"x".repeat(1000));
    ws.config(&format!(
        "[backends.flood]\ncommand = \"sh\"\nargs = ['''-c''', '''yes '{}' | head -n 65536; echo '{}' ''']\n\
         output = \"jsonl\"\njson_text = \"[type=result].result\"\n\
         json_text_delta = \"[type=delta].text\"\ntimeout_s = 600\n",
        piece.trim_end(),
        result("the whole answer").trim_end()
    ));
    let (run, peak_kib) =
        ws.run_measured(ws.cmd(&["--no-save", "--backend", "flood", "--display", "plain", "q"]));
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.ends_with("\nthe whole answer\n") && run.stderr().contains("its last line, the answer"),
        "{}",
        &out[out.len().saturating_sub(300)..]
    );
    assert!(out.len() < 4 * 1024 * 1024 + 1024, "{}", out.len());
    // The kept 4 MiB, its last line, the pieces' 4 MiB and their copies on the way to the
    // display: memory that followed the output would be 64 MiB more.
    eprintln!("stream flood: agent-loop peak RSS {} MiB", peak_kib >> 10);
    assert!(peak_kib < 80 * 1024, "peak RSS {peak_kib} KiB");
}
