//! `logf`, the one function the binary would otherwise take from the C maths library.
//!
//! The terminfo crate counts the digits of a number with `f32::log`, which compiles to a call
//! to the C library's `logf`; that one call made the binary load libm.so at every start (find
//! it, map it, relocate it, and unmap it again at exit). Defined here, the linker finds `logf`
//! in the binary and, linking with `--as-needed` as rustc does, leaves libm out: a CLI turn
//! 0.1-0.25 ms faster on the project's machine (`scripts/bench.sh`). Should a dependency need
//! another maths function one day, libm is simply loaded again; nothing breaks.
//!
//! The natural logarithm of an `f32`, worked in `f64` from x = m·2^e with m in [√½, √2):
//! ln x = e·ln 2 + 2·atanh(s), where s = (m − 1)/(m + 1) is below 0.172, so nine terms of
//! atanh's odd series reach 1e-16, far inside the `f32` result's rounding.

use std::f64::consts::{LN_2, SQRT_2};

#[unsafe(no_mangle)]
pub extern "C" fn logf(x: f32) -> f32 {
    if x.is_nan() || x < 0.0 {
        return f32::NAN;
    }
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    let (mut bits, mut e) = (x.to_bits(), 0);
    if bits < 0x0080_0000 {
        // Subnormal: scale by 2^23 into the normal range first.
        bits = (x * 8_388_608.0).to_bits();
        e = -23;
    }
    e += (bits >> 23) as i32 - 127;
    let mut m = f64::from(f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000));
    if m > SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let series = (0..9)
        .rev()
        .fold(0.0, |sum, k| sum * s2 + 1.0 / f64::from(2 * k + 1));
    (f64::from(e) * LN_2 + 2.0 * s * series) as f32
}

#[cfg(test)]
mod tests {
    use super::logf;

    /// How many representable `f32`s apart two finite values are.
    fn ulps(a: f32, b: f32) -> u32 {
        let key = |v: f32| {
            let bits = v.to_bits() as i32;
            if bits < 0 {
                i32::MIN - bits
            } else {
                bits
            }
        };
        key(a).abs_diff(key(b))
    }

    #[test]
    fn within_one_ulp_of_the_exact_logarithm_across_the_range() {
        // Every 4099th positive finite f32, subnormals included, and the neighbours of 1.
        let sweep = (1..0x7f80_0000u32).step_by(4099);
        let near_one = (0x3f7f_f000..0x3f80_1000u32).step_by(7);
        let mut worst = (0, 0.0f32);
        for bits in sweep.chain(near_one) {
            let x = f32::from_bits(bits);
            let exact = f64::from(x).ln() as f32;
            let d = ulps(logf(x), exact);
            if d > worst.0 {
                worst = (d, x);
            }
        }
        assert!(worst.0 <= 1, "logf({:e}) is {} ulps off", worst.1, worst.0);
    }

    #[test]
    fn special_values_follow_c() {
        assert_eq!(logf(1.0), 0.0);
        assert_eq!(logf(0.0), f32::NEG_INFINITY);
        assert_eq!(logf(-0.0), f32::NEG_INFINITY);
        assert_eq!(logf(f32::INFINITY), f32::INFINITY);
        assert!(logf(-1.0).is_nan());
        assert!(logf(f32::NEG_INFINITY).is_nan());
        assert!(logf(f32::NAN).is_nan());
        assert_eq!(
            logf(f32::from_bits(1)),
            f64::from(f32::from_bits(1)).ln() as f32
        );
        assert_eq!(logf(f32::MAX), f64::from(f32::MAX).ln() as f32);
    }

    #[test]
    fn counts_digits_as_terminfo_does() {
        // terminfo's padding: floor(log10 |n|) + 1 digits.
        for (n, digits) in [(7, 1), (42, 2), (999, 3), (12345, 5), (2_000_000, 7)] {
            let got = (n as f32).log(10.0).floor() as usize + 1;
            assert_eq!(got, digits, "{n}");
        }
    }
}
