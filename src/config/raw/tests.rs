//! Tests of reading `backends.toml` files: splitting, placing values, plain keys.

use super::*;

#[test]
fn split_blanks_each_backends_tables_and_keeps_the_rest_in_place() {
    let text = "top = 1\n[backends.a]\nx = \"é\"\n[backends.a.env]\nK = \"v\"\n[mcp.servers.m]\ncommand = \"m\"\n[backends.b]\ntimeout_s = 2\n[backends.a.more]\nz = 3\n";
    let source = Source {
        name: "f.toml".into(),
        text: text.into(),
    };
    let lines = Lines::of(&source);
    let split = Split::of(text, &lines);
    let a = &text[split.backends["a"].clone()];
    assert!(
        a.starts_with("[backends.a]\n") && a.ends_with("z = 3\n"),
        "{a:?}"
    );
    assert_eq!(
        &text[split.backends["b"].clone()],
        "[backends.b]\ntimeout_s = 2\n"
    );
    let split_of = |text: &str| {
        let source = Source {
            name: "f.toml".into(),
            text: text.into(),
        };
        Split::of(text, &Lines::of(&source)).rest
    };
    // Backends after the last other table add nothing to the rest.
    assert_eq!(split.rest, split_of(&format!("{text}\n[backends.c]\n")));
    assert_eq!(split_of("[backends.c]\ncommand = \"c\"\n"), "");
    assert_eq!(split_of("top = 1\n"), "top = 1\n");
    assert_eq!(split.rest.len(), text.find("[backends.b]").unwrap());
    assert!(split.rest.starts_with("top = 1\n"));
    assert!(!split.rest.contains("backends"));
    // `a`'s range spans `m`'s table, which is read with the rest.
    assert!(split.rest.ends_with("[mcp.servers.m]\ncommand = \"m\"\n"));
    let part = parse_part(&source, &lines, split.backends["b"].clone()).unwrap();
    assert_eq!(part.backends.keys().collect::<Vec<_>>(), ["b"]);
    let err = parse_part(
        &Source {
            name: "f.toml".into(),
            text: "a = 1\n[backends.c]\nnope nope\n".into(),
        },
        &lines,
        6..24,
    )
    .unwrap_err();
    assert!(
        err.message.starts_with("f.toml:3: backend `c`"),
        "{}",
        err.message
    );
}

#[test]
fn plain_string_reads_a_simple_key_and_nothing_else() {
    let text = "a = 1\n  api_key_env = \"KEY_1\"\nother = \"x\"\n";
    assert_eq!(plain_string(text, "api_key_env").as_deref(), Some("KEY_1"));
    assert_eq!(plain_string(text, "missing"), None);
    assert_eq!(plain_string("k = 'single'\n", "k"), None);
    assert_eq!(plain_string("k = \"a\\\"b\"\n", "k"), None);
    // Only the key that starts its line counts: not one inside another key or a value.
    let text = "my_k = \"no\"\nx = \"k = 1\"\n# k = \"no\"\n\tk = \"yes\"";
    assert_eq!(plain_string(text, "k").as_deref(), Some("yes"));
    assert_eq!(plain_string("kk = \"no\"\n", "k"), None);
}

#[test]
fn lines_agree_with_counting_newlines() {
    let source = Source {
        name: "f.toml".into(),
        text: "a = 1\r\n\n[backends.x]\ncommand = \"x\"\n[[mcp.servers.\"s\".more]]\n[backends.x]\nend".into(),
    };
    let lines = Lines::of(&source);
    for pos in 0..=source.text.len() + 2 {
        assert_eq!(lines.line(pos), line_of(&source.text, pos), "at {pos}");
    }
    assert_eq!(lines.table(BACKENDS, "x"), 3, "the first header counts");
    assert_eq!(lines.table(MCP_SERVERS, "s"), 5);
    assert_eq!(lines.table(BACKENDS, "s"), 1, "not a header: inline");
    assert_eq!(lines.name(), "f.toml");
}
