//! A second front end in a few lines: a chat over stdin and stdout that offers the library's
//! slash commands (`/undo`, `/retry`, `/model`, `/context`, `/compact`...), through the
//! library's public face alone: `cargo run --example line_chat -- BACKEND`. Tools that
//! change anything are refused, as nobody is asked.

use std::io::BufRead;

use agent_loop::chat::commands::library;
use agent_loop::chat::{Chat, ChatOptions, Invocation, Outcome, RunSettings};
use agent_loop::event::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::settings::{user_settings_path, Setting};
use agent_loop::BoxFuture;

/// Shows notices; refuses every approval.
struct Lines;

impl Observer for Lines {
    fn event(&mut self, event: &Event) {
        if let Event::Notice { message } = event {
            eprintln!("{message}");
        }
    }

    fn approve<'a>(&'a mut self, _: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async { Decision::Deny("nobody is asked in this example".into()) })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), agent_loop::Error> {
    let backend = std::env::args().nth(1);
    let env = |key: &str| std::env::var(key).ok();
    let mut settings = RunSettings::load(user_settings_path().as_deref(), &env)?;
    if let Some(backend) = backend {
        // The argument wins over the settings' backend, as a flag does.
        settings.backend = Some(Setting::flag(backend, "BACKEND"));
    }
    let mut chat = Chat::open(&settings, &ChatOptions::default(), &mut |n| {
        eprintln!("{n}")
    })?;
    let names: Vec<String> = library().map(|c| format!("/{}", c.name)).collect();
    eprintln!("commands: {}", names.join(" "));
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let reply = match Invocation::parse(&line) {
            None => chat.turn(&line, &mut Lines).await,
            Some(Err(_)) => Ok("not offered here".into()),
            Some(Ok(command)) => match chat.command(&command, &mut Lines).await {
                Ok(Outcome::Turn { input, .. }) => chat.turn(input, &mut Lines).await,
                Ok(Outcome::Reply(text) | Outcome::Session { reply: text, .. }) => Ok(text),
                Ok(_) => Ok("not offered here".into()),
                Err(e) => Err(e),
            },
        };
        match reply {
            Ok(text) => println!("{text}"),
            // A failed turn's prompt stays, and the user is told how to retry or drop it.
            Err(e) => println!("error: {}", chat.with_prompt_stays(e)),
        }
    }
    Ok(())
}
