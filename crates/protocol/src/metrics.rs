//! Context metrics: how many messages and tokens a request carries and how much of the
//! budget that is; shown once per turn by the display, and by `/tokens`.

use std::fmt;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContextStats {
    /// Messages sent (the summary not counted).
    pub messages: usize,
    /// Messages in the whole history.
    pub history: usize,
    /// Whether a summary of older messages is sent.
    pub summary: bool,
    /// Estimated tokens of the request, preamble and memory file included.
    pub tokens: u64,
    /// `max_context_tokens`.
    pub budget: u64,
}

impl ContextStats {
    /// Share of the budget used, in whole percent (at least 1 when anything is sent).
    pub fn percent(&self) -> u64 {
        if self.budget == 0 {
            return 100;
        }
        let rounded = (self.tokens * 100 + self.budget / 2) / self.budget;
        rounded.max(u64::from(self.tokens > 0))
    }
}

/// `1234` as `1.2k`, `80000` as `80k`, `1500000` as `1.5M`.
pub fn short_count(n: u64) -> String {
    let (value, unit) = match n {
        0..1_000 => return n.to_string(),
        1_000..1_000_000 => (n as f64 / 1e3, "k"),
        _ => (n as f64 / 1e6, "M"),
    };
    let text = if value >= 100.0 || value.fract() < 0.05 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    };
    format!("{text}{unit}")
}

/// `12 messages, 3.4k tokens, 4% of 80k`; `12 of 40 messages, ...` when some are left out.
impl fmt::Display for ContextStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.messages < self.history {
            write!(f, "{} of {} messages", self.messages, self.history)?;
        } else {
            let messages = crate::plural::count(self.messages, "message", "messages");
            f.write_str(&messages)?;
        }
        if self.summary {
            f.write_str(" + summary")?;
        }
        write!(
            f,
            ", {} tokens, {}% of {}",
            short_count(self.tokens),
            self.percent(),
            short_count(self.budget)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_short() {
        assert_eq!(short_count(999), "999");
        assert_eq!(short_count(3_400), "3.4k");
        assert_eq!(short_count(80_000), "80k");
        assert_eq!(short_count(128_000), "128k");
        assert_eq!(short_count(1_500_000), "1.5M");
    }

    #[test]
    fn stats_read_as_one_line() {
        let stats = ContextStats {
            messages: 12,
            history: 12,
            summary: false,
            tokens: 3_400,
            budget: 80_000,
        };
        assert_eq!(stats.to_string(), "12 messages, 3.4k tokens, 4% of 80k");
        let cut = ContextStats {
            history: 40,
            summary: true,
            ..stats
        };
        assert_eq!(
            cut.to_string(),
            "12 of 40 messages + summary, 3.4k tokens, 4% of 80k"
        );
    }
}
