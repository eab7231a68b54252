//! Which messages one request carries: the mode picks the history, the token budget trims it.
//!
//! The rules: the preamble (instructions, tools, memory file) and the current user message
//! are always sent; a kept part of the history starts at a user message, so a request never
//! opens with an answer whose question was dropped (Bedrock and other Anthropic-format
//! endpoints refuse a first message that is not the user's) nor with a tool result whose call
//! was; within the current exchange, sent after its user message, a cut never falls between
//! a tool call and its results (it starts at an assistant message); when the request would pass the
//! budget, the oldest messages go first, down to [`TARGET_PERCENT`] of the budget, so the next
//! few requests fit without cutting again (the start of the kept part is remembered: the
//! `hint`); and nothing is sent above the budget: if even the preamble, the user's message
//! and the newest tool call with its results do not fit, the request is an error.
//!
//! Only the kept part is walked (newest first), so the cost of a plan grows with what is
//! sent, not with the length of the history.

use super::exact::Method;
use super::tokens::{estimate, Measure};
use super::ContextError;
use super::{ContextMode, Conversation, Message};

/// Trimming cuts down to this share of the budget.
pub const TARGET_PERCENT: u64 = 75;

/// What a plan needs besides the conversation.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub mode: ContextMode,
    pub max_tokens: u64,
    pub bytes_per_token: f64,
    /// How the backend's tokens are counted: messages it counted exactly count so.
    pub method: Method,
    /// Bytes always sent: instructions, tool descriptions, memory file (or what an agent's
    /// catch-up prompt opens with).
    pub fixed_bytes: usize,
    /// What those bytes are, with the verb (`the preamble takes`), for the error when a
    /// request does not fit.
    pub fixed_what: &'static str,
    /// The first message kept by the last trim; history before it stays out.
    pub hint: usize,
}

/// The messages of one request, as indices into the conversation: the summary if sent, then
/// `user` if it is kept apart (the current exchange was cut), then `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub summary: bool,
    /// The current user message, when it is sent ahead of a later `start`.
    pub user: Option<usize>,
    pub start: usize,
    pub end: usize,
    /// History messages the mode would consider that are not sent (and not summarised).
    pub omitted: usize,
    /// Whether the budget cut messages the mode would have sent.
    pub trimmed: bool,
    pub tokens: u64,
    /// Bytes of what is estimated (not counted exactly), for calibration against the
    /// backend's count.
    pub bytes: usize,
    /// The tokens of what is counted exactly.
    pub exact: u64,
    pub max_tokens: u64,
}

impl Limits {
    /// How a message's tokens are counted.
    pub fn measure(&self) -> Measure {
        Measure {
            bytes_per_token: self.bytes_per_token,
            method: self.method,
        }
    }
}

impl Plan {
    /// Messages sent, the summary not counted.
    pub fn messages(&self) -> usize {
        usize::from(self.user.is_some()) + (self.end - self.start)
    }

    /// Where later plans may start at the earliest.
    pub fn hint(&self) -> usize {
        self.user.unwrap_or(self.start)
    }
}

/// The index of the last user message (0 if there is none).
pub fn current_user(conversation: &Conversation) -> usize {
    conversation
        .messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
        .unwrap_or(0)
}

/// Whether a kept part within the current exchange (its user message sent ahead) may start
/// at `i`: not at a tool result, which would lose its call.
pub fn starts_group(conversation: &Conversation, i: usize) -> bool {
    !matches!(
        conversation.messages.get(i),
        Some(Message::ToolResult { .. })
    )
}

/// Whether a kept part of the history may start at `i`: at a user message, so the request
/// opens with the user's turn and every answer comes with its question.
pub fn opens_exchange(conversation: &Conversation, i: usize) -> bool {
    matches!(conversation.messages.get(i), Some(Message::User { .. }))
}

/// `i`, moved back to the user message of its exchange (or to 0).
fn exchange_start(conversation: &Conversation, mut i: usize) -> usize {
    while i > 0 && !opens_exchange(conversation, i) {
        i -= 1;
    }
    i
}

/// `i`, moved back to the tool call whose results it falls among.
fn group_start(conversation: &Conversation, mut i: usize) -> usize {
    while i > 0 && !starts_group(conversation, i) {
        i -= 1;
    }
    i
}

