//! What a guard (`[backends.NAME.guard]`) reads of your own files for an agent, to pass it
//! what they say and nothing a project's files say instead: the names under a table of a TOML
//! file (codex's `mcp_servers`, each then turned off by name, for codex cannot be told to
//! drop them all), and a variable of a dotenv file (qwen's and gemini's `.env`, read the way
//! they read it, for they take a project's `.env` over your own). A path is written with
//! `~/` (your home) or `${NAME:-default}` (a variable, or what stands after `:-` without it).

use std::path::{Path, PathBuf};

/// `path` with `${NAME}`, `${NAME:-default}` and a leading `~` replaced; `None` when a
/// variable it needs is not set (or `HOME`, for `~`).
pub fn expand(path: &str) -> Option<PathBuf> {
    let mut out = String::new();
    let mut rest = path;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}')? + at;
        let inner = &rest[at + 2..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match std::env::var(name).ok().filter(|v| !v.is_empty()) {
            Some(value) => out.push_str(&value),
            None => out.push_str(default?),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    match out.strip_prefix('~') {
        Some(under) if under.is_empty() || under.starts_with('/') => {
            let home = std::env::var("HOME").ok().filter(|h| !h.is_empty())?;
            Some(PathBuf::from(format!("{home}{under}")))
        }
        _ => Some(PathBuf::from(out)),
    }
}

/// The names under `table` (a dotted path of keys) in the TOML file at `path`, each with the
/// keys its entry sets: none where the file or the table is missing; `Err`, naming the file,
/// where it cannot be read or is not TOML.
pub fn table_entries(path: &Path, table: &str) -> std::io::Result<Vec<(String, Vec<String>)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(std::io::Error::new(
                e.kind(),
                format!("{}: {e}", path.display()),
            ))
        }
    };
    let doc: toml::Table = text.parse().map_err(|e| {
        let why = format!("{} is not TOML: {e}", path.display());
        std::io::Error::new(std::io::ErrorKind::InvalidData, why)
    })?;
    let mut at = Some(&doc);
    for key in table.split('.') {
        at = at.and_then(|t| t.get(key)).and_then(toml::Value::as_table);
    }
    let keys = |v: &toml::Value| {
        v.as_table()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    };
    Ok(at
        .map(|t| t.iter().map(|(k, v)| (k.clone(), keys(v))).collect())
        .unwrap_or_default())
}

/// The value `text`, a dotenv file, gives `key`, as Node's `dotenv` (which qwen and gemini
/// use) parses it: `KEY=value` or `export KEY=value`, the last one standing; a value in
/// quotes kept as it is inside them (`\n` in double quotes a newline), an unquoted one up to
/// a `#` and trimmed.
pub fn dotenv_value(text: &str, key: &str) -> Option<String> {
    // dotenv 16's own pattern.
    static LINE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let line = LINE.get_or_init(|| {
        regex::Regex::new(
            r#"(?m)^\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?$"#,
        )
        .expect("a valid pattern")
    });
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut found = None;
    for caps in line.captures_iter(&text) {
        if &caps[1] != key {
            continue;
        }
        let value = caps.get(2).map_or("", |m| m.as_str()).trim();
        let quote = value
            .chars()
            .next()
            .filter(|q| ['\'', '"', '`'].contains(q));
        found = Some(match quote {
            Some(q) if value.len() >= 2 && value.ends_with(q) => {
                let inner = &value[1..value.len() - 1];
                if q == '"' {
                    inner.replace("\\n", "\n").replace("\\r", "\r")
                } else {
                    inner.to_string()
                }
            }
            _ => value.to_string(),
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotenv_values_are_read_as_node_reads_them() {
        let text = "# a comment\nOPENAI_BASE_URL=http://first\nexport A = 'x # y'\n\
                    B=\"line\\nnext\" # note\nC=plain value # note\nD=\nOPENAI_BASE_URL=http://last\n";
        assert_eq!(
            dotenv_value(text, "OPENAI_BASE_URL").as_deref(),
            Some("http://last")
        );
        assert_eq!(dotenv_value(text, "A").as_deref(), Some("x # y"));
        assert_eq!(dotenv_value(text, "B").as_deref(), Some("line\nnext"));
        assert_eq!(dotenv_value(text, "C").as_deref(), Some("plain value"));
        assert_eq!(dotenv_value(text, "D").as_deref(), Some(""));
        assert_eq!(dotenv_value(text, "E"), None);
        assert_eq!(dotenv_value("X=1\r\nY=2\r\n", "X").as_deref(), Some("1"));
    }

    #[test]
    fn names_of_a_table_and_their_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "model = \"m\"\n[mcp_servers.one]\ncommand = \"a\"\n[mcp_servers.\"two.x\"]\nurl = \"u\"\n",
        )
        .unwrap();
        let entry = |name: &str, key: &str| (name.to_string(), vec![key.to_string()]);
        assert_eq!(
            table_entries(&path, "mcp_servers").unwrap(),
            [entry("one", "command"), entry("two.x", "url")]
        );
        assert!(table_entries(&path, "other.table").unwrap().is_empty());
        assert!(table_entries(&dir.path().join("none"), "mcp_servers")
            .unwrap()
            .is_empty());
        std::fs::write(&path, "[[").unwrap();
        assert!(table_entries(&path, "mcp_servers").is_err());
    }

    #[test]
    fn paths_take_a_variable_or_its_default() {
        let home = std::env::var("HOME").unwrap_or_default();
        if home.is_empty() {
            return;
        }
        assert_eq!(
            expand("${AGENT_LOOP_UNSET_FOR_TEST:-~/.codex}/config.toml"),
            Some(PathBuf::from(format!("{home}/.codex/config.toml")))
        );
        assert_eq!(expand("${AGENT_LOOP_UNSET_FOR_TEST}/x"), None);
        assert_eq!(
            expand("${HOME}/.env"),
            Some(PathBuf::from(format!("{home}/.env")))
        );
        assert_eq!(expand("/etc/x"), Some(PathBuf::from("/etc/x")));
        assert_eq!(expand("~x/y"), Some(PathBuf::from("~x/y")));
    }
}
