//! `agent-loop telegram` against a mock of the Bot API on 127.0.0.1 (`mock.rs`), with the
//! scripted fake agents of fixtures/agents as backends. Every wait polls the mock's recorded
//! calls or a file, bounded; nothing sleeps to synchronise.

mod acp;
mod budget;
mod export;
mod failed;
mod lifecycle;
mod mock;
mod photos;
mod progress;
mod safety;

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{fixture, poll, send_signal, Workspace};
use mock::{Call, Mock, TOKEN};

/// The allowed user, in their private chat (whose id is theirs).
pub(super) const ME: i64 = 42;

/// A running bot; killed if a test ends without stopping it.
pub(super) struct Bot {
    pub child: Child,
    err: PathBuf,
}

impl Bot {
    pub fn start(ws: &Workspace, mock: &Mock, args: &[&str]) -> Bot {
        let mut all = vec!["telegram", "--poll-timeout", "1", "--allow-user", "42"];
        all.extend_from_slice(args);
        Bot::spawn(ws, mock, ws.cmd(&all))
    }

    pub fn spawn(ws: &Workspace, mock: &Mock, mut cmd: Command) -> Bot {
        let err = ws.path("bot.err");
        cmd.env("TELEGRAM_BOT_TOKEN", TOKEN)
            .env("TELEGRAM_API_URL", &mock.url)
            .env_remove("AGENT_LOOP_TELEGRAM_USERS")
            .stdout(std::fs::File::create(ws.path("bot.out")).unwrap())
            .stderr(std::fs::File::create(&err).unwrap());
        let child = cmd.spawn().expect("start agent-loop telegram");
        Bot { child, err }
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// Waits (bounded) until the bot's stderr contains `needle`.
    pub fn wait_stderr(&self, needle: &str) {
        let found = poll(|| self.stderr().contains(needle).then_some(()));
        assert!(
            found.is_some(),
            "no {needle:?} on stderr:\n{}",
            self.stderr()
        );
    }

    /// Sends SIGTERM and waits (bounded) for the exit code.
    pub fn terminate(&mut self) -> i32 {
        send_signal(self.child.id(), libc::SIGTERM);
        self.wait()
    }

    pub fn wait(&mut self) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "the bot did not exit:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn mkfifo(path: PathBuf) {
    let made = Command::new("mkfifo").arg(&path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Lets the run waiting on the FIFO `path` go on.
pub(super) fn open_gate(path: PathBuf) {
    std::fs::write(&path, "go\n").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

pub(super) fn wait_file(path: PathBuf) {
    let found = poll(|| path.exists().then_some(()));
    assert!(found.is_some(), "{} never appeared", path.display());
}

fn sends(calls: &[Call], chat: i64) -> Vec<&Call> {
    calls
        .iter()
        .filter(|c| c.method == "sendMessage" && c.chat() == chat)
        .collect()
}

#[test]
fn a_tool_round_trip_from_an_allowed_user() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.txt"), "the secret is 42\n").unwrap();
    ws.reply(
        1,
        "Reading.\n<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>\n",
    );
    ws.reply(
        2,
        "<tool_call>{\"name\": \"ls\", \"arguments\": {\"path\": \".\"}}</tool_call>\n",
    );
    ws.reply(
        3,
        format!("The file says **42** <ok>. The token is {TOKEN}.\n"),
    );
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake", "--debug"]);
    mock.message(ME, ME, "what does notes.txt say?");
    let answer = mock.wait_for("the answer", |calls| {
        sends(calls, ME)
            .into_iter()
            .find(|c| c.text().contains("The file says"))
            .cloned()
    });
    assert_eq!(answer.body["parse_mode"], "HTML");
    assert_eq!(
        answer.text(),
        "The file says <b>42</b> &lt;ok&gt;. The token is [REDACTED]."
    );
    // The tool ran and its result went back to the backend.
    assert!(
        ws.prompt(2).contains("the secret is 42"),
        "{}",
        ws.prompt(2)
    );
    // One progress message for both calls: sent with the first line and edited as the second
    // is added, or sent with both when they came together (its own task sends it, which may
    // be after the answer).
    mock.wait_for("one progress message with both calls", |calls| {
        let both = |c: &&Call| c.text().starts_with("read: notes.txt\nls: ");
        let sent: Vec<&Call> = calls
            .iter()
            .filter(|c| c.method == "sendMessage" && c.text().starts_with("read: "))
            .collect();
        let first = *sent.first()?;
        (sent.len() == 1
            && (both(&first)
                || calls.iter().any(|c| {
                    c.method == "editMessageText"
                        && c.body["message_id"] == first.message_id
                        && both(&c)
                })))
        .then_some(())
    });
    let calls = mock.calls();
    assert!(calls
        .iter()
        .any(|c| c.method == "sendChatAction" && c.chat() == ME && c.body["action"] == "typing"));
    let commands: Vec<&str> = calls
        .iter()
        .find(|c| c.method == "setMyCommands")
        .expect("setMyCommands")
        .body["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    // The bot's own, then the library's slash commands (its /clear is the bot's /new).
    assert_eq!(commands[..5], ["start", "new", "status", "stop", "help"]);
    for library in ["undo", "retry", "context", "compact", "model", "backend"] {
        assert!(commands.contains(&library), "{commands:?}");
    }
    assert!(!commands.contains(&"clear"), "{commands:?}");
    assert_eq!(mock.wrong_token(), 0);
    assert_eq!(bot.terminate(), 0);
    // Saved as the chat's session; the token is in neither the session nor the output.
    let session = ws.path("data/agent-loop/sessions/telegram-42/session.json");
    let saved = std::fs::read_to_string(&session).unwrap();
    assert!(saved.contains("The file says"), "{saved}");
    assert!(!saved.contains(TOKEN));
    let log =
        std::fs::read_to_string(ws.path("data/agent-loop/sessions/telegram-42/log.jsonl")).unwrap();
    assert!(!log.contains(TOKEN) && log.contains("[REDACTED]"), "{log}");
    let stderr = bot.stderr();
    assert!(stderr.contains("debug: chat 42"), "{stderr}");
    assert!(!stderr.contains(TOKEN), "{stderr}");
    ws.assert_no_leftovers();
}

#[test]
fn a_stranger_is_refused_and_nothing_runs() {
    let ws = Workspace::new();
    ws.reply(0, "hello\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(7, 7, "run rm -rf ~");
    mock.press(7, 7, 1, "approve:1:allow");
    mock.sticker(ME, ME);
    mock.message(ME, ME, "hi");
    mock.wait_sent(ME, "hello");
    // Each chat is served on its own, so the refusal may come after the other chat's answer.
    mock.wait_sent(7, "allowlist");
    let refusals = mock.sent(7);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].contains("allowlist") && refusals[0].contains("your user id is 7"));
    let answered = mock.wait_for("the callback answered", |calls| {
        calls
            .iter()
            .find(|c| c.method == "answerCallbackQuery")
            .cloned()
    });
    assert!(answered.text().contains("not allowed"), "{answered:?}");
    // Only the allowed user's message ran; the sticker got nothing.
    assert_eq!(ws.runs(), 1);
    assert_eq!(mock.sent(ME), ["hello"]);
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn a_long_answer_is_split_with_no_line_lost() {
    let ws = Workspace::new();
    let lines: Vec<String> = (0..320)
        .map(|i| format!("line {i:04} of the long answer"))
        .collect();
    let answer = lines.join("\n");
    assert!(answer.chars().count() > 9000);
    ws.reply(1, format!("{answer}\n"));
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "say a lot");
    let pieces = mock.wait_for("the last line", |calls| {
        let texts: Vec<String> = sends(calls, ME)
            .iter()
            .map(|c| c.text().to_string())
            .collect();
        texts
            .iter()
            .any(|t| t.contains("line 0319"))
            .then_some(texts)
    });
    assert_eq!(pieces.len(), 3, "{pieces:?}");
    for piece in &pieces {
        assert!(piece.chars().count() <= 4096, "{}", piece.chars().count());
    }
    let received: Vec<&str> = pieces.iter().flat_map(|p| p.lines()).collect();
    assert_eq!(received, lines);
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn every_command() {
    let ws = Workspace::new();
    ws.gated_backend();
    ws.takes_models("slow");
    // The gate is for the /stop part; until then runs go straight on.
    std::fs::remove_file(ws.path("fake/gate")).unwrap();
    ws.reply(0, "done\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "slow"]);
    mock.message(ME, ME, "/start");
    assert!(mock.wait_sent(ME, "Hello").contains("slow backend"));
    mock.message(ME, ME, "/help");
    let help = mock.wait_sent(ME, "/status");
    for command in ["/start", "/new", "/stop", "/help"] {
        assert!(help.contains(command), "{help}");
    }
    mock.message(ME, ME, "/status");
    let status = mock.wait_sent(ME, "backend: slow");
    assert!(status.contains("messages: 0"), "{status}");
    assert!(status.contains("last activity: none yet"), "{status}");
    mock.message(ME, ME, "do it");
    mock.wait_sent(ME, "done");
    mock.message(ME, ME, "/status@agent_loop_bot");
    let status = mock.wait_sent(ME, "messages: 2");
    // The backend reported no counts: unknown, and no cost, as the CLI says.
    assert!(
        status.contains("tokens: unknown") && !status.contains("cost:"),
        "{status}"
    );
    assert!(!status.contains("none yet"), "{status}");
    mock.message(ME, ME, "/new");
    let new = mock.wait_sent(ME, "New conversation");
    assert!(new.contains("saved as telegram-42-archived"), "{new}");
    assert!(ws
        .path("data/agent-loop/sessions/telegram-42-archived/session.json")
        .exists());
    mock.message(ME, ME, "/status");
    mock.wait_for("a status after /new", |calls| {
        let texts = sends(calls, ME);
        (texts
            .iter()
            .filter(|c| c.text().contains("backend: slow"))
            .count()
            == 3)
            .then_some(())
    });
    let status = mock
        .sent(ME)
        .into_iter()
        .rev()
        .find(|t| t.contains("backend: slow"));
    assert!(status.unwrap().contains("messages: 0"));
    mock.message(ME, ME, "/stop");
    mock.wait_sent(ME, "Nothing is running");
    // /stop during a turn: the backend is killed and the chat told.
    mkfifo(ws.path("fake/gate"));
    mock.message(ME, ME, "wait for me");
    wait_file(ws.path("fake/started"));
    mock.message(ME, ME, "/stop");
    mock.wait_sent(ME, "Stopped.");
    let pid = bot.child.id() as i32;
    let others = poll(|| {
        let left: Vec<_> = ws
            .processes()
            .into_iter()
            // The bot and its watchdog live on.
            .filter(|(p, comm)| *p != pid && comm != "agent-loop-wd")
            .collect();
        left.is_empty().then_some(())
    });
    assert!(others.is_some(), "left running: {:?}", ws.processes());
    // The library's commands, as the REPL runs them: /undo drops the stopped turn.
    mock.message(ME, ME, "/model@agent_loop_bot big");
    mock.wait_sent(ME, "[model big]");
    mock.message(ME, ME, "/undo");
    mock.wait_sent(ME, "[dropped the last turn]");
    mock.message(ME, ME, "/undo");
    mock.wait_sent(ME, "[nothing to undo]");
    mock.message(ME, ME, "/context");
    mock.wait_sent(ME, "[context continue: ");
    mock.message(ME, ME, "/what");
    mock.wait_sent(ME, "Unknown command");
    assert_eq!(bot.terminate(), 0);
}

/// The button under the approval question that says `label`: (message id, callback data).
fn button(mock: &Mock, label: &str) -> (i64, String) {
    mock.wait_for("an approval question", |calls| {
        let question = calls
            .iter()
            .find(|c| c.method == "sendMessage" && !c.body["reply_markup"].is_null())?;
        let data = question.body["reply_markup"]["inline_keyboard"][0]
            .as_array()?
            .iter()
            .find(|b| b["text"] == label)?["callback_data"]
            .as_str()?
            .to_string();
        Some((question.message_id, data))
    })
}

/// The text of the approval question sent.
fn question_text(mock: &Mock) -> String {
    mock.sent(ME)
        .into_iter()
        .find(|t| t.contains("Allow"))
        .expect("an approval question")
}

#[test]
fn approval_through_a_callback() {
    let ws = Workspace::new();
    ws.reply(
        1,
        format!("<tool_call>{{\"name\":\"bash\",\"arguments\":{{\"command\":\"touch approved.txt # {TOKEN}\"}}}}</tool_call>\n"),
    );
    ws.reply(2, "made it\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "make a file");
    let (message, data) = button(&mock, "Allow");
    let question = question_text(&mock);
    assert!(
        question.contains("<pre>touch approved.txt # [REDACTED]</pre>"),
        "{question}"
    );
    assert!(!ws.work().join("approved.txt").exists());
    mock.press(ME, ME, message, &data);
    mock.wait_sent(ME, "made it");
    assert!(ws.work().join("approved.txt").exists());
    let calls = mock.calls();
    let answered = calls
        .iter()
        .find(|c| c.method == "answerCallbackQuery")
        .unwrap();
    assert_eq!(answered.text(), "Allow");
    assert!(calls.iter().any(|c| c.method == "editMessageText"
        && c.body["message_id"] == message
        && c.text().ends_with("\n(allowed)")
        && c.body["reply_markup"].is_null()));
    // The same button again: the question is no longer waiting.
    mock.press(ME, ME, message, &data);
    mock.wait_for("the second answer", |calls| {
        calls
            .iter()
            .any(|c| c.method == "answerCallbackQuery" && c.text().contains("no longer"))
            .then_some(())
    });
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn an_unanswered_approval_is_denied() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"touch denied.txt\"}}</tool_call>\n",
    );
    ws.reply(2, "could not\n");
    let mock = Mock::start();
    let mut bot = Bot::start(
        &ws,
        &mock,
        &["--backend", "fake", "--approval-timeout", "1"],
    );
    mock.message(ME, ME, "make a file");
    mock.wait_sent(ME, "could not");
    let question = mock.question(0);
    // The question's own message is edited (the turn's progress line, a message of its own,
    // may come before or after it).
    let edited = mock.wait_for("the question edited", |calls| {
        calls
            .iter()
            .find(|c| {
                c.method == "editMessageText"
                    && c.body["message_id"] == question.message_id
                    && c.text().ends_with("(not answered in 1 s)")
            })
            .cloned()
    });
    assert_eq!(
        edited.text(),
        format!("{}\n(not answered in 1 s)", question.text())
    );
    assert!(edited.body["reply_markup"].is_null(), "{edited:?}");
    assert!(!ws.work().join("denied.txt").exists());
    assert!(ws.prompt(2).contains("nobody answered"), "{}", ws.prompt(2));
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn two_chats_run_at_once_and_a_chat_keeps_its_order() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "[backends.blocking]\ncommand = \"{}\"\ntimeout_s = 60\n",
        fixture("agents/blocking.sh").display()
    ));
    for gate in ["a", "b", "c"] {
        mkfifo(ws.path(&format!("fake/gate.{gate}")));
    }
    let mock = Mock::start();
    let mut bot = Bot::start(
        &ws,
        &mock,
        &[
            "--backend",
            "blocking",
            "--allow-user",
            "1",
            "--allow-user",
            "2",
        ],
    );
    mock.message(1, 1, "gate:a");
    mock.message(1, 1, "gate:c");
    mock.message(2, 2, "gate:b");
    // Both turns are in flight at the same time: each waits for its own gate.
    wait_file(ws.path("fake/started.a"));
    wait_file(ws.path("fake/started.b"));
    open_gate(ws.path("fake/gate.b"));
    mock.wait_sent(2, "released b");
    // Chat 1's second message waits for its first, however long.
    assert!(!ws.path("fake/started.c").exists());
    open_gate(ws.path("fake/gate.a"));
    wait_file(ws.path("fake/started.c"));
    open_gate(ws.path("fake/gate.c"));
    mock.wait_sent(1, "released c");
    let answers: Vec<String> = mock
        .sent(1)
        .into_iter()
        .filter(|t| t.starts_with("released"))
        .collect();
    assert_eq!(answers, ["released a", "released c"]);
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn a_429_is_waited_out() {
    let ws = Workspace::new();
    ws.reply(1, "hello there\n");
    let mock = Mock::start();
    mock.fail_next(
        |c| c.method == "sendMessage" && c.text().contains("hello there"),
        429,
        json!({"ok": false, "error_code": 429,
               "description": "Too Many Requests: retry after 1",
               "parameters": {"retry_after": 1}}),
    );
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "greet me");
    mock.wait_for("the answer sent again", |calls| {
        (sends(calls, ME)
            .iter()
            .filter(|c| c.text().contains("hello there"))
            .count()
            == 2)
            .then_some(())
    });
    assert_eq!(bot.terminate(), 0);
    assert!(!bot.stderr().contains("cannot send"), "{}", bot.stderr());
}

#[test]
fn html_telegram_rejects_is_resent_as_plain_text() {
    let ws = Workspace::new();
    ws.reply(1, "use **this** one\n");
    let mock = Mock::start();
    mock.fail_next(
        |c| c.method == "sendMessage" && c.body["parse_mode"] == "HTML",
        400,
        json!({"ok": false, "error_code": 400,
               "description": "Bad Request: can't parse entities: Unsupported start tag \"b\""}),
    );
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "which one?");
    let plain = mock.wait_for("the plain resend", |calls| {
        sends(calls, ME)
            .into_iter()
            .find(|c| c.body["parse_mode"].is_null())
            .cloned()
    });
    assert_eq!(plain.text(), "use **this** one");
    let sent = mock.sent(ME);
    assert_eq!(sent, ["use <b>this</b> one", "use **this** one"]);
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn more_chats_than_slots_wait_their_turn() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "[backends.blocking]\ncommand = \"{}\"\ntimeout_s = 60\n",
        fixture("agents/blocking.sh").display()
    ));
    for gate in ["a", "b"] {
        mkfifo(ws.path(&format!("fake/gate.{gate}")));
    }
    let mock = Mock::start();
    let mut bot = Bot::start(
        &ws,
        &mock,
        &[
            "--backend",
            "blocking",
            "--allow-user",
            "1",
            "--allow-user",
            "2",
            "--max-concurrent",
            "1",
        ],
    );
    mock.message(1, 1, "gate:a");
    wait_file(ws.path("fake/started.a"));
    mock.message(2, 2, "gate:b");
    // Answered at once, after chat 2's task was taken.
    mock.message(2, 2, "/help");
    mock.wait_sent(2, "/status");
    mock.message(1, 1, "/status");
    assert!(
        !ws.path("fake/started.b").exists(),
        "a second turn ran with one slot"
    );
    open_gate(ws.path("fake/gate.a"));
    mock.wait_sent(1, "released a");
    wait_file(ws.path("fake/started.b"));
    open_gate(ws.path("fake/gate.b"));
    mock.wait_sent(2, "released b");
    // Chat 1's /status waited for its turn, and did not need a slot.
    mock.wait_sent(1, "backend: blocking");
    assert_eq!(bot.terminate(), 0);
}
