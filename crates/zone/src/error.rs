//! The one error type of the zone crate, and [`Position`], the place in a zone file an
//! error or warning is about.
//!
//! Zone-file errors read `file:line:column: message`, followed by the chain of
//! `$INCLUDE`s that led to the file, innermost first.
//!
//! Messages go to terminals and logs, and quote what a file holds. What the parser quotes
//! is already cut and escaped where it is quoted ([`tern_wire::text::excerpt`]); on top of
//! that, every message and path is printed with its control characters escaped
//! ([`escape_controls`]), so no NUL, terminal escape sequence or newline (a forged log
//! line) from a file reaches the output, whatever the message is made of.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::report::Report;

/// A place in a zone file: the file, the line and column (1-based, columns in bytes),
/// and the `$INCLUDE` chain that led there. Column 0 stands for the whole line (a record,
/// in the findings of the zone checks), line 0 for the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The file, as named by the caller or by the `$INCLUDE` directive (joined to the
    /// including file's directory).
    pub file: PathBuf,
    /// Line, from 1.
    pub line: u32,
    /// Column in bytes, from 1.
    pub column: u32,
    /// The files that included this one and the line of each `$INCLUDE`, innermost first.
    pub included_from: Vec<(PathBuf, u32)>,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = shown_path(&self.file);
        match (self.line, self.column) {
            (0, _) => f.write_str(&file),
            (line, 0) => write!(f, "{file}:{line}"),
            (line, column) => write!(f, "{file}:{line}:{column}"),
        }
    }
}

impl Position {
    /// A whole line of `file` (column 0), outside any `$INCLUDE` chain.
    pub fn of_line(file: &Path, line: u32) -> Position {
        Position { file: file.to_path_buf(), line, column: 0, included_from: Vec::new() }
    }

    /// Writes ` (included from a:3, from b:7)` when the position is in an included file.
    fn fmt_chain(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (file, line)) in self.included_from.iter().enumerate() {
            let lead = if i == 0 { " (included from " } else { ", from " };
            write!(f, "{lead}{}:{line}", shown_path(file))?;
        }
        if self.included_from.is_empty() {
            Ok(())
        } else {
            f.write_str(")")
        }
    }
}

/// Everything that can go wrong in the zone crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Zone-file text that cannot be read or breaks a rule: where, what was expected and
    /// what was found.
    Syntax { at: Box<Position>, message: String },
    /// An `$INCLUDE` that cannot be followed: not allowed, too deep, recursive, or a file
    /// that cannot be read.
    Include { at: Box<Position>, message: String },
    /// The zone file itself cannot be read.
    Io { path: PathBuf, message: String },
    /// The consumer of the parsed records refused the record at `at`.
    Rejected { at: Box<Position>, error: Box<Error> },
    /// Every error found, in file order, when the parser was asked to collect them all.
    Many(Vec<Error>),
    /// A record the zone cannot hold (reported by the consumer of parsed records, which
    /// adds its position through [`Error::Rejected`]).
    Record(String),
    /// The zone's data breaks rules that make it unusable; the report lists them all.
    Semantic(Box<Report>),
    /// A changeset that does not fit the zone it is applied to (RFC 1995 §5).
    Changeset(crate::changeset::ChangesetError),
}

impl Error {
    /// The position the error is about, if it has one.
    pub fn position(&self) -> Option<&Position> {
        match self {
            Error::Syntax { at, .. } | Error::Include { at, .. } | Error::Rejected { at, .. } => {
                Some(at)
            }
            Error::Many(errors) => errors.first().and_then(Error::position),
            Error::Io { .. } | Error::Record(_) | Error::Semantic(_) | Error::Changeset(_) => None,
        }
    }

    /// The individual errors: the list of [`Error::Many`], or this one error.
    pub fn errors(&self) -> &[Error] {
        match self {
            Error::Many(errors) => errors,
            other => std::slice::from_ref(other),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Syntax { at, message } | Error::Include { at, message } => {
                write!(f, "{at}: {}", escape_controls(message))?;
                at.fmt_chain(f)
            }
            Error::Io { path, message } => {
                write!(f, "{}: {}", shown_path(path), escape_controls(message))
            }
            Error::Rejected { at, error } => {
                write!(f, "{at}: {error}")?;
                at.fmt_chain(f)
            }
            Error::Many(errors) => {
                for (i, error) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{error}")?;
                }
                Ok(())
            }
            Error::Record(message) => f.write_str(&escape_controls(message)),
            Error::Semantic(report) => {
                let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
                write!(f, "zone has {} error(s): {}", errors.len(), errors.join("; "))
            }
            Error::Changeset(message) => {
                write!(f, "changeset does not apply: {}", escape_controls(&message.to_string()))
            }
        }
    }
}

