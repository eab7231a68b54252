//! Token counts read from a backend's usage line by its configured regex, with numbers the
//! way CLIs print them: `1234`, `1,234`, `2.1k`, `1.2M`.

use serde::{Deserialize, Serialize};

use super::Pattern;

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
}

impl Totals {
    pub fn add(&mut self, usage: &Usage) {
        self.input += usage.input.unwrap_or(0);
        self.output += usage.output.unwrap_or(0);
        self.cost += usage.cost.unwrap_or(0.0);
        self.calls += 1;
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
    /// every token generated, as the other backends count it and as it is billed.
    pub fn with_thinking_in_output(mut self) -> Self {
        if let Some(thinking) = self.thinking {
            self.output = Some(self.output.unwrap_or(0) + thinking);
        }
        self
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

/// Parses a count such as `1,234`, `2.1k` or `1.2M`; `None` if it is not a number.
pub fn parse_count(s: &str) -> Option<u64> {
    let s = s.trim().replace(['_', ','], "");
    let (digits, scale) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1e3),
        'm' | 'M' => (&s[..s.len() - 1], 1e6),
        _ => (&s[..], 1.0),
    };
    let n: f64 = digits.parse().ok()?;
    (n.is_finite() && n >= 0.0).then(|| (n * scale).round() as u64)
}

/// The last usage line in `text` (CLIs that print running totals print the newest last).
pub fn extract(re: &Pattern, text: &str) -> Option<Usage> {
    // Finding matches is cheap; capturing groups is not: capture only the last one.
    let last = re.find_all(text).last()?;
    let caps = re.captures_at(text, last.start)?;
    let count = |group: &str| caps.name(group).and_then(|m| parse_count(m.as_str()));
    let usage = Usage {
        thinking: count("thinking"),
        input: count("input"),
        output: count("output"),
        total: count("total"),
        cost: caps.name("cost").and_then(|m| {
            m.as_str()
                .trim()
                .trim_start_matches('$')
                .replace(',', "")
                .parse()
                .ok()
        }),
        ..Usage::default()
    };
    (usage != Usage::default()).then_some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    #[test]
    fn prices_fill_in_a_missing_cost_only() {
        let p = Some(Prices {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
        });
        let u = Usage {
            input: Some(1_000_000),
            output: Some(100_000),
            ..Default::default()
        };
        assert_eq!(u.priced(p).cost, Some(4.5));
        let reported = Usage {
            cost: Some(0.1),
            ..u
        };
        assert_eq!(reported.priced(p).cost, Some(0.1));
        let mut t = Totals::default();
        t.add(&u.priced(p));
        t.add(&u);
        assert_eq!(
            (t.input, t.output, t.calls, t.cost),
            (2_000_000, 200_000, 2, 4.5)
        );
    }

    #[test]
    fn counts_as_clis_print_them() {
        assert_eq!(parse_count("1,234"), Some(1234));
        assert_eq!(parse_count("2.1k"), Some(2100));
        assert_eq!(parse_count("1.2M"), Some(1_200_000));
        assert_eq!(parse_count("75"), Some(75));
        assert_eq!(parse_count("k"), None);
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("-3"), None);
    }

    #[test]
    fn last_match_wins_and_cost_is_read() {
        let re = Regex::new(r"Tokens: (?P<input>\d+) input \+ (?P<output>\d+) output = (?P<total>\d+) total(?: \$(?P<cost>[\d.]+))?").unwrap().into();
        let text = "Tokens: 10 input + 2 output = 12 total\nTokens: 3300 input + 63 output = 3363 total $0.25\n";
        let u = extract(&re, text).unwrap();
        assert_eq!(
            u,
            Usage {
                input: Some(3300),
                output: Some(63),
                total: Some(3363),
                cost: Some(0.25),
                ..Usage::default()
            }
        );
    }
}
