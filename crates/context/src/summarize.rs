//! `summarize` mode: when history passes the budget, the backend itself is asked (one extra
//! call, no tools) to summarise the older part into one message; the newest messages stay
//! verbatim. Which part is summarised, and the instruction, are decided here; the agent makes
//! the call (`agent::summarize`) and falls back to trimming when it fails.

use super::budget::{current_user, fit_start, opens_exchange, Limits, TARGET_PERCENT};
use super::tokens::estimate;
use super::Conversation;

/// Share of the budget the summary may take.
pub const SUMMARY_PERCENT: u64 = 10;
/// Bytes of the summarisation request besides the messages: instructions and preamble.
const REQUEST_OVERHEAD: usize = 1024;

/// The messages to summarise, `from..cut`: everything after the previous summary that does
/// not fit, with the newest messages that do (within the target less the summary's share)
/// kept verbatim. `None` when there is nothing older to summarise.
pub fn summary_range(conversation: &Conversation, limits: &Limits) -> Option<(usize, usize)> {
    let user = current_user(conversation);
    let n = conversation.len();
    let (bpt, measure) = (limits.bytes_per_token, limits.measure());
    let old = conversation.summary().filter(|s| s.upto <= user);
    let base = old.map_or(0, |s| s.upto);
    let target = limits.max_tokens * TARGET_PERCENT / 100;
    let keep_room = target
        .saturating_sub(estimate(limits.fixed_bytes, bpt))
        .saturating_sub(limits.max_tokens * SUMMARY_PERCENT / 100);
    // Both parts start at a user message: the summarisation request and the kept part.
    let cut = fit_start(
        conversation,
        (base, user, n),
        keep_room,
        measure,
        opens_exchange,
    )
    .unwrap_or(user);
    if cut <= base {
        return None;
    }
    // The summarisation request must fit the budget too: a history far over it (a session
    // that switched to this mode late) loses its oldest part unsummarised.
    let overhead = REQUEST_OVERHEAD + old.map_or(0, |s| s.text.len());
    let room = target.saturating_sub(estimate(overhead, bpt));
    let from = fit_start(
        conversation,
        (base, cut, cut),
        room,
        measure,
        opens_exchange,
    )?;
    (from < cut).then_some((from, cut))
}

/// The instruction that ends the summarisation request.
pub fn instruction(max_tokens: u64) -> String {
    let words = (max_tokens * SUMMARY_PERCENT / 100 * 3 / 4).clamp(100, 2_000);
    format!(
        "Summarise the conversation above so that the summary can replace it: what the user \
         asked for, what was done (files read or changed, commands run and what they showed), \
         decisions, facts learnt, and what is still open. Be concrete: keep names, paths and \
         numbers. At most {words} words. Reply with the summary only, and call no tool."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::chat;
    use crate::{ContextMode, Summary};

    fn limits(max_tokens: u64) -> Limits {
        Limits {
            mode: ContextMode::Summarize,
            max_tokens,
            bytes_per_token: 4.0,
            method: crate::exact::Method::Estimate,
            fixed_bytes: 400,
            fixed_what: "the preamble takes",
            hint: 0,
        }
    }

    #[test]
    fn the_older_part_is_summarised_and_the_newest_kept() {
        // 20 messages of 104 tokens and the task: past a budget of 2,000.
        let c = chat(10);
        let (from, cut) = summary_range(&c, &limits(2_000)).unwrap();
        assert_eq!(from, 0);
        // Kept: within 75% - 10% of 2,000 less the preamble, 1,200 tokens: the task and the
        // 5 exchanges before it, from a user message.
        assert_eq!(cut, 10);
        let kept: u64 = (cut..21).map(|i| c.size(i).tokens(4.0)).sum();
        let exchange_before: u64 = (cut - 2..cut).map(|i| c.size(i).tokens(4.0)).sum();
        assert!(kept <= 1_200 && kept + exchange_before > 1_200);
    }

    #[test]
    fn a_previous_summary_is_built_on() {
        let mut c = chat(10);
        c.set_summary(Summary {
            text: "first two turns".into(),
            upto: 4,
        });
        let (from, cut) = summary_range(&c, &limits(2_000)).unwrap();
        assert_eq!((from, cut), (4, 10));
    }

    #[test]
    fn nothing_to_summarise_when_the_newest_part_is_all_there_is() {
        let c = chat(2);
        assert_eq!(summary_range(&c, &limits(100_000)), None);
    }

    #[test]
    fn a_huge_history_is_summarised_from_its_newest_part_that_fits() {
        let c = chat(200);
        let (from, cut) = summary_range(&c, &limits(2_000)).unwrap();
        assert!(from > 0 && from < cut);
        let sent: u64 = (from..cut).map(|i| c.size(i).tokens(4.0)).sum();
        assert!(sent <= 1_500, "{sent}");
    }
}
