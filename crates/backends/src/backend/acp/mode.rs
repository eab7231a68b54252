//! The agent's own approval mode, set before every prompt to what agent-loop's approval
//! calls for: its `auto_mode` (asks nothing) under `--approval never`, its `ask_mode`
//! otherwise. The mode a session starts in is never taken as given: agents remember things
//! between runs that start it wider (codex-acp starts in `auto` in a folder that a `--yes`
//! run trusted, Claude Code in the `defaultMode` of its settings), and `/yes off` must take
//! back what `/yes on` gave. A turn that should ask, in an agent that cannot be put in a
//! mode that asks, is not run.

use serde_json::{json, Value};

use super::conn::Agent;
use crate::backend::{agent_failed, Host};
use crate::config::AcpDef;
use crate::event::{Event, OutputStream};
use crate::Error;

/// The session's modes as the agent listed them in `session/new`: as `modes` (set with
/// `session/set_mode`) or as a config option of category `mode`.
struct Modes {
    ids: Vec<String>,
    /// The config option's id, when they are one (set with `session/set_config_option`).
    option: Option<Value>,
}

impl Modes {
    fn of(setup: &Value) -> Modes {
        let listed = &setup["modes"];
        if listed.is_object() {
            return Modes {
                ids: ids(&listed["availableModes"], "id"),
                option: None,
            };
        }
        match super::config_option(setup, "mode") {
            Some(option) => Modes {
                ids: ids(&option["options"], "value"),
                option: Some(option["id"].clone()),
            },
            None => Modes {
                ids: Vec::new(),
                option: None,
            },
        }
    }

    fn offers(&self, mode: &str) -> bool {
        self.ids.iter().any(|m| m == mode)
    }
}

/// The mode a session starts in, as `session/new` (or `session/load`) said.
pub fn current(setup: &Value) -> Option<String> {
    let listed = &setup["modes"];
    let current = match listed.is_object() {
        true => &listed["currentModeId"],
        false => &super::config_option(setup, "mode")?["currentValue"],
    };
    current.as_str().map(str::to_string)
}

/// What sets a session's mode: the agent, the session, what it offers, its mode as last
/// known (kept up to date here).
pub struct Session<'a> {
    pub agent: &'a mut Agent,
    pub id: &'a str,
    pub setup: &'a Value,
    pub mode: &'a mut Option<String>,
}

/// Puts the session in the mode agent-loop's approval calls for, unless it is in it.
/// `Err` refuses the turn: it should ask, and the agent cannot be put in a mode that asks.
pub async fn align(
    def: &AcpDef,
    mut session: Session<'_>,
    host: &mut dyn Host,
) -> Result<(), Error> {
    let modes = Modes::of(session.setup);
    let note = |host: &mut dyn Host, line: String| {
        host.event(Event::BackendOutput {
            backend: def.name.clone(),
            stream: OutputStream::Screen,
            line,
        })
    };
    if host.approves_all() {
        let Some(auto) = def.auto_mode.as_deref() else {
            return Ok(());
        };
        if session.mode.as_deref() == Some(auto) {
            return Ok(());
        }
        if modes.offers(auto) && set(&mut session, &modes, auto).await {
            *session.mode = Some(auto.to_string());
        } else {
            // Said once: from now on the session's mode is taken as the one asked for.
            *session.mode = Some(auto.to_string());
            note(
                host,
                format!("(the agent has no mode `{auto}`: its questions are approved here)"),
            );
        }
        return Ok(());
    }
    let refused = |why: String| {
        agent_failed(
            &def.name,
            format!(
                "{why}; the turn was not run, since the agent might change things without asking"
            ),
        )
    };
    let Some(ask) = def.ask_mode.as_deref() else {
        // No mode known to ask: at least never one known to ask nothing.
        return match (def.auto_mode.as_deref(), session.mode.as_deref()) {
            (Some(auto), Some(now)) if auto == now => Err(refused(format!(
                "the agent's session is in its mode `{now}`, which asks nothing (its \
                 auto_mode), and the entry names no ask_mode to set instead"
            ))),
            _ => Ok(()),
        };
    };
    let was = session.mode.clone();
    if was.as_deref() == Some(ask) || (modes.ids.is_empty() && was.is_none()) {
        return Ok(());
    }
    if !modes.offers(ask) {
        return Err(refused(format!(
            "the agent offers no mode `{ask}` (the entry's ask_mode; it offers: {}) and its \
             session is in mode `{}`",
            if modes.ids.is_empty() {
                "none".into()
            } else {
                modes.ids.join(", ")
            },
            was.as_deref().unwrap_or("unknown")
        )));
    }
    if !set(&mut session, &modes, ask).await {
        return Err(refused(format!(
            "the agent did not take its mode `{ask}` (the entry's ask_mode)"
        )));
    }
    *session.mode = Some(ask.to_string());
    if let Some(was) = was {
        note(
            host,
            format!("(the agent's session was in its mode `{was}`: set to `{ask}`, which asks)"),
        );
    }
    Ok(())
}

/// Sets the mode; whether the agent took it.
async fn set(session: &mut Session<'_>, modes: &Modes, mode: &str) -> bool {
    let id = session.id;
    let (method, params) = match &modes.option {
        Some(option) => (
            "session/set_config_option",
            json!({ "sessionId": id, "configId": option, "value": mode }),
        ),
        None => (
            "session/set_mode",
            json!({ "sessionId": id, "modeId": mode }),
        ),
    };
    session.agent.request(method, params).await.is_ok()
}

/// The `key` of every entry of a list.
fn ids(list: &Value, key: &str) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v[key].as_str().map(str::to_string))
        .collect()
}
