//! A `SKILL.md`'s front matter, read and checked by the Agent Skills specification's rules:
//! `name` is 1–64 lower-case letters, digits and single hyphens (none first or last) and
//! equals the folder's name; `description` is 1–1,024 characters; `compatibility`, when
//! given, at most 500. A file that breaks one is reported with the rule and skipped, as
//! strict clients do: a skill whose name differs from its folder would be activated under
//! one name and found under another.
//!
//! Fields the specification does not name (Claude Code's `argument-hint`, `model`...) are
//! passed over, so skills written for other clients load here too.

use std::collections::BTreeMap;
use std::fmt;

/// The specification's limits.
pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 1024;
pub const MAX_COMPATIBILITY: usize = 500;

/// The fields agent-loop reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatter {
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: BTreeMap<String, String>,
    /// The experimental `allowed-tools`, as written (space-separated tool patterns).
    pub allowed_tools: Option<String>,
}

/// The rule a `SKILL.md` breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// No `---` line opens the file, or none closes the front matter.
    NoFrontMatter,
    /// The front matter is not a YAML mapping of the specification's types.
    Yaml(String),
    MissingName,
    /// Longer than [`MAX_NAME`] characters.
    NameLength(usize),
    /// A character other than `a-z`, `0-9` and `-`, or a hyphen first, last or doubled.
    NameCharacters(String),
    /// The name is not the folder's.
    NameNotFolder {
        name: String,
        folder: String,
    },
    MissingDescription,
    /// Longer than [`MAX_DESCRIPTION`] characters.
    DescriptionLength(usize),
    /// Empty, or longer than [`MAX_COMPATIBILITY`] characters.
    CompatibilityLength(usize),
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::NoFrontMatter => write!(
                f,
                "it must open with YAML front matter between two `---` lines"
            ),
            Rule::Yaml(why) => write!(f, "its front matter is not valid: {why}"),
            Rule::MissingName => write!(f, "`name` is required"),
            Rule::NameLength(n) => write!(f, "`name` is {n} characters; the most is {MAX_NAME}"),
            Rule::NameCharacters(name) => write!(
                f,
                "`name` `{name}` may hold only lower-case letters, digits and single hyphens, \
                 not first or last"
            ),
            Rule::NameNotFolder { name, folder } => write!(
                f,
                "`name` `{name}` must equal its folder's name, `{folder}`"
            ),
            Rule::MissingDescription => write!(f, "`description` is required and not empty"),
            Rule::DescriptionLength(n) => write!(
                f,
                "`description` is {n} characters; the most is {MAX_DESCRIPTION}"
            ),
            Rule::CompatibilityLength(n) => write!(
                f,
                "`compatibility` is {n} characters; it takes 1 to {MAX_COMPATIBILITY}"
            ),
        }
    }
}

/// The front matter as YAML gives it; every field optional so that a missing one is named.
#[derive(serde::Deserialize)]
struct Raw {
    name: Option<String>,
    description: Option<String>,
    license: Option<String>,
    compatibility: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<String>,
}

/// Splits a `SKILL.md` into its front matter's text and its body (the instructions).
pub fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    // The closing line: `---` alone (trailing spaces allowed), at the start of a line.
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let body = &rest[at + line.len()..];
            return Some((&rest[..at], body));
        }
        at += line.len();
    }
    None
}

