//! Where the lines of a text end, found sixty-four bytes at a time, for the line edits of a
//! reply (`lines.rs`). A reply is thousands of short lines; finding each one's end with its
//! own `memchr` call cost a call's set-up per line, about a sixth of the time of parsing
//! agent output. Here one pass of compares makes a bit mask of the newlines of each 64-byte
//! window, and each line end is then one trailing-zeros count. x86_64 compares sixteen bytes
//! at a time with SSE2 (its base instruction set); other targets test 64-bit words with bit
//! arithmetic.

/// How many bytes one mask covers.
const WINDOW: usize = 64;

/// The newlines of a text, in order. It holds no borrow, so the text can be edited between
/// calls, as long as no byte after the last newline returned changes: each window's mask is
/// made when the search first reaches it.
pub struct Newlines {
    /// Where the current window starts.
    window: usize,
    /// The newlines of the current window not yet returned, one bit a byte, lowest first.
    mask: u64,
}

impl Newlines {
    pub fn new(bytes: &[u8]) -> Self {
        Newlines {
            window: 0,
            mask: window_mask(bytes, 0),
        }
    }

    /// The position of the next newline of `bytes` (the text given to `new`, edited at most
    /// up to the last newline returned), if there is one.
    #[inline]
    pub fn next(&mut self, bytes: &[u8]) -> Option<usize> {
        while self.mask == 0 {
            self.window += WINDOW;
            if self.window >= bytes.len() {
                return None;
            }
            self.mask = window_mask(bytes, self.window);
        }
        let at = self.window + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// The newlines of the window of `bytes` at `at`, one bit a byte; a window past the end is
/// tested padded with bytes that are not newlines.
#[inline]
fn window_mask(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + WINDOW) {
        Some(window) => mask_of(window.try_into().expect("a window")),
        None => {
            let rest = bytes.get(at..).unwrap_or_default();
            let mut window = [0u8; WINDOW];
            window[..rest.len()].copy_from_slice(rest);
            mask_of(&window)
        }
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn mask_of(window: &[u8; WINDOW]) -> u64 {
    use crate::control::{halves, BLOCK};
    use std::arch::x86_64::*;
    let mut mask = 0u64;
    for (n, block) in window.chunks_exact(BLOCK).enumerate() {
        let (lo, hi) = halves(block.try_into().expect("a block"));
        // SAFETY: these intrinsics need SSE2, which this build is compiled for (the `cfg`
        // above; it is part of the x86_64 base instruction set).
        let bits = unsafe {
            let v = _mm_set_epi64x(hi as i64, lo as i64);
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8))) as u32
        };
        mask |= u64::from(bits) << (16 * n);
    }
    mask
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn mask_of(window: &[u8; WINDOW]) -> u64 {
    mask_in_words(window)
}

/// `mask_of` with 64-bit words, for targets without SSE2 (and tested on every target).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline]
fn mask_in_words(window: &[u8; WINDOW]) -> u64 {
    use crate::control::bytes_equal;
    // Moves the high bit of byte k of a word to bit k of the top byte: each term of the
    // constant shifts one byte's bit there, and no two terms' bits meet, so nothing carries.
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut mask = 0u64;
    for (n, chunk) in window.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let bits = (bytes_equal(word, b'\n') >> 7).wrapping_mul(GATHER) >> 56;
        mask |= bits << (8 * n);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(bytes: &[u8]) -> Vec<usize> {
        let mut newlines = Newlines::new(bytes);
        std::iter::from_fn(|| newlines.next(bytes)).collect()
    }

    fn naive(bytes: &[u8]) -> Vec<usize> {
        (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect()
    }

    /// Every byte value at every place of a window, with both ways of making the mask.
    #[test]
    fn a_newline_is_found_at_any_place_and_nothing_else() {
        let base: Vec<u8> = b"kept \xc3\xa9\t\x0b\x0c\r\x8a bytes!"
            .iter()
            .copied()
            .cycle()
            .take(WINDOW)
            .collect();
        for b in 0..=255u8 {
            for at in 0..WINDOW {
                let mut window: [u8; WINDOW] = base.clone().try_into().unwrap();
                window[at] = b;
                let want = window
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c == b'\n')
                    .fold(0u64, |m, (i, _)| m | 1 << i);
                assert_eq!(mask_of(&window), want, "{b:#x} at {at}");
                assert_eq!(mask_in_words(&window), want, "{b:#x} at {at}");
            }
        }
    }

    /// Texts of every length up to three windows and a bit, newlines anywhere, dense or none.
    #[test]
    fn every_newline_in_order_at_any_length() {
        for len in 0..200 {
            for step in [1, 2, 3, 7, 63, 64, 65, 1000] {
                let bytes: Vec<u8> = (0..len)
                    .map(|i| if i % step == step - 1 { b'\n' } else { b'x' })
                    .collect();
                assert_eq!(all(&bytes), naive(&bytes), "len {len}, step {step}");
            }
        }
    }

    /// Edits up to the last newline returned do not change what comes after.
    #[test]
    fn editing_behind_the_search_is_allowed() {
        let mut bytes =
            b"one\ntwo\n\nthree and more than sixty-four bytes of text on one line\nend\n"
                .repeat(3);
        let want = naive(&bytes);
        let mut newlines = Newlines::new(&bytes);
        let mut got = Vec::new();
        while let Some(at) = newlines.next(&bytes) {
            got.push(at);
            bytes[..=at].fill(b'\n');
        }
        assert_eq!(got, want);
    }
}
