//! The bot's life: the checks before it starts, polling through network errors, shutdown
//! (running turns drained, then cancelled) and a restart that continues the chat.

use crate::common::{send_signal, Workspace};

use super::mock::{Mock, TOKEN};
use super::{open_gate, wait_file, Bot, ME};

#[test]
fn sigterm_during_a_turn_still_sends_the_answer() {
    let ws = Workspace::new();
    ws.gated_backend();
    ws.reply(1, "finished anyway\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "slow"]);
    mock.message(ME, ME, "take your time");
    wait_file(ws.path("fake/started"));
    // A second message waits in the chat's queue (the /help answer shows it was taken).
    mock.message(ME, ME, "and this too");
    mock.message(ME, ME, "/help");
    mock.wait_sent(ME, "/status");
    send_signal(bot.child.id(), libc::SIGTERM);
    bot.wait_stderr("stopping");
    open_gate(ws.path("fake/gate"));
    assert_eq!(bot.wait(), 0, "{}", bot.stderr());
    let sent = mock.sent(ME);
    let answer = sent.iter().position(|t| t == "finished anyway");
    let not_run = sent
        .iter()
        .position(|t| t.starts_with("Not run: the bot is shutting down"));
    assert!(answer.is_some() && not_run > answer, "{sent:?}");
    assert_eq!(ws.runs(), 1);
    // The message was acknowledged: a restart does not see it again.
    assert!(mock.acked() >= 2, "acked {}", mock.acked());
    assert!(ws
        .path("data/agent-loop/sessions/telegram-42/session.json")
        .exists());
}

#[test]
fn a_restart_continues_the_chat() {
    let ws = Workspace::new();
    ws.reply(1, "noted\n");
    ws.reply(2, "it was 7\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "remember the number 7");
    mock.wait_sent(ME, "noted");
    assert_eq!(bot.terminate(), 0);
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "which number?");
    mock.wait_sent(ME, "it was 7");
    let prompt = ws.prompt(2);
    assert!(prompt.contains("remember the number 7"), "{prompt}");
    assert!(
        bot.stderr().contains("continuing session telegram-42"),
        "{}",
        bot.stderr()
    );
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn it_will_not_start_without_a_token_or_an_allowlist() {
    let ws = Workspace::new();
    let mock = Mock::start();
    let mut cmd = ws.cmd(&["telegram", "--backend", "fake", "--allow-user", "42"]);
    cmd.env_remove("TELEGRAM_BOT_TOKEN");
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(
        run.stderr().contains("TELEGRAM_BOT_TOKEN"),
        "{}",
        run.stderr()
    );

    // The token's variable and the allowlist from config.toml's [telegram] table.
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "[telegram]\ntoken_env = \"MY_BOT_TOKEN\"\nallowed_users = [42]\n",
    )
    .unwrap();
    let mut cmd = ws.cmd(&["telegram", "--backend", "fake"]);
    cmd.env("TELEGRAM_BOT_TOKEN", TOKEN);
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(
        run.stderr().contains("set MY_BOT_TOKEN"),
        "{}",
        run.stderr()
    );
    let mut cmd = ws.cmd(&["telegram", "--backend", "fake", "--poll-timeout", "1"]);
    cmd.env("MY_BOT_TOKEN", TOKEN);
    let mut bot = Bot::spawn(&ws, &mock, cmd);
    ws.reply(1, "from the table\n");
    mock.message(ME, ME, "hi");
    mock.wait_sent(ME, "from the table");
    assert_eq!(bot.terminate(), 0);
    std::fs::remove_file(ws.path("xdg/agent-loop/config.toml")).unwrap();

    let mut cmd = ws.cmd(&["telegram", "--backend", "fake"]);
    cmd.env("TELEGRAM_BOT_TOKEN", TOKEN)
        .env("TELEGRAM_API_URL", &mock.url);
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(run.stderr().contains("--allow-user ID"), "{}", run.stderr());

    // A token the Bot API refuses ends the run, naming the variable.
    let mut cmd = ws.cmd(&["telegram", "--backend", "fake", "--allow-user", "42"]);
    cmd.env("TELEGRAM_BOT_TOKEN", "999:not-the-mock-bots-token")
        .env("TELEGRAM_API_URL", &mock.url);
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(
        run.stderr().contains("refused the token"),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr().contains("TELEGRAM_BOT_TOKEN"),
        "{}",
        run.stderr()
    );
    assert!(!run.stderr().contains("not-the-mock"), "{}", run.stderr());

    // A backend that does not exist stops the start, not each chat's first message.
    let mut cmd = ws.cmd(&["telegram", "--backend", "nope", "--allow-user", "42"]);
    cmd.env("TELEGRAM_BOT_TOKEN", TOKEN)
        .env("TELEGRAM_API_URL", &mock.url);
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(run.stderr().contains("nope"), "{}", run.stderr());

    // --allow-anyone starts, with a warning.
    let mut cmd = ws.cmd(&[
        "telegram",
        "--backend",
        "fake",
        "--allow-anyone",
        "--poll-timeout",
        "1",
    ]);
    cmd.env("AGENT_LOOP_TELEGRAM_USERS", "");
    let mut bot = Bot::spawn(&ws, &mock, cmd);
    bot.wait_stderr("polling");
    assert!(
        bot.stderr().contains("warning: --allow-anyone"),
        "{}",
        bot.stderr()
    );
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn polling_resumes_after_network_errors() {
    let ws = Workspace::new();
    ws.reply(1, "still here\n");
    let mock = Mock::start();
    mock.drop_polls(2);
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "are you there?");
    mock.wait_sent(ME, "still here");
    let stderr = bot.stderr();
    assert_eq!(
        stderr.matches("getUpdates: network error").count(),
        2,
        "{stderr}"
    );
    assert_eq!(bot.terminate(), 0);
}

#[test]
fn a_turn_still_running_after_the_drain_is_cancelled() {
    let ws = Workspace::new();
    ws.gated_backend();
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "slow", "--drain-timeout", "1"]);
    mock.message(ME, ME, "never ends");
    wait_file(ws.path("fake/started"));
    assert_eq!(bot.terminate(), 0, "{}", bot.stderr());
    assert!(bot.stderr().contains("cancelling"), "{}", bot.stderr());
    mock.wait_sent(ME, "Cancelled: the bot is shutting down.");
    // The backend was killed, and the session saved with the cancelled turn.
    ws.assert_no_leftovers();
    let saved =
        std::fs::read_to_string(ws.path("data/agent-loop/sessions/telegram-42/session.json"))
            .unwrap();
    assert!(saved.contains("never ends"), "{saved}");
}

