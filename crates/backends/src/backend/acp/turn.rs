//! One prompt through a running ACP agent: `session/prompt` sent, then everything the agent
//! sends is read in order until the prompt's answer (its stop reason): updates become events,
//! requests are answered through the host. The turn's time is capped (`timeout_s`): past it,
//! `session/cancel`, and an agent that still does not answer is given up. A turn whose future
//! is dropped (Ctrl-C, Telegram's /stop) sends `session/cancel` as it goes, and the next turn
//! waits a grace period for the agent to settle, or starts it again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp::v1::ConnectionTo;
use acp::UntypedMessage;
use agent_client_protocol as acp;
use serde_json::{json, Value};

use super::conn::{closed, Agent};
use super::inbox::Inbound;
use super::serve;
use super::terminal::Terminals;
use super::update::{usage_in, Gathered};
use crate::backend::{agent_failed, turn_timed_out, Host, Reply};
use crate::config::AcpDef;
use crate::event::{Event, OutputStream};
use crate::Error;

/// How long a cancelled agent has to answer its prompt before it is killed.
pub const GRACE: Duration = Duration::from_secs(5);

/// What a turn gave.
pub struct Answer {
    pub gathered: Gathered,
    pub stop_reason: String,
}

/// Where a turn whose future was dropped leaves what it had gathered: the answer so far and
/// the agent's tool calls ([`crate::backend::Backend::take_partial`]).
pub type Partial = Arc<Mutex<Option<Reply>>>;

/// Holds what the turn gathers; dropped before the prompt was answered (the turn's future was
/// dropped: Ctrl-C, Telegram's /stop), it sends `session/cancel` and leaves the answer so far
/// in `partial`.
struct CancelOnDrop<'a> {
    cx: ConnectionTo<acp::Agent>,
    session: String,
    armed: bool,
    gathered: Gathered,
    partial: &'a Partial,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            cancel(&self.cx, &self.session);
            let reply = Reply {
                text: self.gathered.text.trim().to_string(),
                usage: self.gathered.usage,
                ran: self.gathered.ran(),
                ..Reply::default()
            };
            *self.partial.lock().unwrap_or_else(|e| e.into_inner()) = Some(reply);
        }
    }
}

fn cancel(cx: &ConnectionTo<acp::Agent>, session: &str) {
    if let Ok(message) = UntypedMessage::new("session/cancel", json!({ "sessionId": session })) {
        let _ = cx.send_notification(message);
    }
}

