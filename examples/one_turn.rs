//! One turn with any configured backend, through the library alone:
//! `cargo run --example one_turn -- BACKEND "TASK"`. The configuration layers are the usual
//! ones (built-in, then `$XDG_CONFIG_HOME/agent-loop/`); tools that change anything are
//! refused, as nobody is asked.

use agent_loop::chat::{Chat, ChatOptions, RunSettings};
use agent_loop::event::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::settings::{user_settings_path, Setting};
use agent_loop::BoxFuture;

/// Shows each tool call; refuses every approval.
struct Print;

impl Observer for Print {
    fn event(&mut self, event: &Event) {
        if let Event::ToolCall { call, summary } = event {
            eprintln!("[tool {}] {summary}", call.name);
        }
    }

    fn approve<'a>(&'a mut self, _: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async { Decision::Deny("nobody is asked in this example".into()) })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), agent_loop::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [backend, task] = &args[..] else {
        return Err(agent_loop::Error::config("usage: one_turn BACKEND TASK"));
    };
    let env = |key: &str| std::env::var(key).ok();
    let mut settings = RunSettings::load(user_settings_path().as_deref(), &env)?;
    // The argument wins over the settings' backend, as a flag does.
    settings.backend = Some(Setting::flag(backend.clone(), "BACKEND"));
    let mut chat = Chat::open(&settings, &ChatOptions::default(), &mut |n| {
        eprintln!("{n}")
    })?;
    println!("{}", chat.turn(task, &mut Print).await?);
    Ok(())
}
