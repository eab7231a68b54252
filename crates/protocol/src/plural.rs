//! Counts in messages: `1 line`, `2 lines`, `0 lines`. One helper, so that no message says
//! "1 more lines" or "1 turns".

use std::fmt::Display;

/// `n` followed by `one` when `n` is 1, else by `many`.
pub fn count<N: Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    if n == N::from(1) {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `tokens in 1234 / out 56`; `?` for a count not reported, `tokens unknown` for neither.
pub fn tokens(input: Option<u64>, output: Option<u64>) -> String {
    if input.unwrap_or(0) == 0 && output.unwrap_or(0) == 0 {
        return "tokens unknown".to_string();
    }
    let n = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
    format!("tokens in {} / out {}", n(input), n(output))
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1usize, "line", "lines"), "1 line");
        assert_eq!(count(0u32, "turn", "turns"), "0 turns");
        assert_eq!(count(2u64, "entry", "entries"), "2 entries");
    }
}
