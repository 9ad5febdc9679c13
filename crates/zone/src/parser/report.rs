//! The outcome of a successful parse: how many records were read, and the warnings.

use std::fmt;

use crate::error::{escape_controls, Position};

/// Something accepted but worth telling the operator (a TTL taken as zero, a TTL that
/// had to be guessed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where.
    pub at: Position,
    /// What, and what the parser did about it.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: warning: {}", self.at, escape_controls(&self.message))
    }
}

/// What a parse produced besides the records themselves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Records handed to the sink (including those made by `$GENERATE`).
    pub records: u64,
    /// Warnings, in file order, at most `Options::max_errors` of them.
    pub warnings: Vec<Warning>,
    /// Warnings left out of `warnings` because there were too many.
    pub warnings_dropped: u64,
}
