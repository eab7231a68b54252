//! Tool-call ids made to fit the API a request goes to. The conversation is agent-loop's and
//! outlives a backend switch, so a call keeps the id its first backend gave it (Kimi's
//! `functions.ls:0`, an Anthropic `toolu_...`, agent-loop's own `call_1` for a CLI's calls),
//! and APIs check them: Anthropic takes letters, digits, `_` and `-`, each id once per
//! request; Mistral exactly 9 letters or digits. A refused id would refuse every later
//! request of the session, so each request maps them here, on the wire only (the session
//! keeps the originals).
//!
//! The mapping is deterministic and depends only on the messages before a call, so a request
//! repeats the previous one's prefix byte for byte (prompt caching) and a backend gets back
//! the ids it gave when they fit, unchanged.

use std::collections::HashSet;

use crate::config::ToolCallIds;
use crate::context::Message;

/// Gives every call in `messages` an id that `rule` takes, unique where it asks for it, and
/// each result the id its call was given. A result answers a call of the assistant message
/// before it (`wire::with_all_results` makes that so), which keeps the pairing when ids
/// repeat across turns.
pub fn fit(messages: &mut [Message], rule: ToolCallIds) {
    if rule == ToolCallIds::Any {
        return;
    }
    let mut used = HashSet::new();
    // The last assistant message's calls not yet answered: (kept id, sent id).
    let mut open: Vec<(String, String)> = Vec::new();
    for message in messages {
        match message {
            Message::Assistant { tool_calls, .. } => {
                open.clear();
                for call in tool_calls {
                    let sent = fitted(rule, &call.id, &mut used);
                    open.push((std::mem::replace(&mut call.id, sent.clone()), sent));
                }
            }
            Message::ToolResult { call_id, .. } => {
                *call_id = match open.iter().position(|(kept, _)| kept == call_id) {
                    Some(at) => open.remove(at).1,
                    // Its call was left out of the request: an id that fits all the same.
                    None => fitted(rule, call_id, &mut used),
                };
            }
            Message::User { .. } => {}
        }
    }
}

/// `id` itself if the rule takes it and it is not used yet, else the first of the rule's
/// candidates for it that is free; recorded as used.
fn fitted(rule: ToolCallIds, id: &str, used: &mut HashSet<String>) -> String {
    let sent = if takes(rule, id) && !used.contains(id) {
        id.to_string()
    } else {
        (0u64..)
            .map(|n| candidate(rule, id, n))
            .find(|c| !used.contains(c))
            .expect("an endless supply of candidates has a free one")
    };
    used.insert(sent.clone());
    sent
}

fn takes(rule: ToolCallIds, id: &str) -> bool {
    match rule {
        ToolCallIds::Any => true,
        ToolCallIds::Anthropic => {
            !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        }
        ToolCallIds::Alnum9 => id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()),
    }
}

/// The `n`th id the rule offers for `id`: Anthropic's keeps what it can read of the original
/// (`functions.ls:0` -> `functions_ls_0`, then `functions_ls_0_1`, ...); Mistral's nine
/// characters are a hash of the original, as nothing of it would fit.
fn candidate(rule: ToolCallIds, id: &str, n: u64) -> String {
    match rule {
        ToolCallIds::Any => id.to_string(),
        ToolCallIds::Anthropic => {
            let mut base: String = id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if base.is_empty() {
                base.push_str("call");
            }
            match n {
                0 => base,
                n => format!("{base}_{n}"),
            }
        }
        ToolCallIds::Alnum9 => alnum9(fnv1a(id.as_bytes(), n)),
    }
}