fn sum_tokens(conversation: &Conversation, range: std::ops::Range<usize>, bpt: Measure) -> u64 {
    range.map(|i| conversation.size(i).tokens(bpt)).sum()
}

/// The smallest `s` in `lo..=hi` where a kept part may start (`may_start`: [`opens_exchange`]
/// or [`starts_group`]) and `s..end` takes at most `room` tokens. `s == end` (nothing kept)
/// counts when `hi >= end`.
pub fn fit_start(
    conversation: &Conversation,
    (lo, hi, end): (usize, usize, usize),
    room: u64,
    measure: Measure,
    may_start: fn(&Conversation, usize) -> bool,
) -> Option<usize> {
    let mut best = (lo <= end && hi >= end).then_some(end);
    let mut sum = 0u64;
    for s in (lo..end).rev() {
        sum += conversation.size(s).tokens(measure);
        if sum > room {
            break;
        }
        if s <= hi && may_start(conversation, s) {
            best = Some(s);
        }
    }
    best
}

/// Decides which messages the next request carries.
pub fn plan(conversation: &Conversation, limits: &Limits) -> Result<Plan, ContextError> {
    let n = conversation.len();
    let bpt = limits.measure();
    let user = current_user(conversation);
    let summary = match limits.mode {
        ContextMode::Summarize => conversation.summary().filter(|s| s.upto <= user),
        _ => None,
    };
    let base = summary.map_or(0, |s| s.upto);
    let fixed_bytes = limits.fixed_bytes + summary.map_or(0, |s| s.text.len());
    let fixed = estimate(fixed_bytes, bpt.bytes_per_token);
    let user_tokens = if n > 0 {
        conversation.size(user).tokens(bpt)
    } else {
        0
    };

    // What the mode would send: `start..n`, and the user message apart when it falls before.
    let (first, mut start) = match limits.mode {
        ContextMode::Fresh => (user, user),
        ContextMode::Continue | ContextMode::Summarize => (base, base),
        ContextMode::Sliding(k) => (base, group_start(conversation, n.saturating_sub(k))),
    };
    let mut apart = start > user;
    if !apart {
        start = exchange_start(conversation, start.max(limits.hint.min(user)));
    }
    let cost = |start: usize, apart: bool| {
        fixed + if apart { user_tokens } else { 0 } + sum_tokens(conversation, start..n, bpt)
    };
    let mut tokens = cost(start, apart);
    let trimmed = tokens > limits.max_tokens;
    if trimmed {
        let target = limits.max_tokens * TARGET_PERCENT / 100;
        if !apart {
            let room = target.saturating_sub(fixed);
            match fit_start(conversation, (start, user, n), room, bpt, opens_exchange) {
                Some(s) => start = s,
                None if cost(user, false) <= limits.max_tokens => start = user,
                None => apart = true,
            }
        }
        if apart {
            // The current exchange alone is too big: keep its user message and its newest
            // tool calls. At least the newest call with its results, unless there is none.
            if fixed + user_tokens > limits.max_tokens {
                return Err(too_big(conversation, limits, fixed, user, bpt, false));
            }
            let from = (user + 1).max(start);
            let hi = if user + 1 == n { n } else { n - 1 };
            let room = |limit: u64| limit.saturating_sub(fixed + user_tokens);
            let fit = |room| fit_start(conversation, (from, hi, n), room, bpt, starts_group);
            start = fit(room(target))
                .or_else(|| fit(room(limits.max_tokens)))
                .ok_or_else(|| too_big(conversation, limits, fixed, user, bpt, true))?;
        }
        tokens = cost(start, apart);
    }
    let sent = usize::from(apart) + (n - start);
    let (mut bytes, mut exact) = (fixed_bytes, 0);
    for i in (start..n).chain(apart.then_some(user)) {
        let size = conversation.size(i);
        match size.exact(limits.method) {
            Some(tokens) => exact += tokens,
            None => bytes += size.bytes,
        }
    }
    Ok(Plan {
        summary: summary.is_some(),
        user: apart.then_some(user),
        start,
        end: n,
        omitted: (n - first).saturating_sub(sent),
        trimmed,
        tokens,
        bytes,
        exact,
        max_tokens: limits.max_tokens,
    })
}

