//! Session ids: 16 random hex digits that name one session in logs, distinct from its name
//! (names are reused: `--no-save` runs are all `unsaved`, `/save NAME` copies one).

use std::hash::{BuildHasher, Hasher};
use std::io::Read;

/// A new random id, e.g. `9f3a61c2d04be871`.
pub fn new_id() -> String {
    format!("{:016x}", random_u64())
}

/// 64 bits from the kernel's random source; where it cannot be read (a locked-down sandbox),
/// std's per-process random hasher keys mixed with the time and pid.
fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_ok() {
        return u64::from_ne_bytes(bytes);
    }
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_16_hex_digits_and_differ() {
        let (a, b) = (new_id(), new_id());
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }
}
