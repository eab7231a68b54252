//! Token usage and cost: what one backend call reports ([`Usage`]), and the totals over a
//! turn or a session ([`Totals`]); events and session files carry them.

use serde::{Deserialize, Serialize};

/// Token usage of one backend call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub total: Option<u64>,
    /// Cost in US dollars, where the backend reports it.
    pub cost: Option<f64>,
    /// Input tokens read from the provider's prompt cache (HTTP APIs report them).
    pub cache_read: Option<u64>,
    /// Input tokens written to the provider's prompt cache (Anthropic).
    pub cache_write: Option<u64>,
    /// Reasoning ("thinking") tokens, part of `output`, where the backend reports them apart
    /// (OpenAI's `completion_tokens_details.reasoning_tokens`; a CLI's `json_thinking_tokens`
    /// or `tokens_regex` group `thinking`, added to `output` where the CLI counts them apart).
    #[serde(default)]
    pub thinking: Option<u64>,
}

/// Token and cost totals over many calls (a turn, a session).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub input: u64,
    pub output: u64,
    /// US dollars, summed over the calls that reported or could be priced.
    pub cost: f64,
    /// Backend calls counted.
    pub calls: u32,
    /// Backend calls that reported no token count (an agent CLI without one, a fake): the
    /// totals leave them out, and say so, not as if they cost nothing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uncounted: u32,
}

/// [`Totals`] by the name of the backend that made the calls: a session that changed backend
/// tells what each cost. Ordered by name, so `/tokens` and the session file list them alike
/// at every run.
pub type ByBackend = std::collections::BTreeMap<String, Totals>;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Totals {
    pub fn add(&mut self, usage: &Usage) {
        if usage.input.is_none() && usage.output.is_none() {
            self.uncounted += 1;
        }
        self.input += usage.input.unwrap_or(0);
        self.output += usage.output.unwrap_or(0);
        self.cost += usage.cost.unwrap_or(0.0);
        self.calls += 1;
    }

    /// A backend call that reported no usage at all.
    pub fn add_uncounted(&mut self) {
        self.uncounted += 1;
    }

    /// Adds the calls `other` counts (a comparison's backend into the session's totals).
    pub fn merge(&mut self, other: &Totals) {
        self.input += other.input;
        self.output += other.output;
        self.cost += other.cost;
        self.calls += other.calls;
        self.uncounted += other.uncounted;
    }
}

/// Prices per million tokens, from a backend's `backends.toml` entry.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Prices {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

impl Usage {
    /// For a backend that counts thinking tokens apart from its output (gemini's
    /// `candidates`, `thinking_in_output = false`): adds them to the output, so that output is
    /// every token generated, as the other backends count it and as it is billed. Not given
    /// apart, they are what the total holds past input and output (Gemini CLI's stream-json
    /// has a total that counts them and no count of its own). A total that holds fewer tokens
    /// past input and output than the thinking count says the output already counts them
    /// (Qwen Code gives an OpenAI-compatible provider's `completion_tokens` as its
    /// `candidates`, reasoning included, and the same count again as its thoughts): they are
    /// not added again.
    pub fn with_thinking_in_output(mut self) -> Self {
        let past = self.total_past_input_and_output();
        if self.thinking.is_none() {
            self.thinking = past;
        }
        if let Some(thinking) = self.thinking {
            if past.is_none_or(|past| past >= thinking) {
                self.output = Some(self.output.unwrap_or(0) + thinking);
            }
        }
        self
    }

    fn total_past_input_and_output(&self) -> Option<u64> {
        let counted = self.input?.checked_add(self.output?)?;
        self.total?.checked_sub(counted)
    }

    /// Fills in the cost from `prices` when the backend did not report one.
    pub fn priced(mut self, prices: Option<Prices>) -> Self {
        if let (None, Some(p)) = (self.cost, prices) {
            let input = self.input.unwrap_or(0) as f64;
            let output = self.output.unwrap_or(0) as f64;
            self.cost = Some((input * p.input_per_mtok + output * p.output_per_mtok) / 1e6);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_totals_keep_the_calls_that_were_not_counted() {
        let mut lane = Totals::default();
        lane.add(&Usage {
            input: Some(10),
            output: Some(2),
            cost: Some(0.5),
            ..Usage::default()
        });
        lane.add_uncounted();
        let mut session = Totals::default();
        session.merge(&lane);
        session.merge(&lane);
        let expected = Totals {
            input: 20,
            output: 4,
            cost: 1.0,
            calls: 2,
            uncounted: 2,
        };
        assert_eq!(session, expected);
    }

    fn usage(total: u64, thinking: u64) -> Usage {
        Usage {
            input: Some(100),
            output: Some(20),
            total: Some(total),
            thinking: Some(thinking),
            ..Usage::default()
        }
        .with_thinking_in_output()
    }

    #[test]
    fn thinking_is_added_unless_the_total_shows_it_in_the_output() {
        // The total holds them past input and output: apart, added.
        assert_eq!(usage(132, 12).output, Some(32));
        assert_eq!(usage(140, 12).output, Some(32));
        // It holds fewer (none, or a few of something else): already in the output.
        assert_eq!(usage(120, 12).output, Some(20));
        assert_eq!(usage(123, 12).output, Some(20));
        assert_eq!(usage(123, 12).thinking, Some(12));
    }
}