fn too_big(
    conversation: &Conversation,
    limits: &Limits,
    fixed: u64,
    user: usize,
    bpt: Measure,
    tool_results: bool,
) -> ContextError {
    let n = conversation.len();
    let user_tokens = conversation.size(user).tokens(bpt);
    let last = group_start(conversation, n.saturating_sub(1)).max(user + 1);
    let newest = sum_tokens(conversation, last..n, bpt);
    ContextError::TooBig {
        backend: None,
        max_tokens: limits.max_tokens,
        origin: None,
        fixed_what: limits.fixed_what,
        fixed,
        user: user_tokens,
        newest,
        tool_results,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::exchange;
    use crate::Summary;

    fn limits(mode: ContextMode, max_tokens: u64) -> Limits {
        Limits {
            mode,
            max_tokens,
            bytes_per_token: 4.0,
            method: Method::Estimate,
            fixed_bytes: 400,
            fixed_what: "the preamble takes",
            hint: 0,
        }
    }

    fn history() -> Conversation {
        let mut c = Conversation::new();
        exchange(&mut c, "a", 2); // 0..5
        exchange(&mut c, "b", 1); // 5..8
        exchange(&mut c, "c", 2); // 8..13
        c
    }

    #[test]
    fn continue_sends_everything_within_budget() {
        let c = history();
        let p = plan(&c, &limits(ContextMode::Continue, 100_000)).unwrap();
        assert_eq!((p.start, p.end, p.user, p.omitted), (0, 13, None, 0));
        assert!(!p.trimmed);
        assert_eq!(p.messages(), 13);
        assert_eq!(
            p.tokens,
            100 + (0..13).map(|i| c.size(i).tokens(4.0)).sum::<u64>()
        );
    }

    #[test]
    fn fresh_sends_only_the_current_exchange() {
        let c = history();
        let p = plan(&c, &limits(ContextMode::Fresh, 100_000)).unwrap();
        assert_eq!((p.start, p.end, p.user, p.omitted), (8, 13, None, 0));
    }

    #[test]
    fn sliding_keeps_the_last_n_and_the_task() {
        let c = history();
        // The last 2 messages are a call and its result; the task is kept apart.
        let p = plan(&c, &limits(ContextMode::Sliding(2), 100_000)).unwrap();
        assert_eq!((p.start, p.user, p.omitted), (11, Some(8), 10));
        // Starting at a result moves back to its call.
        let p = plan(&c, &limits(ContextMode::Sliding(1), 100_000)).unwrap();
        assert_eq!((p.start, p.user), (11, Some(8)));
        // A window reaching back before the current exchange needs nothing apart, and starts
        // at the user message of the exchange it reaches into.
        let p = plan(&c, &limits(ContextMode::Sliding(7), 100_000)).unwrap();
        assert_eq!((p.start, p.user, p.omitted), (5, None, 5));
    }

    #[test]
    fn trimming_cuts_oldest_first_to_the_target_and_never_splits_a_pair() {
        let c = history();
        let all = plan(&c, &limits(ContextMode::Continue, 1_000_000)).unwrap();
        let budget = all.tokens - 1;
        let p = plan(&c, &limits(ContextMode::Continue, budget)).unwrap();
        assert!(p.trimmed);
        assert!(p.tokens <= budget * TARGET_PERCENT / 100, "{p:?}");
        assert!(starts_group(&c, p.start));
        assert!(p.start <= current_user(&c));
        assert_eq!(p.omitted, p.start);
        // One message more would pass the target or start at a tool result.
        let bigger = plan(
            &c,
            &Limits {
                hint: p.start - 1,
                ..limits(ContextMode::Continue, 1_000_000)
            },
        )
        .unwrap();
        assert!(
            bigger.tokens > budget * TARGET_PERCENT / 100 || !starts_group(&c, p.start - 1),
            "{bigger:?}"
        );
        // For every budget, no cut falls inside a pair and the budget holds; the only error
        // is a budget below the preamble, the task and the newest pair.
        let least = 100
            + (11..13)
                .chain([8])
                .map(|i| c.size(i).tokens(4.0))
                .sum::<u64>();
        for budget in (100..all.tokens).step_by(7) {
            match plan(&c, &limits(ContextMode::Continue, budget)) {
                Ok(p) => {
                    assert!(
                        starts_group(&c, p.start) || p.start == p.end,
                        "{budget}: {p:?}"
                    );
                    assert!(p.tokens <= budget, "{budget}: {p:?}");
                    assert_eq!(p.end, 13);
                    assert!(p.start <= 8 || p.user == Some(8), "{budget}: {p:?}");
                }
                Err(_) => assert!(budget < least, "{budget}"),
            }
        }
    }

    #[test]
    fn a_trimmed_request_opens_with_a_user_message() {
        // Short questions, long answers: a cut by tokens alone would often fall at an answer.
        let mut c = Conversation::new();
        for i in 0..12 {
            c.push(Message::user(format!("q{i}")));
            c.push(Message::Assistant {
                text: "answer ".repeat(40 + 7 * i),
                tool_calls: vec![],
            });
        }
        c.push(Message::user("now"));
        let all = plan(&c, &limits(ContextMode::Continue, 1_000_000)).unwrap();
        let mut trimmed = 0;
        for budget in (110..all.tokens).step_by(5) {
            for hint in [0, 3] {
                let p = plan(
                    &c,
                    &Limits {
                        hint,
                        ..limits(ContextMode::Continue, budget)
                    },
                )
                .unwrap();
                let first = p.user.unwrap_or(p.start);
                assert!(opens_exchange(&c, first), "{budget}: {p:?}");
                assert!(p.tokens <= budget, "{budget}: {p:?}");
                trimmed += usize::from(p.trimmed);
            }
        }
        assert!(trimmed > 20, "{trimmed}");
        for k in 1..c.len() {
            let p = plan(&c, &limits(ContextMode::Sliding(k), 1_000_000)).unwrap();
            assert!(opens_exchange(&c, p.user.unwrap_or(p.start)), "{k}: {p:?}");
        }
    }

    #[test]
    fn the_hint_keeps_the_start_until_the_budget_is_passed_again() {
        let c = history();
        let all = plan(&c, &limits(ContextMode::Continue, 1_000_000)).unwrap();
        let p = plan(&c, &limits(ContextMode::Continue, all.tokens - 1)).unwrap();
        let again = plan(
            &c,
            &Limits {
                hint: p.hint(),
                ..limits(ContextMode::Continue, all.tokens - 1)
            },
        )
        .unwrap();
        assert_eq!(again.start, p.start);
        assert!(!again.trimmed);
    }

    #[test]
    fn an_oversized_exchange_keeps_the_task_and_the_newest_pair() {
        let mut c = Conversation::new();
        exchange(&mut c, "a", 1); // 0..3
        exchange(&mut c, "b", 6); // 3..16
        let one_pair = c.size(14).tokens(4.0) + c.size(15).tokens(4.0);
        let budget = 100 + c.size(3).tokens(4.0) + 2 * one_pair + 10;
        let p = plan(&c, &limits(ContextMode::Continue, budget)).unwrap();
        assert_eq!(p.user, Some(3));
        assert!(starts_group(&c, p.start));
        assert!(p.tokens <= budget);
        assert_eq!(p.end, 16);
        assert!(p.start <= 14);
        // Too small for even the newest pair: an error, not an oversized request.
        let err = plan(&c, &limits(ContextMode::Continue, budget - one_pair - 20)).unwrap_err();
        assert!(
            err.to_string().contains("max_context_tokens"),
            "{}",
            err.to_string()
        );
    }

    #[test]
    fn the_preamble_and_task_alone_too_big_is_an_error() {
        let mut c = Conversation::new();
        c.push(Message::user("x".repeat(4_000)));
        assert!(plan(&c, &limits(ContextMode::Continue, 500)).is_err());
        let p = plan(&c, &limits(ContextMode::Continue, 2_000)).unwrap();
        assert_eq!((p.start, p.end), (0, 1));
    }

    #[test]
    fn summarize_sends_the_summary_and_what_follows_it() {
        let mut c = history();
        c.set_summary(Summary {
            text: "earlier: a and b".into(),
            upto: 5,
        });
        let p = plan(&c, &limits(ContextMode::Summarize, 100_000)).unwrap();
        assert!(p.summary);
        assert_eq!((p.start, p.omitted), (5, 0));
        // Other modes ignore the summary.
        let p = plan(&c, &limits(ContextMode::Continue, 100_000)).unwrap();
        assert!(!p.summary);
        assert_eq!(p.start, 0);
    }
}
