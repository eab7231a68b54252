//! A command line written as a shell reads it back, so that what is shown can be pasted: an
//! ACP agent's terminal command in its question, and the command `doctor` ran (an empty
//! argument, `--tools ""`, would otherwise vanish and shift the ones after it).

use std::path::Path;

/// A word for the shell, in single quotes unless it needs none. A placeholder (`{prompt}`)
/// needs none: a shell expands braces only around a comma or `..`.
pub fn quote(word: &str) -> String {
    let plain = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    };
    let placeholder = word
        .strip_prefix('{')
        .and_then(|w| w.strip_suffix('}'))
        .is_some_and(|w| {
            !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
    if (!word.is_empty() && plain(word)) || placeholder {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `program` and its `args`, each quoted as needed.
pub fn command_line<S: AsRef<str>>(program: &Path, args: &[S]) -> String {
    std::iter::once(quote(&program.to_string_lossy()))
        .chain(args.iter().map(|a| quote(a.as_ref())))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_argument_and_a_quote_survive_a_paste() {
        let line = command_line(
            Path::new("/bin/claude"),
            &["--tools", "", "it's", "{prompt}"],
        );
        assert_eq!(line, r"/bin/claude --tools '' 'it'\''s' {prompt}");
        assert_eq!(quote("{a,b}"), "'{a,b}'");
    }
}
