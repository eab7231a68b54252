//! Property tests: the fast paths against the full parser on random input, bytes biased
//! toward what makes escape sequences and line edits (ESC, `[`, digits, `;`, CR, LF, BS,
//! CAN, DEL, the C1 lead byte, final bytes) among UTF-8 text and arbitrary bytes.
//! `PROPTEST_CASES` sets the number of cases (`scripts/proptest-long.sh`).

use proptest::prelude::*;

use crate::ansi::valid_utf8;
use crate::{fallback, render, render_terminal, strip_ansi};

/// One piece of input.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(vec![
            &b"\x1b"[..], b"[", b"]", b"\x1b[", b"\x1b]", b"\x1bP", b"\x1b\\", b"\x1b(", b";", b"\r", b"\n", b"\x08", b"\t", b"\x07",
            b"\x18", b"\x1a", b"\x7f", b"\\", b"P", b"?", b"m", b"K", b"A", b"C", b"D", b"E",
            b"F", b"G", b"H", b"2K", b"1A", b"\r\n", b" ", b"\r\x1b[2K", b"\x1b[2K\r", b"\x1b[K",
        ])
        .prop_map(|b| b.to_vec()),
        3 => sequence(),
        2 => (0u8..10).prop_map(|d| vec![b'0' + d]),
        // C1 controls and their neighbours, whole or cut.
        2 => (0x70u8..0xc0).prop_map(|b| vec![0xc2, b]),
        1 => Just(vec![0xc2]),
        2 => any::<char>().prop_map(|c| c.to_string().into_bytes()),
        2 => "[a-z ]{1,8}".prop_map(String::into_bytes),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ]
}

/// A sequence, often with a control byte or text inside, ended or not.
fn sequence() -> impl Strategy<Value = Vec<u8>> {
    let start = prop::sample::select(vec![&b"\x1b["[..], b"\x1b]", b"\x1bP", b"\x1b(", b"\x1b"]);
    let body = prop::collection::vec(
        prop::sample::select(b"0123456789;:?$ x\x18\x1a\n\r\x08\x07\x7f".to_vec()),
        0..6,
    );
    let end = prop::sample::select(vec![&b"m"[..], b"K", b"A", b"G", b"\x07", b"\x1b\\", b""]);
    (start, body, end).prop_map(|(s, b, e)| [s, &b[..], e].concat())
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..60).prop_map(|p| p.concat())
}

/// The same bytes with every control the line model carries out replaced: no `\r`, `\b`,
/// and no byte that ends a CSI moving the cursor or erasing.
fn without_cursor_controls(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|&b| match b {
            b'\r' | 0x08 | b'A'..=b'G' | b'K' => b'x',
            b => b,
        })
        .collect()
}

/// 256 cases unless `PROPTEST_CASES` says otherwise (the workspace's other properties run
/// 64; these take a millisecond a case, and fewer missed an OSC ended by CAN); no
/// regression files in the tree.
fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 256;
    }
    config.failure_persistence = None;
    config
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn stripping_agrees_with_the_full_parser(bytes in input()) {
        prop_assert_eq!(strip_ansi(&bytes), fallback::strip_all(&valid_utf8(&bytes)));
    }

    #[test]
    fn rendering_agrees_with_the_line_model_alone(bytes in input()) {
        prop_assert_eq!(render_terminal(&bytes), render::render_all(&valid_utf8(&bytes)));
    }

    #[test]
    fn without_cursor_controls_rendering_is_stripping(bytes in input()) {
        let bytes = without_cursor_controls(&bytes);
        let stripped = strip_ansi(&bytes);
        prop_assert_eq!(&render_terminal(&bytes), &stripped);
        prop_assert_eq!(&render::render_all(&valid_utf8(&bytes)), &stripped);
    }
}
