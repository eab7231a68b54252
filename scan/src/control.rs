//! Where the next control byte (or C1 lead byte, `C2`) is, sixteen bytes at a time, for
//! ANSI stripping: most of any agent output is runs of ordinary bytes between escape
//! sequences, which a byte-at-a-time loop crosses one byte and one branch at a time. x86_64
//! (SSE2) and aarch64 (NEON) compare sixteen bytes at once in their base instruction sets,
//! which need no run-time detection; other targets, and those built without those features,
//! test two 64-bit words with bit arithmetic.

/// How many bytes `first_control` looks at.
pub const BLOCK: usize = 16;

/// A byte the copy stops at: a control byte that is not kept (everything below space but
/// `\n` and `\t`, and DEL), or `C2`, the UTF-8 lead byte of the C1 controls (U+0080 to
/// U+009F; also of U+00A0 to U+00BF, which are kept). The definition the block-wise
/// searches are tested against.
#[cfg(test)]
pub fn is_control(b: u8) -> bool {
    (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || b == C1_LEAD
}

/// The first byte of a C1 control's UTF-8 encoding.
pub const C1_LEAD: u8 = 0xc2;

/// The two little-endian halves of a block: loaded this way the vector is built without a
/// pointer (so without `unsafe`), and the compiler makes it one sixteen-byte load.
#[inline(always)]
pub(crate) fn halves(block: &[u8; BLOCK]) -> (u64, u64) {
    let (lo, hi) = block.split_at(8);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("eight bytes"));
    (word(lo), word(hi))
}

/// The index of the first control byte in `block`, if it has one. (Always inlined: a call
/// costs more than the sixteen bytes it tests.)
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub fn first_control(block: &[u8; BLOCK]) -> Option<usize> {
    use std::arch::x86_64::*;
    let (lo, hi) = halves(block);
    // SAFETY: these intrinsics need SSE2, which this build is compiled for (the `cfg` above;
    // it is part of the x86_64 base instruction set).
    let mask = unsafe {
        let v = _mm_set_epi64x(hi as i64, lo as i64);
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        // Unsigned `v <= 0x1f`: the smaller of the two is `v` itself.
        let below_space = _mm_cmpeq_epi8(_mm_min_epu8(v, splat(0x1f)), v);
        let kept = _mm_or_si128(
            _mm_cmpeq_epi8(v, splat(b'\n')),
            _mm_cmpeq_epi8(v, splat(b'\t')),
        );
        let control = _mm_or_si128(
            _mm_andnot_si128(kept, below_space),
            _mm_or_si128(
                _mm_cmpeq_epi8(v, splat(0x7f)),
                _mm_cmpeq_epi8(v, splat(C1_LEAD)),
            ),
        );
        _mm_movemask_epi8(control) as u32
    };
    // One bit a byte, the first byte lowest.
    match mask {
        0 => None,
        _ => Some(mask.trailing_zeros() as usize),
    }
}

/// The index of the first control byte in `block`, if it has one.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[inline(always)]
pub fn first_control(block: &[u8; BLOCK]) -> Option<usize> {
    use std::arch::aarch64::*;
    let (lo, hi) = halves(block);
    // SAFETY: these intrinsics need NEON, which this build is compiled for (the `cfg` above;
    // it is part of the AArch64 base instruction set).
    let nibbles = unsafe {
        let v = vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(lo), vcreate_u64(hi)));
        let below_space = vcleq_u8(v, vdupq_n_u8(0x1f));
        let kept = vorrq_u8(
            vceqq_u8(v, vdupq_n_u8(b'\n')),
            vceqq_u8(v, vdupq_n_u8(b'\t')),
        );
        let del_or_c1 = vorrq_u8(
            vceqq_u8(v, vdupq_n_u8(0x7f)),
            vceqq_u8(v, vdupq_n_u8(C1_LEAD)),
        );
        let control = vorrq_u8(vbicq_u8(below_space, kept), del_or_c1);
        // NEON has no byte mask: shifting each 16-bit lane right by 4 and narrowing it to 8
        // bits leaves four bits a byte, in order.
        let narrowed = vshrn_n_u16::<4>(vreinterpretq_u16_u8(control));
        vget_lane_u64::<0>(vreinterpret_u64_u8(narrowed))
    };
    match nibbles {
        0 => None,
        _ => Some(nibbles.trailing_zeros() as usize / 4),
    }
}

/// The index of the first control byte in `block`, if it has one.
#[cfg(not(any(
    all(target_arch = "x86_64", target_feature = "sse2"),
    all(target_arch = "aarch64", target_feature = "neon")
)))]
#[inline(always)]
pub fn first_control(block: &[u8; BLOCK]) -> Option<usize> {
    first_control_in_words(block)
}

/// `first_control` with 64-bit words, for targets without a vector unit in their base set
/// (and tested on every target).
#[cfg_attr(
    any(
        all(target_arch = "x86_64", target_feature = "sse2"),
        all(target_arch = "aarch64", target_feature = "neon")
    ),
    allow(dead_code)
)]
#[inline]
fn first_control_in_words(block: &[u8; BLOCK]) -> Option<usize> {
    let (lo, hi) = halves(block);
    // Little-endian: the lowest flag is the first byte.
    match (control_bytes(lo), control_bytes(hi)) {
        (0, 0) => None,
        (0, found) => Some(8 + found.trailing_zeros() as usize / 8),
        (found, _) => Some(found.trailing_zeros() as usize / 8),
    }
}

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

/// The high bit of each byte of `word` that equals `byte`, and no other bit (also for the
/// newline masks of `newlines.rs`). Each byte is tested on its own: (low seven bits +
/// 0x7f) sets the high bit for any byte but zero, and no carry crosses into the next.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline]
pub(crate) fn bytes_equal(word: u64, byte: u8) -> u64 {
    let w = word ^ (ONES * u64::from(byte));
    !(((w & !HIGH) + !HIGH) | w) & HIGH
}

/// The high bit of each byte of `word` that `is_control` holds for, and no other bit. Each
/// byte is tested on its own, no carry crossing into the next, so the flags are exact.
#[cfg_attr(
    any(
        all(target_arch = "x86_64", target_feature = "sse2"),
        all(target_arch = "aarch64", target_feature = "neon")
    ),
    allow(dead_code)
)]
#[inline]
fn control_bytes(word: u64) -> u64 {
    let low = word & !HIGH;
    // (low + 0x60) reaches 0x80 from 0x20 up, and stays below 0x100.
    let below_space = !((low + 0x60 * ONES) | word) & HIGH;
    let kept = bytes_equal(word, b'\n') | bytes_equal(word, b'\t');
    (below_space & !kept) | bytes_equal(word, 0x7f) | bytes_equal(word, C1_LEAD)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value at every place of a block, among ordinary, newline, tab and
    /// non-ASCII bytes, and a block with two control bytes.
    #[test]
    fn the_first_control_byte_is_found_at_any_place() {
        let base = *b"kept \xc3\xa9\t\n bytes!";
        for b in 0..=255u8 {
            for at in 0..BLOCK {
                let mut block = base;
                block[at] = b;
                let want = block.iter().position(|b| is_control(*b));
                assert_eq!(first_control(&block), want, "{b:#x} at {at}");
                assert_eq!(first_control_in_words(&block), want, "{b:#x} at {at}");
                if at > 0 {
                    block[BLOCK - 1] = 0x1b;
                    let want = block.iter().position(|b| is_control(*b));
                    assert_eq!(first_control(&block), want);
                    assert_eq!(first_control_in_words(&block), want);
                }
            }
        }
    }
}