/// Runs one prompt. On return the agent has answered it; on an error it may not have (then
/// `*outstanding` still holds the prompt's number).
pub async fn run(
    def: &AcpDef,
    agent: &mut Agent,
    session: &str,
    prompt: Vec<Value>,
    outstanding: &mut Option<u64>,
    partial: &Partial,
    host: &mut dyn Host,
) -> Result<Answer, Error> {
    let name = def.name.as_str();
    let mut gathered = Gathered::new(def.notice.clone());
    // What the agent sent before this prompt (its commands, gemini's `[MODE_UPDATE] yolo`
    // text after `session/set_mode`) is no part of the answer to it.
    let replayed = std::mem::take(&mut agent.replayed);
    while let Some(inbound) = agent.inbound.try_recv() {
        match inbound {
            Inbound::Notification { method, params }
                if method == "session/update" && !(replayed && super::update::replays(&params)) =>
            {
                let mut emit = |e: Event| host.event(e);
                gathered.before_prompt(name, &params, &mut emit);
            }
            Inbound::Closed(why) => {
                let why = why.unwrap_or_else(|| "it closed the connection".into());
                let ended = agent.ended(&why).await;
                return Err(agent_failed(name, format!("the agent stopped: {ended}")));
            }
            _ => {}
        }
    }
    let number = agent
        .prompt(json!({ "sessionId": session, "prompt": prompt }))
        .map_err(|e| agent_failed(name, format!("cannot send the prompt: {}", e.message)))?;
    *outstanding = Some(number);
    let mut terminals = Terminals::default();
    let mut granted = serve::Granted::default();
    let began = tokio::time::Instant::now();
    let deadline = tokio::time::sleep(def.timeout);
    tokio::pin!(deadline);
    let mut ticks = tokio::time::interval_at(began + def.progress_every, def.progress_every);
    let mut cancelled_at = None;
    let mut guard = CancelOnDrop {
        cx: agent.cx.clone(),
        session: session.to_string(),
        armed: true,
        gathered,
        partial,
    };
    let attending = agent.inbound.attending();
    let result = loop {
        let inbound = tokio::select! {
            inbound = agent.next() => inbound,
            _ = ticks.tick() => {
                host.event(Event::Waiting { backend: name.to_string(), elapsed_s: began.elapsed().as_secs() });
                continue;
            }
            _ = &mut deadline => {
                if cancelled_at.is_some() {
                    break Err(format!("it did not stop within {} s of `session/cancel`", GRACE.as_secs()));
                }
                cancel(&agent.cx, session);
                cancelled_at = Some(began.elapsed());
                deadline.as_mut().reset(tokio::time::Instant::now() + GRACE);
                continue;
            }
        };
        passed_over(name, agent, host);
        match inbound {
            None | Some(Inbound::Closed(_)) => {
                let why = match inbound {
                    Some(Inbound::Closed(Some(why))) => why,
                    _ => "it closed the connection".into(),
                };
                break Err(format!(
                    "the agent stopped mid-turn: {}",
                    agent.ended(&why).await
                ));
            }
            Some(Inbound::Answered(n, result)) if n == number => {
                *outstanding = None;
                break match result {
                    Ok(answer) => Ok(answer),
                    Err(e) if closed(&e) => Err(format!(
                        "the agent stopped mid-turn: {}",
                        agent.ended("it closed its output").await
                    )),
                    Err(e) => Err(refusal(&e)),
                };
            }
            // The answer to a prompt cancelled earlier.
            Some(Inbound::Answered(..)) => {}
            Some(Inbound::Notification { method, params }) => {
                if method == "session/update" {
                    let mut emit = |e: Event| host.event(e);
                    guard.gathered.update(name, &params, &mut emit);
                    if let Some(why) = guard.gathered.over.take() {
                        cancel(&agent.cx, session);
                        break Err(why);
                    }
                }
            }
            Some(Inbound::Request {
                method,
                params,
                responder,
            }) => {
                if method == "session/request_permission" {
                    guard.gathered.asked(&params);
                }
                // Waiting on a command or on the user, the turn reads nothing meanwhile.
                agent.inbound.attend(false);
                let answer =
                    serve::answer(name, &method, &params, host, &mut terminals, &mut granted).await;
                agent.inbound.attend(true);
                let _ = match answer {
                    Ok(value) => responder.respond(value),
                    Err(e) => responder.respond_with_error(e),
                };
            }
        }
    };
    drop(attending);
    guard.armed = false;
    let mut gathered = std::mem::take(&mut guard.gathered);
    terminals.report(host);
    // Said, since agent-loop's approval was not asked: only the agent's own settings can
    // have allowed it.
    if !host.approves_all() {
        for title in gathered.unasked_changes() {
            host.event(Event::BackendOutput {
                backend: name.to_string(),
                stream: OutputStream::Screen,
                line: format!(
                    "(the agent changed files without asking: {title}; its own settings allowed it)"
                ),
            });
        }
    }
    let answer = match result {
        Ok(answer) => answer,
        Err(why) if cancelled_at.is_some() => {
            return Err(turn_timed_out(name, def.timeout, format!("; {why}")))
        }
        Err(why) => return Err(agent_failed(name, why)),
    };
    if let Some(usage) = usage_in(&answer) {
        gathered.counts(usage);
    }
    let stop_reason = answer["stopReason"]
        .as_str()
        .unwrap_or("end_turn")
        .to_string();
    if cancelled_at.is_some() {
        return Err(turn_timed_out(name, def.timeout, String::new()));
    }
    Ok(Answer {
        gathered,
        stop_reason,
    })
}

/// A note on what the agent sent while nobody read it, past the queue's budget.
fn passed_over(name: &str, agent: &Agent, host: &mut dyn Host) {
    let dropped = agent.inbound.dropped();
    if dropped > 0 {
        host.event(Event::BackendOutput {
            backend: name.to_string(),
            stream: OutputStream::Screen,
            line: format!(
                "(passed over {dropped} messages from the agent: it sent more than {} while \
                 agent-loop waited on something else)",
                crate::process::capped::size(super::inbox::BUDGET)
            ),
        });
    }
}

/// An error answer to a prompt, in words.
fn refusal(e: &agent_client_protocol::Error) -> String {
    let code: i32 = e.code.into();
    let mut why = format!(
        "the agent answered the prompt with an error: {} ({code})",
        e.message
    );
    if let Some(data) = &e.data {
        why.push_str(&format!(": {data}"));
    }
    why
}

/// Waits (a grace period) for the answer to a prompt cancelled before: whatever else the
/// agent sends meanwhile is passed over, its requests refused. `false`: it did not answer.
pub async fn settle(agent: &mut Agent, outstanding: &mut Option<u64>) -> bool {
    let Some(number) = *outstanding else {
        return true;
    };
    let waited = tokio::time::timeout(GRACE, async {
        loop {
            match agent.next().await {
                None | Some(Inbound::Closed(_)) => return false,
                Some(Inbound::Answered(n, _)) if n == number => return true,
                Some(Inbound::Request {
                    method, responder, ..
                }) => {
                    let outcome = json!({ "outcome": { "outcome": "cancelled" } });
                    let _ = if method == "session/request_permission" {
                        responder.respond(outcome)
                    } else {
                        responder
                            .respond_with_error(agent_client_protocol::Error::request_cancelled())
                    };
                }
                Some(_) => {}
            }
        }
    })
    .await;
    let settled = waited.unwrap_or(false);
    if settled {
        *outstanding = None;
    }
    settled
}