/// The longest path a message shows (in bytes; a path from an `$INCLUDE` token can be as
/// long as the token).
const PATH_SHOWN: usize = 1024;

/// `text` with every control character (C0, DEL, C1: NUL, escape sequences, newlines) and
/// bidirectional override written as an escape: `\DDD` (as zone files write bytes) below
/// 256, `\u{XXXX}` above. Other text, non-ASCII letters included, is kept.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        let code = u32::from(c);
        // Writing into a String cannot fail.
        let _ = match (needs_escape(c), code < 256) {
            (false, _) => out.write_char(c),
            (true, true) => write!(out, "\\{code:03}"),
            (true, false) => write!(out, "\\u{{{code:04x}}}"),
        };
    }
    Cow::Owned(out)
}

/// Characters a message must not print as they are.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A path as messages show it: control characters escaped, at most 1024 bytes.
pub fn shown_path(path: &Path) -> String {
    let lossy = path.to_string_lossy();
    let mut end = lossy.len().min(PATH_SHOWN);
    while !lossy.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < lossy.len() { "…" } else { "" };
    format!("{}{cut}", escape_controls(lossy.get(..end).unwrap_or_default()))
}

impl std::error::Error for Error {}

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: u32, column: u32, chain: &[(&str, u32)]) -> Box<Position> {
        Box::new(Position {
            file: file.into(),
            line,
            column,
            included_from: chain.iter().map(|(f, l)| (PathBuf::from(f), *l)).collect(),
        })
    }

    #[test]
    fn messages_name_file_line_column_and_include_chain() {
        let e = Error::Syntax { at: at("z.zone", 3, 7, &[]), message: "expected a type".into() };
        assert_eq!(e.to_string(), "z.zone:3:7: expected a type");
        let chain = [("sub/a.zone", 4), ("z.zone", 10)];
        let e = Error::Syntax { at: at("sub/b.zone", 1, 1, &chain), message: "bad".into() };
        assert_eq!(
            e.to_string(),
            "sub/b.zone:1:1: bad (included from sub/a.zone:4, from z.zone:10)"
        );
        let e = Error::Rejected {
            at: at("z.zone", 2, 1, &[]),
            error: Box::new(Error::Record("CNAME and other data".into())),
        };
        assert_eq!(e.to_string(), "z.zone:2:1: CNAME and other data");
        assert_eq!(e.position().map(|p| p.line), Some(2));
    }

    #[test]
    fn messages_escape_control_characters_in_paths_and_text() {
        // A file name and a message holding NUL, ESC, a newline (a forged log line) and a
        // right-to-left override.
        let e = Error::Syntax {
            at: at("a\x1b[2Jb.zone", 1, 2, &[("in\0c", 3)]),
            message: "found 'x\0y\x1b[31m'\nfake: line \u{202e}".into(),
        };
        assert_eq!(
            e.to_string(),
            "a\\027[2Jb.zone:1:2: found 'x\\000y\\027[31m'\\010fake: line \\u{202e} \
             (included from in\\000c:3)"
        );
        let io = Error::Io { path: "z\x07".into(), message: "bell \x07".into() };
        assert_eq!(io.to_string(), "z\\007: bell \\007");
        let plain = Error::Record("RFC 2181 §10.1: a CNAME … alone".into());
        assert_eq!(plain.to_string(), "RFC 2181 §10.1: a CNAME … alone", "printable text kept");
    }

    #[test]
    fn many_lists_every_error() {
        let one = Error::Syntax { at: at("z", 1, 1, &[]), message: "a".into() };
        let two = Error::Io { path: "y".into(), message: "b".into() };
        let many = Error::Many(vec![one.clone(), two]);
        assert_eq!(many.to_string(), "z:1:1: a\ny: b");
        assert_eq!(many.errors().len(), 2);
        assert_eq!(one.errors(), std::slice::from_ref(&one));
    }
}