/// FNV-1a over `bytes` and then `n`: the same on every machine and in every release, which a
/// std hasher does not promise.
fn fnv1a(bytes: &[u8], n: u64) -> u64 {
    bytes
        .iter()
        .copied()
        .chain(n.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |hash, b| {
            (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Nine base-62 digits of `value`.
fn alnum9(mut value: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    (0..9)
        .map(|_| {
            let digit = DIGITS[(value % 62) as usize];
            value /= 62;
            char::from(digit)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ToolCall;
    use serde_json::json;

    /// A turn: one assistant message with calls of these ids, then their results in order.
    fn turn(ids: &[&str]) -> Vec<Message> {
        let calls = ids
            .iter()
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "ls".into(),
                args: json!({}),
            })
            .collect();
        let mut out = vec![
            Message::user("go"),
            Message::Assistant {
                text: String::new(),
                tool_calls: calls,
            },
        ];
        out.extend(ids.iter().map(|id| Message::ToolResult {
            call_id: id.to_string(),
            name: "ls".into(),
            ok: true,
            output: String::new(),
        }));
        out
    }

    /// Each call's id and its result's, in order.
    fn pairs(messages: &[Message]) -> Vec<(String, String)> {
        let calls = messages.iter().flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            _ => Vec::new(),
        });
        let results = messages.iter().filter_map(|m| match m {
            Message::ToolResult { call_id, .. } => Some(call_id.clone()),
            _ => None,
        });
        calls.zip(results).collect()
    }

    fn sent(rule: ToolCallIds, turns: &[&[&str]]) -> Vec<(String, String)> {
        let mut messages: Vec<Message> = turns.iter().flat_map(|t| turn(t)).collect();
        fit(&mut messages, rule);
        pairs(&messages)
    }

    #[test]
    fn anthropic_gets_valid_unique_ids_paired_and_its_own_unchanged() {
        let got = sent(
            ToolCallIds::Anthropic,
            &[
                &["call_1"],
                &["functions.ls:0", "functions.read:1"],
                &["functions.ls:0", "call_1"],
                &["toolu_01A-b"],
            ],
        );
        let ids: Vec<&str> = got.iter().map(|(call, _)| call.as_str()).collect();
        assert_eq!(
            ids,
            [
                "call_1",
                "functions_ls_0",
                "functions_read_1",
                "functions_ls_0_1",
                "call_1_1",
                "toolu_01A-b"
            ]
        );
        assert!(got.iter().all(|(call, result)| call == result), "{got:?}");
    }

    #[test]
    fn alnum9_gets_nine_letters_or_digits_unique_and_its_own_unchanged() {
        let got = sent(
            ToolCallIds::Alnum9,
            &[
                &["call_1", "toolu_x"],
                &["call_1"],
                &["D681PevKs", "D681PevKs"],
            ],
        );
        assert!(got.iter().all(|(call, result)| call == result), "{got:?}");
        let ids: HashSet<&str> = got.iter().map(|(call, _)| call.as_str()).collect();
        assert_eq!(ids.len(), 5, "unique: {got:?}");
        assert!(
            ids.iter().all(|id| takes(ToolCallIds::Alnum9, id)),
            "{got:?}"
        );
        assert_eq!(got[3].0, "D681PevKs");
        // Deterministic: the same history, the same ids.
        assert_eq!(
            got,
            sent(
                ToolCallIds::Alnum9,
                &[
                    &["call_1", "toolu_x"],
                    &["call_1"],
                    &["D681PevKs", "D681PevKs"]
                ],
            )
        );
    }

    #[test]
    fn any_sends_ids_as_kept() {
        let got = sent(
            ToolCallIds::Any,
            &[&["functions.ls:0"], &["functions.ls:0"]],
        );
        assert!(got.iter().all(|(c, r)| c == "functions.ls:0" && r == c));
    }

    #[test]
    fn a_longer_history_keeps_the_earlier_ids() {
        let short = sent(ToolCallIds::Anthropic, &[&["a.b"], &["a.b"]]);
        let long = sent(ToolCallIds::Anthropic, &[&["a.b"], &["a.b"], &["a_b"]]);
        assert_eq!(long[..2], short[..]);
        assert_eq!(long[2].0, "a_b_2");
    }
}
