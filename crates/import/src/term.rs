//! A parser for the subset of Prolog the UnifyWeaver agent-loop spec is written in: facts
//! and `:- directive` clauses made of atoms (plain and quoted), variables, double-quoted
//! strings with escapes, numbers, lists and compound terms, plus `Name/Arity` (for module
//! export lists); `%` line comments and `/* */` block comments. Operators beyond `/` are not
//! read. Every error names the line and column.

use std::fmt;

use crate::shown::hides;

/// One Prolog term.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Atom(String),
    Var(String),
    Str(String),
    Int(i64),
    Float(f64),
    List(Vec<Term>),
    /// `name(args...)`; `a/2` is `Compound("/", [a, 2])`.
    Compound(String, Vec<Term>),
}

impl Term {
    /// The atom's or string's text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Term::Atom(s) | Term::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The functor name and arguments; an atom is a compound of no arguments.
    pub fn functor(&self) -> Option<(&str, &[Term])> {
        match self {
            Term::Compound(name, args) => Some((name, args)),
            Term::Atom(name) => Some((name, &[])),
            _ => None,
        }
    }
}

impl fmt::Display for Term {
    /// Prolog-like text, for messages and comments.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Atom(s) | Term::Var(s) if !s.chars().any(hides) => f.write_str(s),
            Term::Atom(s) | Term::Var(s) => write_quoted(f, s, '\''),
            Term::Str(s) => write_quoted(f, s, '"'),
            Term::Int(n) => write!(f, "{n}"),
            Term::Float(x) => write!(f, "{x:?}"),
            Term::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Term::Compound(name, args) if name == "/" && args.len() == 2 => {
                write!(f, "{}/{}", args[0], args[1])
            }
            Term::Compound(name, args) => {
                write!(f, "{name}(")?;
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{arg}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// `text` quoted with `quote`, written back in Prolog's escapes so that it reads as the
/// same term and holds no control character.
fn write_quoted(f: &mut fmt::Formatter<'_>, text: &str, quote: char) -> fmt::Result {
    use fmt::Write as _;
    f.write_char(quote)?;
    f.write_str(&escaped(text, Some(quote)))?;
    f.write_char(quote)
}

/// `text` with its control, invisible and direction-changing characters written as Prolog
/// escapes (`\n`, `\e`, `\x202E\`), and `\` and `quote` escaped when it is to be quoted.
fn escaped(text: &str, quote: Option<char>) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '\'' | '"' if quote.is_some_and(|q| q == c || c == '\\') => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x1b' => out.push_str("\\e"),
            c if hides(c) => out.push_str(&format!("\\x{:X}\\", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `text` safe for a TOML comment or a message: one line, no control character.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(hides) {
        std::borrow::Cow::Owned(escaped(text, None))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// One clause: a fact or a directive, and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub term: Term,
    /// `:- term.`
    pub directive: bool,
    pub line: usize,
}

/// A syntax error at a line and column (both from 1).
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::error::Error for SyntaxError {}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Reads every clause of `text`.
pub fn parse(text: &str) -> Result<Vec<Clause>, SyntaxError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        column: 1,
        depth: 0,
    };
    let mut clauses = Vec::new();
    loop {
        p.skip_blank()?;
        if p.peek().is_none() {
            return Ok(clauses);
        }
        let line = p.line;
        let directive = p.eat_str(":-");
        if directive {
            p.skip_blank()?;
        }
        let term = p.term()?;
        p.skip_blank()?;
        if p.peek() != Some('.') {
            return Err(p.error("expected `.` at the end of the clause"));
        }
        p.bump();
        if p.peek().is_some_and(|c| !c.is_whitespace() && c != '%') {
            return Err(p.error("expected a space or a new line after the clause's `.`"));
        }
        clauses.push(Clause {
            term,
            directive,
            line,
        });
    }
}

/// Lists and compound terms nested deeper than this are refused: a spec nests a few levels,
/// and the parser recurses once per level (100,000 would overflow its stack).
pub const MAX_DEPTH: usize = 64;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    column: usize,
    /// The lists and compound terms open here.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn eat_str(&mut self, s: &str) -> bool {
        let matches = s
            .chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c));
        if matches {
            for _ in s.chars() {
                self.bump();
            }
        }
        matches
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }

    /// Skips white space and comments.
    fn skip_blank(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('%') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                Some('/') if self.peek_at(1) == Some('*') => {
                    let start = self.error("a `/*` comment is never closed");
                    self.bump();
                    self.bump();
                    while !self.eat_str("*/") {
                        if self.bump().is_none() {
                            return Err(start);
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// A primary term, then `/ Arity` if it follows.
    fn term(&mut self) -> Result<Term, SyntaxError> {
        let term = self.primary()?;
        self.skip_blank()?;
        if self.peek() == Some('/') && self.peek_at(1) != Some('*') {
            self.bump();
            self.skip_blank()?;
            let right = self.primary()?;
            return Ok(Term::Compound("/".into(), vec![term, right]));
        }
        Ok(term)
    }

    fn primary(&mut self) -> Result<Term, SyntaxError> {
        match self.peek() {
            None => Err(self.error("the file ends inside a clause")),
            Some('[') => self.list(),
            Some('"') => self.string().map(Term::Str),
            Some('\'') => {
                let name = self.quoted('\'')?;
                self.after_name(name)
            }
            Some(c) if c.is_ascii_digit() => self.number(false),
            Some('-') if self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) => {
                self.bump();
                self.number(true)
            }
            Some(c) if c.is_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self.peek().filter(|c| c.is_alphanumeric() || *c == '_') {
                    name.push(c);
                    self.bump();
                }
                if c.is_uppercase() || c == '_' {
                    Ok(Term::Var(name))
                } else {
                    self.after_name(name)
                }
            }
            Some(c) => Err(self.error(format!("unexpected `{c}`"))),
        }
    }

    /// An atom, or a compound if `(` follows at once.
    fn after_name(&mut self, name: String) -> Result<Term, SyntaxError> {
        if self.peek() != Some('(') {
            return Ok(Term::Atom(name));
        }
        self.enter()?;
        self.bump();
        let args = self.items(')')?;
        self.depth -= 1;
        Ok(Term::Compound(name, args))
    }

    fn list(&mut self) -> Result<Term, SyntaxError> {
        self.enter()?;
        self.bump();
        self.skip_blank()?;
        let items = if self.peek() == Some(']') {
            self.bump();
            Vec::new()
        } else {
            self.items(']')?
        };
        self.depth -= 1;
        Ok(Term::List(items))
    }

    /// One more level of nesting, at the bracket that opens it.
    fn enter(&mut self) -> Result<(), SyntaxError> {
        if self.depth == MAX_DEPTH {
            return Err(self.error(format!(
                "lists and terms nested deeper than {MAX_DEPTH} levels"
            )));
        }
        self.depth += 1;
        Ok(())
    }

    /// Comma-separated terms up to `close`.
    fn items(&mut self, close: char) -> Result<Vec<Term>, SyntaxError> {
        let mut items = Vec::new();
        loop {
            self.skip_blank()?;
            items.push(self.term()?);
            self.skip_blank()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(c) if c == close => {
                    self.bump();
                    return Ok(items);
                }
                Some('|') if close == ']' => {
                    return Err(self.error("a list tail (`|`) is not supported in a spec"))
                }
                _ => return Err(self.error(format!("expected `,` or `{close}`"))),
            }
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.quoted('"')
    }

    /// A quoted atom or string: `\` escapes, and the quote doubled stands for itself.
    fn quoted(&mut self, quote: char) -> Result<String, SyntaxError> {
        let start = self.error(format!("a {quote}-quoted text is never closed"));
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(start),
                Some(c) if c == quote => {
                    if self.peek() == Some(quote) {
                        self.bump();
                        out.push(quote);
                    } else {
                        return Ok(out);
                    }
                }
                Some('\\') => {
                    // The escape is reported where its backslash is.
                    let at = SyntaxError {
                        column: self.column - 1,
                        ..self.error("")
                    };
                    let escaped = match self.bump() {
                        Some('n') => '\n',
                        Some('t') => '\t',
                        Some('r') => '\r',
                        Some('a') => '\x07',
                        Some('b') => '\x08',
                        Some('f') => '\x0c',
                        Some('v') => '\x0b',
                        Some('0') => '\0',
                        Some('e') => '\x1b',
                        Some('s') => ' ',
                        Some('\n') => continue,
                        Some('x') => {
                            let mut hex = String::new();
                            while let Some(c) = self.peek().filter(char::is_ascii_hexdigit) {
                                hex.push(c);
                                self.bump();
                            }
                            if self.peek() == Some('\\') {
                                self.bump();
                            }
                            u32::from_str_radix(&hex, 16)
                                .ok()
                                .and_then(char::from_u32)
                                .ok_or_else(|| SyntaxError {
                                    message: format!("bad escape `\\x{hex}\\`"),
                                    ..at.clone()
                                })?
                        }
                        Some(c @ ('\\' | '\'' | '"' | '`')) => c,
                        Some(c) => {
                            return Err(SyntaxError {
                                message: format!("unknown escape `\\{c}`"),
                                ..at
                            })
                        }
                        None => return Err(start),
                    };
                    out.push(escaped);
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn number(&mut self, negative: bool) -> Result<Term, SyntaxError> {
        let at = self.error("");
        let mut text = String::from(if negative { "-" } else { "" });
        let digits = |p: &mut Parser, text: &mut String| {
            while let Some(c) = p.peek().filter(|c| c.is_ascii_digit() || *c == '_') {
                if c != '_' {
                    text.push(c);
                }
                p.bump();
            }
        };
        digits(self, &mut text);
        let mut float = false;
        if self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            float = true;
            text.push('.');
            self.bump();
            digits(self, &mut text);
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            float = true;
            text.push('e');
            self.bump();
            if let Some(sign @ ('+' | '-')) = self.peek() {
                text.push(sign);
                self.bump();
            }
            digits(self, &mut text);
        }
        let bad = |e: String| SyntaxError {
            message: format!("bad number `{text}`: {e}"),
            ..at.clone()
        };
        if float {
            text.parse()
                .map(Term::Float)
                .map_err(|e| bad(format!("{e}")))
        } else {
            text.parse().map(Term::Int).map_err(|e| bad(format!("{e}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_directives_comments_and_escapes() {
        let text = ":- module(spec, [agent_backend/2]).\n% a comment\n/* block\n */ \
                    fact(a, \"x\\\"y\\n\", 'Quoted atom', -12, 2.5, [b, c(1)], []).\n";
        let clauses = parse(text).unwrap();
        assert_eq!(clauses.len(), 2);
        assert!(clauses[0].directive);
        assert_eq!(
            clauses[0].term.to_string(),
            "module(spec, [agent_backend/2])"
        );
        assert_eq!(clauses[1].line, 4);
        let Term::Compound(name, args) = &clauses[1].term else {
            panic!()
        };
        assert_eq!(name, "fact");
        assert_eq!(args[1], Term::Str("x\"y\n".into()));
        assert_eq!(args[2], Term::Atom("Quoted atom".into()));
        assert_eq!(args[3], Term::Int(-12));
        assert_eq!(args[4], Term::Float(2.5));
        assert_eq!(args[5].to_string(), "[b, c(1)]");
        assert_eq!(args[6], Term::List(vec![]));
    }

    #[test]
    fn errors_name_line_and_column() {
        let err = parse("a(b).\nfact(x, \"open\n").unwrap_err();
        assert_eq!((err.line, err.column), (2, 9));
        assert!(err.message.contains("never closed"), "{err}");
        let err = parse("a(b c).").unwrap_err();
        assert_eq!(err.to_string(), "1:5: expected `,` or `)`");
        let err = parse("a(b)").unwrap_err();
        assert_eq!(
            err.to_string(),
            "1:5: expected `.` at the end of the clause"
        );
        let err = parse("a(\"\\q\").").unwrap_err();
        assert_eq!(err.to_string(), "1:4: unknown escape `\\q`");
    }
}
