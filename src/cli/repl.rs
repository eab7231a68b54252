//! The interactive loop: read an entry (one line, a `\` continuation or a `"""` block), run it
//! as a slash command or a turn, repeat. Ctrl-C cancels a running turn; twice within two
//! seconds at the prompt leaves. SIGTERM and SIGHUP leave at once, the session saved.

use std::time::Instant;

use super::app::{App, DOUBLE_INTERRUPT};
use super::commands::{self, Flow};
use super::signals::Stop;
use super::text::wrap::at_spaces;

pub async fn run(app: &mut App) -> i32 {
    app.frontend().repl = true;
    let status = app.chat().status();
    let welcome = format!(
        "agent-loop with backend `{}`, session {}. Type a task, or /help for the commands; `exit`, `quit` or Ctrl-D leaves.",
        status.backend, status.session
    );
    // On a terminal, broken at spaces rather than mid-word by the terminal.
    let welcome = match app.frontend().display.layout_width() {
        Some(cols) => at_spaces(&welcome, cols.saturating_sub(1)).join("\n"),
        None => welcome,
    };
    app.notice(&welcome);
    let mut last_interrupt: Option<Instant> = None;
    let code = loop {
        app.frontend().display.prompt("You: ");
        // Debug builds only: how the tests see that a panic gives the terminal back.
        #[cfg(debug_assertions)]
        if std::env::var_os("AGENT_LOOP_TEST_PANIC").is_some() {
            panic!("AGENT_LOOP_TEST_PANIC is set");
        }
        let entry = {
            let (frontend, signals) = app.input_parts();
            let display = &mut frontend.display;
            let input = &mut frontend.input;
            let mut more = || display.prompt("... ");
            tokio::select! {
                entry = input.entry("You: ", &mut more) => Ok(entry),
                stop = signals.next() => Err(stop),
            }
        };
        let entry = match entry {
            Ok(entry) => Some(entry),
            Err(stop) if stop.ends_run() => {
                app.notice("");
                break stop.exit_code();
            }
            Err(_) => None,
        };
        let Some(entry) = entry else {
            app.notice("");
            if last_interrupt.is_some_and(|t| t.elapsed() < DOUBLE_INTERRUPT) {
                break Stop::Interrupt.exit_code();
            }
            last_interrupt = Some(Instant::now());
            app.notice("(Ctrl-C again to leave, or type exit)");
            continue;
        };
        let Some(entry) = entry else {
            app.notice("");
            break 0;
        };
        let text = entry.trim();
        // `//cmd` goes to the backend as `/cmd`: a terminal agent's own slash commands.
        let (text, typed_through) = match text.strip_prefix("//") {
            Some(_) => (&text[1..], true),
            None => (text, false),
        };
        match text {
            "" => continue,
            "exit" | "quit" => break 0,
            "clear" => {
                if let Err(e) = app.clear_session() {
                    app.notice(&format!("error: {e}"));
                }
                app.notice("[conversation cleared]");
                continue;
            }
            _ if text.starts_with('/') && !typed_through => {
                match commands::dispatch(app, text).await {
                    Flow::Continue => continue,
                    Flow::Exit => break 0,
                    Flow::Stopped(code) => break code,
                }
            }
            _ => {}
        }
        if let super::app::Outcome::Cancelled(stop) = app.turn(text).await {
            if stop.ends_run() {
                break stop.exit_code();
            }
            last_interrupt = Some(Instant::now());
        }
    };
    let _ = app.chat_mut().save();
    let line = app.summary_line();
    app.notice(&line);
    code
}
