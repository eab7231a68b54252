//! Token counts read from a backend's usage line by its configured regex, with numbers the
//! way CLIs print them: `1234`, `1,234`, `2.1k`, `1.2M`.

use super::Pattern;

pub use agent_loop_protocol::usage::{ByBackend, Prices, Totals, Usage};

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