/// `/new` after `/load` of another session archives the chat's own conversation, not the
/// loaded one: it used to replace the chat's own saved session, its turns lost.
#[test]
fn new_after_a_load_archives_the_chats_own_conversation() {
    let ws = Workspace::new();
    ws.reply(1, "other answer\n");
    ws.run(&["--backend", "fake", "--session", "other", "elsewhere"])
        .expect_code(0);
    ws.reply(2, "done\n");
    let mock = Mock::start();
    let mut bot = Bot::start(&ws, &mock, &["--backend", "fake"]);
    mock.message(ME, ME, "the chat's own task");
    mock.wait_sent(ME, "done");
    mock.message(ME, ME, "/load other");
    mock.wait_sent(ME, "other");
    mock.message(ME, ME, "/new");
    let new = mock.wait_sent(ME, "New conversation");
    assert!(new.contains("saved as telegram-42-archived"), "{new}");
    let archived = std::fs::read_to_string(
        ws.path("data/agent-loop/sessions/telegram-42-archived/session.json"),
    )
    .unwrap();
    assert!(archived.contains("the chat's own task"), "{archived}");
    let other =
        std::fs::read_to_string(ws.path("data/agent-loop/sessions/other/session.json")).unwrap();
    assert!(other.contains("elsewhere"), "{other}");
    assert_eq!(bot.terminate(), 0);
}
