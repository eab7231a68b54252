//! The encodings against the examples their authors published: tiktoken's own tests
//! (tests/test_encoding.py, tests/test_base_encodings.py) for `cl100k_base`, and for
//! `o200k_base`, which tiktoken's public tests do not cover, the token ids tiktoken-rs
//! checks and OpenAI's "hello world".

use super::*;

fn check(encoding: Encoding, cases: &[(&str, &[u32])]) {
    for (text, ids) in cases {
        assert_eq!(
            encoding.encode(text),
            *ids,
            "{} of {text:?}",
            encoding.name()
        );
        assert_eq!(encoding.count(text), ids.len() as u64, "{text:?}");
    }
}

#[test]
fn cl100k_base_gives_tiktokens_published_ids() {
    check(
        Encoding::Cl100kBase,
        &[
            ("hello world", &[15339, 1917]),
            ("rer", &[38149]),
            ("'rer", &[2351, 81]),
            ("today\n ", &[31213, 198, 220]),
            ("today\n \n", &[31213, 27907]),
            ("today\n  \n", &[31213, 14211]),
            (" \u{85}0", &[220, 126, 227, 15]),
            ("👍", &[9468, 239, 235]),
            ("", &[]),
            ("Hello world!", &[9906, 1917, 0]),
            (
                "Unicode snowman: ☃️",
                &[35020, 12056, 1543, 25, 26182, 225, 31643],
            ),
            ("こんにちは世界", &[90115, 3574, 244, 98220]),
            ("Привет мир", &[54745, 28089, 8341, 11562, 78746]),
            ("你好，世界", &[57668, 53901, 3922, 3574, 244, 98220]),
            (
                "How about numbers? 123 45.6 -78.9",
                &[
                    4438, 922, 5219, 30, 220, 4513, 220, 1774, 13, 21, 482, 2495, 13, 24,
                ],
            ),
            (
                "This     is     a     sentence     with     extra     spaces.",
                &[
                    2028, 257, 374, 257, 264, 257, 11914, 257, 449, 257, 5066, 257, 12908, 13,
                ],
            ),
            (
                "Mixed script: 你好 world! 🌍",
                &[87533, 5429, 25, 220, 57668, 53901, 1917, 0, 11410, 234, 235],
            ),
            (
                "This is a test         with a lot of spaces",
                &[2028, 374, 264, 1296, 260, 449, 264, 2763, 315, 12908],
            ),
        ],
    );
}

#[test]
fn o200k_base_gives_the_published_ids() {
    check(
        Encoding::O200kBase,
        &[
            ("hello world", &[24912, 2375]),
            (
                "This is a test         with a lot of spaces",
                &[2500, 382, 261, 1746, 269, 483, 261, 3261, 328, 18608],
            ),
            ("", &[]),
        ],
    );
}

#[test]
fn special_tokens_text_counts_as_text() {
    // `<|endoftext|>` typed by a user is text to the API, not the one special token.
    assert!(Encoding::Cl100kBase.count("hello <|endoftext|>") > 2);
}

#[test]
fn models_map_to_their_encodings() {
    for (model, encoding) in [
        ("gpt-4o", Some(Encoding::O200kBase)),
        ("gpt-4o-mini", Some(Encoding::O200kBase)),
        ("gpt-4.1-nano", Some(Encoding::O200kBase)),
        ("gpt-5", Some(Encoding::O200kBase)),
        ("openai/gpt-5-mini", Some(Encoding::O200kBase)),
        ("ft:gpt-4o-2024-08-06:org::id", Some(Encoding::O200kBase)),
        ("o1", Some(Encoding::O200kBase)),
        ("o3-mini", Some(Encoding::O200kBase)),
        ("o4-mini", Some(Encoding::O200kBase)),
        ("gpt-oss-120b", Some(Encoding::O200kBase)),
        ("gpt-4", Some(Encoding::Cl100kBase)),
        ("gpt-4-turbo", Some(Encoding::Cl100kBase)),
        ("gpt-3.5-turbo", Some(Encoding::Cl100kBase)),
        ("o100", None),
        ("deepseek-chat", None),
        ("anthropic/claude-sonnet-4", None),
        ("test-model", None),
    ] {
        assert_eq!(Encoding::for_model(model), encoding, "{model}");
    }
}

#[test]
fn a_message_counts_its_text_its_calls_and_the_frame() {
    let e = Encoding::O200kBase;
    assert_eq!(
        e.count_message(&Message::user("hello world")),
        2 + MESSAGE_FRAME
    );
    let call = Message::Assistant {
        text: "hello world".into(),
        tool_calls: vec![crate::ToolCall {
            id: "call_1".into(),
            name: "ls".into(),
            args: serde_json::json!({"path": "."}),
        }],
    };
    assert_eq!(
        e.count_message(&call),
        MESSAGE_FRAME + 2 + e.count("ls") + e.count(r#"{"path":"."}"#)
    );
    let result = Message::ToolResult {
        call_id: "call_1".into(),
        name: "ls".into(),
        ok: true,
        output: "hello world".into(),
    };
    assert_eq!(e.count_message(&result), 2 + MESSAGE_FRAME);
}

/// The compacted tables hold OpenAI's published ones exactly: token for token, the tables
/// tiktoken-rs embeds as published (in the tests only; the binary links the compact ones).
#[test]
fn the_embedded_tables_are_tiktokens_token_for_token() {
    for (encoding, theirs, size) in [
        (
            Encoding::O200kBase,
            tiktoken_rs::o200k_base_singleton(),
            199_998,
        ),
        (
            Encoding::Cl100kBase,
            tiktoken_rs::cl100k_base_singleton(),
            100_256,
        ),
    ] {
        let ours = encoding.tokens();
        assert_eq!(ours.len(), size, "{}", encoding.name());
        for (rank, token) in ours.iter().enumerate() {
            let rank = rank as u32;
            assert_eq!(
                theirs.decode_bytes(&[rank]).ok().as_ref(),
                Some(token),
                "{} rank {rank}",
                encoding.name()
            );
        }
    }
}
