//! What every part of the translation of a UnifyWeaver spec shares: the output tables, the
//! translator that collects them and the warnings, and reading a property's value.

use super::term::{printable, Term};
use crate::ImportError;

/// Lines of one output table, its leading comments and keys in order.
#[derive(Default)]
pub(super) struct Table {
    pub(super) header: String,
    pub(super) lines: Vec<String>,
}

impl Table {
    pub(super) fn key(&mut self, key: &str, value: impl Into<toml::Value>) {
        self.lines.push(format!("{key} = {}", value.into()));
    }

    pub(super) fn comment(&mut self, text: &str) {
        // A newline in a comment would start a live line of TOML.
        self.lines.push(format!("# {}", printable(text)));
    }
}

pub(super) struct Translator<'a> {
    pub(super) source: &'a str,
    pub(super) warnings: Vec<String>,
}

impl Translator<'_> {
    /// Leaves `term` as a comment in `table` and warns about it.
    pub(super) fn unsupported(
        &mut self,
        table: &mut Table,
        line: usize,
        what: &str,
        term: &Term,
        why: &str,
    ) {
        table.comment(&format!("not imported: {term} ({why})"));
        let warning = format!(
            "{}:{line}: {what}: {term} is not supported ({why}); left as a comment",
            self.source
        );
        self.warnings.push(printable(&warning).into_owned());
    }

    /// Warns that what `from` (on `line`) sets lets `tool` run without asking.
    pub(super) fn warn_unasked(&mut self, line: usize, from: &str, tool: &str) {
        let warning = format!(
            "{}:{line}: {from}: {tool} will change things without asking (written as \
             [tools.{tool}] confirm = false)",
            self.source
        );
        self.warnings.push(printable(&warning).into_owned());
    }

    pub(super) fn error(&self, line: usize, message: String) -> ImportError {
        ImportError::Fact {
            spec: self.source.to_string(),
            line,
            message,
        }
    }
}

/// A table key: bare when it can be.
pub(super) fn key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_string()
    } else {
        toml::Value::from(name).to_string()
    }
}

pub(super) fn boolean(
    t: &Translator,
    line: usize,
    prop: &Term,
    flag: &Term,
) -> Result<bool, ImportError> {
    match flag {
        Term::Atom(s) if s == "true" => Ok(true),
        Term::Atom(s) if s == "false" => Ok(false),
        _ => Err(t.error(line, format!("{prop}: expected true or false"))),
    }
}

pub(super) fn string(
    t: &Translator,
    line: usize,
    what: &str,
    prop: &Term,
    arg: &Term,
) -> Result<String, ImportError> {
    arg.text()
        .map(str::to_string)
        .ok_or_else(|| t.error(line, format!("{what}: {prop}: expected a string")))
}

pub(super) fn strings(
    t: &Translator,
    line: usize,
    what: &str,
    prop: &Term,
    arg: &Term,
) -> Result<Vec<String>, ImportError> {
    match arg {
        Term::List(items) => items
            .iter()
            .map(|i| string(t, line, what, prop, i))
            .collect(),
        _ => Err(t.error(line, format!("{what}: {prop}: expected a list of strings"))),
    }
}
