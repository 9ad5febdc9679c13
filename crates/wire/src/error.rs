//! The one error type of the wire crate.
//!
//! Wire-format errors carry the byte offset at which the input stopped making sense;
//! presentation-format errors carry the line and column of the offending token. Outcomes
//! that are part of normal DNS operation (NXDOMAIN, truncation, a TSIG BADSIG) are never
//! errors: they are values of their own types.

use std::fmt;

/// Everything that can go wrong while reading or writing DNS data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The input ended before a complete item could be read; `offset` is where more
    /// data was needed.
    Truncated { offset: usize },
    /// A label type 0b01 or 0b10 (RFC 6891 §5 retired extended labels; RFC 1035 §4.1.4).
    BadLabelType { offset: usize },
    /// A compression pointer that does not point strictly below the current limit, or a
    /// pointer where none is allowed.
    BadPointer { offset: usize },
    /// A name longer than 255 octets in wire form (RFC 1035 §2.3.4).
    NameTooLong { offset: usize },
    /// Bytes left over where an item must end exactly (for example after RDATA).
    TrailingData { offset: usize },
    /// RDATA that does not follow its type's format.
    BadRdata { offset: usize, reason: &'static str },
    /// A message, record or field that breaks a protocol rule other than the above.
    Malformed { offset: usize, reason: &'static str },
    /// An OPT record or EDNS option that breaks RFC 6891 §6.1.1 (a second OPT, OPT outside
    /// the additional section, a non-root owner, bad option framing) or an option's own
    /// length rules. A server answers FORMERR, without an OPT record when the OPT itself is
    /// at fault.
    BadOpt { offset: usize, reason: &'static str },
    /// A TSIG record that is malformed or not the last record of the message (RFC 8945
    /// §5.1, §5.2.2.1): FORMERR.
    BadTsig { offset: usize, reason: &'static str },
    /// The output buffer (or its configured limit) has no room for what was written.
    NoSpace,
    /// Presentation format that cannot be read: where, and what was expected instead.
    Syntax { line: u32, column: u32, message: String },
}

impl Error {
    /// The byte offset of a wire-format error, if this is one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Error::Truncated { offset }
            | Error::BadLabelType { offset }
            | Error::BadPointer { offset }
            | Error::NameTooLong { offset }
            | Error::TrailingData { offset }
            | Error::BadRdata { offset, .. }
            | Error::Malformed { offset, .. }
            | Error::BadOpt { offset, .. }
            | Error::BadTsig { offset, .. } => Some(*offset),
            Error::NoSpace | Error::Syntax { .. } => None,
        }
    }

    /// A syntax error at the given position.
    pub fn syntax(line: u32, column: u32, message: impl Into<String>) -> Self {
        Error::Syntax { line, column, message: message.into() }
    }

    /// The same error with wire offsets shifted by `base` (for errors found inside a
    /// sub-slice of a larger message).
    #[must_use]
    pub fn shifted(self, base: usize) -> Self {
        match self {
            Error::Truncated { offset } => Error::Truncated { offset: offset + base },
            Error::BadLabelType { offset } => Error::BadLabelType { offset: offset + base },
            Error::BadPointer { offset } => Error::BadPointer { offset: offset + base },
            Error::NameTooLong { offset } => Error::NameTooLong { offset: offset + base },
            Error::TrailingData { offset } => Error::TrailingData { offset: offset + base },
            Error::BadRdata { offset, reason } => Error::BadRdata { offset: offset + base, reason },
            Error::Malformed { offset, reason } => {
                Error::Malformed { offset: offset + base, reason }
            }
            Error::BadOpt { offset, reason } => Error::BadOpt { offset: offset + base, reason },
            Error::BadTsig { offset, reason } => Error::BadTsig { offset: offset + base, reason },
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated { offset } => write!(f, "data ends early at byte {offset}"),
            Error::BadLabelType { offset } => write!(f, "reserved label type at byte {offset}"),
            Error::BadPointer { offset } => {
                write!(f, "compression pointer at byte {offset} does not point backwards")
            }
            Error::NameTooLong { offset } => {
                write!(f, "name longer than 255 bytes at byte {offset}")
            }
            Error::TrailingData { offset } => write!(f, "unexpected data at byte {offset}"),
            Error::BadRdata { offset, reason } => write!(f, "bad rdata at byte {offset}: {reason}"),
            Error::Malformed { offset, reason } => {
                write!(f, "malformed at byte {offset}: {reason}")
            }
            Error::BadOpt { offset, reason } => {
                write!(f, "bad OPT record at byte {offset}: {reason}")
            }
            Error::BadTsig { offset, reason } => {
                write!(f, "bad TSIG record at byte {offset}: {reason}")
            }
            Error::NoSpace => f.write_str("no room left in the output buffer"),
            Error::Syntax { line, column, message } => write!(f, "{line}:{column}: {message}"),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
