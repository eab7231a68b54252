//! An agent that needs a login: authenticating with a key set in its environment where it
//! offers that (codex-acp), and the words for a failed request that name its authentication
//! methods and how to set one up.

use serde_json::Value;

use super::conn::Failure;
use crate::backend::agent_failed;
use crate::config::AcpDef;
use crate::Error;

/// The agent's first authentication method of type `env_var` whose variables are all set
/// in its environment (this process's, or the entry's `env`).
pub fn env_auth<'a>(def: &AcpDef, info: &'a Value) -> Option<&'a str> {
    let set = |name: &str| {
        def.env.get(name).is_some_and(|v| !v.is_empty())
            || std::env::var_os(name).is_some_and(|v| !v.is_empty())
    };
    info["authMethods"].as_array()?.iter().find_map(|m| {
        let vars = m["vars"].as_array().filter(|v| !v.is_empty())?;
        let all = vars.iter().all(|v| v["name"].as_str().is_some_and(set));
        (m["type"] == "env_var" && all).then_some(m["id"].as_str()?)
    })
}

/// A failed request, in words; for an agent that needs a login, what to set up.
pub fn failed(def: &AcpDef, method: &str, failure: Failure, info: &Value) -> Error {
    match failure {
        Failure::Refused(e)
            if i32::from(e.code) == -32000 || e.message.to_lowercase().contains("auth") =>
        {
            let methods: Vec<String> = info["authMethods"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let mut line = format!(
                        "  {} ({})",
                        m["id"].as_str().unwrap_or("?"),
                        m["name"].as_str().unwrap_or("")
                    );
                    if let Some(d) = m["description"].as_str() {
                        line.push_str(&format!(": {d}"));
                    }
                    line
                })
                .collect();
            agent_failed(&def.name, format!(
                "the agent needs authentication (`{method}`: {}). Set up one of its methods by \
                 running `{}` once by itself, or set its API key in `env` (docs/acp.md):\n{}",
                e.message,
                def.command,
                if methods.is_empty() { "  (it lists none)".to_string() } else { methods.join("\n") }
            ))
        }
        // The error's data holds the reason where the message is generic: claude-agent-acp
        // answers "Internal error" with `{"details": "Query closed before response received"}`.
        Failure::Refused(e) => agent_failed(
            &def.name,
            format!(
                "`{method}` failed: {} ({}){}",
                e.message,
                i32::from(e.code),
                e.data
                    .as_ref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            ),
        ),
        Failure::Ended(why) => agent_failed(
            &def.name,
            format!("the agent stopped during `{method}`: {why}"),
        ),
        Failure::Local(why) => agent_failed(&def.name, format!("`{method}`: {why}")),
    }
}
