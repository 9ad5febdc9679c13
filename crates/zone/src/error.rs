//! The one error type of the zone crate, and [`Position`], the place in a zone file an
//! error or warning is about.
//!
//! Zone-file errors read `file:line:column: message`, followed by the chain of
//! `$INCLUDE`s that led to the file, innermost first.

use std::fmt;
use std::path::PathBuf;

use crate::report::Report;

/// A place in a zone file: the file, the line and column (1-based, columns in bytes),
/// and the `$INCLUDE` chain that led there.
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
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

impl Position {
    /// Writes ` (included from a:3, from b:7)` when the position is in an included file.
    fn fmt_chain(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (file, line)) in self.included_from.iter().enumerate() {
            let lead = if i == 0 { " (included from " } else { ", from " };
            write!(f, "{lead}{}:{line}", file.display())?;
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
                write!(f, "{at}: {message}")?;
                at.fmt_chain(f)
            }
            Error::Io { path, message } => write!(f, "{}: {message}", path.display()),
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
            Error::Record(message) => f.write_str(message),
            Error::Semantic(report) => {
                let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
                write!(f, "zone has {} error(s): {}", errors.len(), errors.join("; "))
            }
            Error::Changeset(message) => write!(f, "changeset does not apply: {message}"),
        }
    }
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
    fn many_lists_every_error() {
        let one = Error::Syntax { at: at("z", 1, 1, &[]), message: "a".into() };
        let two = Error::Io { path: "y".into(), message: "b".into() };
        let many = Error::Many(vec![one.clone(), two]);
        assert_eq!(many.to_string(), "z:1:1: a\ny: b");
        assert_eq!(many.errors().len(), 2);
        assert_eq!(one.errors(), std::slice::from_ref(&one));
    }
}