/// Whether `name` keeps the specification's character rules.
fn name_characters_ok(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// Reads and checks the front matter of a `SKILL.md` in the folder named `folder`; returns it
/// with the body.
pub fn parse<'a>(text: &'a str, folder: &str) -> Result<(FrontMatter, &'a str), Rule> {
    let (yaml, body) = split(text).ok_or(Rule::NoFrontMatter)?;
    let raw: Raw = if yaml.trim().is_empty() {
        return Err(Rule::MissingName);
    } else {
        serde_yaml_ng::from_str(yaml).map_err(|e| Rule::Yaml(e.to_string()))?
    };
    let name = raw.name.ok_or(Rule::MissingName)?;
    let name_len = name.chars().count();
    if name_len == 0 {
        return Err(Rule::MissingName);
    }
    if name_len > MAX_NAME {
        return Err(Rule::NameLength(name_len));
    }
    if !name_characters_ok(&name) {
        return Err(Rule::NameCharacters(name));
    }
    if name != folder {
        return Err(Rule::NameNotFolder {
            name,
            folder: folder.to_string(),
        });
    }
    let description = raw
        .description
        .filter(|d| !d.trim().is_empty())
        .ok_or(Rule::MissingDescription)?;
    let description_len = description.chars().count();
    if description_len > MAX_DESCRIPTION {
        return Err(Rule::DescriptionLength(description_len));
    }
    if let Some(c) = &raw.compatibility {
        let n = c.chars().count();
        if n == 0 || n > MAX_COMPATIBILITY {
            return Err(Rule::CompatibilityLength(n));
        }
    }
    let front = FrontMatter {
        name,
        description: description.trim().to_string(),
        license: raw.license,
        compatibility: raw.compatibility,
        metadata: raw.metadata,
        allowed_tools: raw.allowed_tools,
    };
    Ok((front, body.trim_start_matches(['\n', '\r'])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(front: &str, folder: &str) -> Result<FrontMatter, Rule> {
        parse(&format!("---\n{front}---\n# Body\n"), folder).map(|(f, body)| {
            assert_eq!(body, "# Body\n");
            f
        })
    }

    #[test]
    fn a_valid_skill_with_every_field() {
        let front = check(
            "name: pdf-forms\ndescription: >\n  Fill PDF forms.\n  Use for PDFs.\n\
             license: MIT\ncompatibility: Needs python3\nmetadata:\n  author: me\n  \
             version: \"1.0\"\nallowed-tools: Bash(git:*) Read\nargument-hint: x\n",
            "pdf-forms",
        )
        .unwrap();
        assert_eq!(front.name, "pdf-forms");
        assert_eq!(front.description, "Fill PDF forms. Use for PDFs.");
        assert_eq!(front.license.as_deref(), Some("MIT"));
        assert_eq!(front.metadata["version"], "1.0");
        assert_eq!(front.allowed_tools.as_deref(), Some("Bash(git:*) Read"));
    }

    #[test]
    fn each_rule_is_named() {
        let d = "description: d\n";
        let cases: Vec<(String, &str, Rule)> = vec![
            (d.into(), "x", Rule::MissingName),
            (format!("name: \"\"\n{d}"), "x", Rule::MissingName),
            (
                format!("name: {}\n{d}", "a".repeat(65)),
                "x",
                Rule::NameLength(65),
            ),
            (
                format!("name: PDF\n{d}"),
                "PDF",
                Rule::NameCharacters("PDF".into()),
            ),
            (
                format!("name: a--b\n{d}"),
                "a--b",
                Rule::NameCharacters("a--b".into()),
            ),
            (
                format!("name: -a\n{d}"),
                "-a",
                Rule::NameCharacters("-a".into()),
            ),
            (
                format!("name: a-\n{d}"),
                "a-",
                Rule::NameCharacters("a-".into()),
            ),
            (
                format!("name: a_b\n{d}"),
                "a_b",
                Rule::NameCharacters("a_b".into()),
            ),
            (
                format!("name: abc\n{d}"),
                "abd",
                Rule::NameNotFolder {
                    name: "abc".into(),
                    folder: "abd".into(),
                },
            ),
            ("name: a\n".into(), "a", Rule::MissingDescription),
            (
                "name: a\ndescription: \"  \"\n".into(),
                "a",
                Rule::MissingDescription,
            ),
            (
                format!("name: a\ndescription: {}\n", "é".repeat(1025)),
                "a",
                Rule::DescriptionLength(1025),
            ),
            (
                format!("name: a\n{d}compatibility: {}\n", "c".repeat(501)),
                "a",
                Rule::CompatibilityLength(501),
            ),
        ];
        for (front, folder, rule) in cases {
            assert_eq!(check(&front, folder), Err(rule), "{front}");
        }
        // At the limits: fine.
        let at = format!(
            "name: {}\ndescription: {}\n",
            "a".repeat(64),
            "é".repeat(1024)
        );
        assert!(check(&at, &"a".repeat(64)).is_ok());
    }

    #[test]
    fn front_matter_must_be_there_and_be_yaml() {
        assert_eq!(
            parse("# no front matter\n", "a").unwrap_err(),
            Rule::NoFrontMatter
        );
        assert_eq!(
            parse("---\nname: a\n", "a").unwrap_err(),
            Rule::NoFrontMatter
        );
        let Err(Rule::Yaml(why)) = check("name: [a\n", "a") else {
            panic!()
        };
        assert!(!why.is_empty());
        // A list where text belongs is a type error, named.
        assert!(matches!(
            check("name: [a]\ndescription: d\n", "a"),
            Err(Rule::Yaml(_))
        ));
        assert_eq!(
            Rule::NameNotFolder {
                name: "a".into(),
                folder: "b".into()
            }
            .to_string(),
            "`name` `a` must equal its folder's name, `b`"
        );
    }

    #[test]
    fn crlf_and_a_byte_order_mark_are_read() {
        let (front, body) = parse(
            "\u{feff}---\r\nname: a\r\ndescription: d\r\n---\r\nBody\r\n",
            "a",
        )
        .unwrap();
        assert_eq!((front.name.as_str(), body), ("a", "Body\r\n"));
    }
}
