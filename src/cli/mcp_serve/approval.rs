//! Approval goes to the person at the calling client: a tool call that must be approved
//! (agent-loop's own, or one an ACP agent backend asks about) becomes an MCP elicitation in
//! form mode, whose message is the question the terminal asks, every line of the call shown
//! as it is there (escapes, runs of blanks as counts). A client that offers no elicitation
//! gets the rules of a pipe: only what `--yes` or an `--allow` rule lets through runs (the
//! policy decides those before asking), everything else is refused with a reason the model
//! reads.

use rmcp::model::{ClientCapabilities, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{Peer, RoleServer};
use serde_json::json;

use agent_loop::event::{ApprovalRequest, Decision};

use crate::cli::text::approval::question;

/// The width the question's lines are wrapped to: a client's dialog.
const WIDTH: usize = 100;

/// The answers of the form, as its one field `decision` spells them.
const ONCE: &str = "allow";
const ALWAYS: &str = "always";
const DENY: &str = "deny";

/// Whether the client can be asked: its capabilities (those of the call, else of
/// `initialize`) declare elicitation in form mode, or without a mode, which means form (as
/// rmcp's `supported_elicitation_modes` reads it).
pub fn can_elicit(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Asks the client whether the call may run, or refuses it when the client cannot be asked.
pub async fn ask(peer: &Peer<RoleServer>, elicit: bool, request: &ApprovalRequest) -> Decision {
    let tool = &request.call.name;
    if !elicit {
        return Decision::Deny(format!(
            "agent-loop cannot ask for approval (the MCP client that called it offers no \
             elicitation) and neither --yes nor an --allow rule covers it, so {tool} was not \
             allowed to run"
        ));
    }
    let (message, _) = question(request, WIDTH, true, "");
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message.trim_end().to_string(),
        requested_schema: schema(tool),
    };
    match peer.create_elicitation(params).await {
        Ok(result) => match result.action {
            ElicitationAction::Accept => {
                let decision = result
                    .content
                    .as_ref()
                    .and_then(|c| c.get("decision"))
                    .and_then(|d| d.as_str())
                    .unwrap_or(DENY)
                    .to_string();
                match decision.as_str() {
                    ONCE => Decision::Once,
                    ALWAYS => Decision::Always,
                    _ => Decision::Deny("the user denied it".into()),
                }
            }
            ElicitationAction::Decline => Decision::Deny("the user declined it".into()),
            _ => Decision::Deny("the user cancelled the question".into()),
        },
        Err(e) => Decision::Deny(format!(
            "the MCP client did not answer the approval question ({e}), so {tool} was not \
             allowed to run"
        )),
    }
}

/// The form: one required choice.
fn schema(tool: &str) -> ElicitationSchema {
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "oneOf": [
                    {"const": ONCE, "title": "Allow once"},
                    {"const": ALWAYS, "title": format!("Allow every {tool} call of this session")},
                    {"const": DENY, "title": "Deny"},
                ],
            },
        },
        "required": ["decision"],
    });
    serde_json::from_value(schema).expect("the approval form is a valid elicitation schema")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn form_mode_is_declared_or_implied() {
        let with = |elicitation: Value| {
            let caps: ClientCapabilities =
                serde_json::from_value(json!({ "elicitation": elicitation })).unwrap();
            can_elicit(Some(&caps))
        };
        assert!(with(json!({"form": {}, "url": {}})));
        assert!(with(json!({})), "no mode named: form");
        assert!(!with(json!({"url": {}})), "URL mode only");
        assert!(!can_elicit(Some(&ClientCapabilities::default())));
        assert!(!can_elicit(None));
    }

    #[test]
    fn the_form_offers_three_answers() {
        let schema = serde_json::to_value(schema("bash")).unwrap();
        let choices = &schema["properties"]["decision"]["oneOf"];
        assert_eq!(choices.as_array().unwrap().len(), 3, "{schema}");
        assert_eq!(choices[1]["title"], "Allow every bash call of this session");
        assert_eq!(schema["required"][0], "decision");
    }
}
