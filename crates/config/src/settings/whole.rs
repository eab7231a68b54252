//! Whole numbers as a person writes them in config.toml, an `AGENT_LOOP_*` variable or a
//! flag. A value that is not one the setting takes says what is expected, in words ("a whole
//! number from 1"): Rust's parser says "invalid digit found in string" of `-1`, `1.5` and
//! `ten` alike, which names neither the mistake nor the fix.

use std::num::IntErrorKind;

/// The unsigned integer types whole-number settings and flags are read into, with their
/// largest value, which a too large number is told.
pub trait Whole: Copy + TryFrom<u64> {
    const MAX: u64;
}

impl Whole for u32 {
    const MAX: u64 = u32::MAX as u64;
}

impl Whole for u64 {
    const MAX: u64 = u64::MAX;
}

impl Whole for usize {
    const MAX: u64 = usize::MAX as u64;
}

/// A value that is not a whole number a setting or flag takes, and what it takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotWhole {
    /// A sign, a fraction, a word: whichever it is, the fix is the same.
    #[error("expected a whole number from {min}")]
    Other { min: u64 },
    #[error("must be at least {min}")]
    Below { min: u64 },
    #[error("expected a whole number from {min} to {max}")]
    TooLarge { min: u64, max: u64 },
}

/// `text` as a whole number from `min`; else what was expected.
pub fn whole_number<T: Whole>(text: &str, min: u64) -> Result<T, NotWhole> {
    let too_large = NotWhole::TooLarge { min, max: T::MAX };
    let n = match text.trim().parse::<u64>() {
        Ok(n) => n,
        Err(e) if *e.kind() == IntErrorKind::PosOverflow => return Err(too_large),
        Err(_) => return Err(NotWhole::Other { min }),
    };
    if n < min {
        return Err(NotWhole::Below { min });
    }
    T::try_from(n).map_err(|_| too_large)
}

#[cfg(test)]
mod tests {
    use super::{whole_number, NotWhole};

    #[test]
    fn what_is_not_a_whole_number_from_the_minimum_says_so() {
        assert_eq!(whole_number::<u32>(" 7 ", 1), Ok(7));
        for text in ["-1", "1.5", "ten", ""] {
            let err = whole_number::<u32>(text, 1).unwrap_err();
            assert_eq!(
                err.to_string(),
                "expected a whole number from 1",
                "{text:?}"
            );
        }
        let err = whole_number::<u64>("0", 1).unwrap_err();
        assert_eq!(err.to_string(), "must be at least 1");
        assert_eq!(whole_number::<u64>("0", 0), Ok(0));
        let too_large = NotWhole::TooLarge {
            min: 0,
            max: 4294967295,
        };
        assert_eq!(whole_number::<u32>("4294967296", 0), Err(too_large.clone()));
        let very = whole_number::<u32>("99999999999999999999999", 0);
        assert_eq!(very, Err(too_large.clone()));
        assert_eq!(
            too_large.to_string(),
            "expected a whole number from 0 to 4294967295"
        );
    }
}
