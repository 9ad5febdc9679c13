//! The one error type of the zone crate.

use std::fmt;

use crate::report::Report;

/// Everything that can stop a zone from being loaded or changed.
#[derive(Debug)]
pub enum Error {
    /// The zone's data breaks rules that make it unusable; the report lists them all.
    Semantic(Box<Report>),
    /// A changeset that does not fit the zone it is applied to (RFC 1995 §5).
    Changeset(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Semantic(report) => {
                let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
                write!(f, "zone has {} error(s): {}", errors.len(), errors.join("; "))
            }
            Error::Changeset(message) => write!(f, "changeset does not apply: {message}"),
        }
    }
}

impl std::error::Error for Error {}
