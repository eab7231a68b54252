//! Front-end text, written once: the approval question and what became of it, a running tool's progress, an answer
//! cut short, a plan, and the one-line title of a tool call. The terminal displays, the
//! Telegram bot and the ACP server all say these things in these words, so a change of
//! wording is made here and reaches every front end.

mod answer;
pub mod approval;
mod progress;
pub mod wrap;

use agent_loop::event::{CutReason, PlanEntry};

use agent_loop::text::sanitize;

pub use answer::{after_refusal, CallState};
pub use approval::{asked, fold, line_count, not_shown, shown_lines};
pub use progress::{progress_text, shortened, PLAIN_EVERY};

/// What the display says of an answer cut short.
pub fn cut_short(backend: &str, reason: CutReason) -> String {
    let why = match reason {
        CutReason::MaxTokens => "the model reached its output limit (max_tokens)",
        CutReason::Refusal => "the model declined to go on (refusal)",
    };
    format!("{}: the answer was cut short: {why}", sanitize(backend))
}

/// A plan in one line: `[x] done; [~] doing; [ ] to do`.
pub fn plan_text(entries: &[PlanEntry]) -> String {
    let entries: Vec<String> = entries
        .iter()
        .map(|e| {
            let mark = match e.status.as_str() {
                "completed" => "[x]",
                "in_progress" => "[~]",
                _ => "[ ]",
            };
            format!("{mark} {}", e.content)
        })
        .collect();
    entries.join("; ")
}

/// A tool call in a few words, `TOOL: SUMMARY`: the title an editor shows over ACP.
pub fn call_title(tool: &str, summary: &str) -> String {
    format!("{tool}: {summary}")
}

/// A tool call's progress line, [`call_title`] escaped as the approval question is: the
/// tool's name and the summary are the model's text.
pub fn call_line(tool: &str, summary: &str) -> String {
    call_title(
        &shown_lines(tool, usize::MAX).concat(),
        &shown_lines(summary, usize::MAX).join(" "),
    )
}
