//! What loading a zone found: semantic errors (the zone is refused), warnings (the zone
//! is served, the operator should look) and summary counts.
//!
//! A finding about a zone loaded from a file says where, as syntax errors do:
//! `zone.db:12: error: www.example. CNAME exists beside A data` — the line of the record
//! concerned, or of the first record of the name concerned (the builder keeps lines only
//! while it builds; the served snapshot has none).

use std::fmt;

use tern_wire::{Dname, Name, Rtype};

use crate::error::{escape_controls, Position};

/// How serious an issue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The zone cannot be served as it is.
    Error,
    /// The zone is served; the data is probably not what the operator meant.
    Warning,
}

/// One finding about a zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Where in the zone file: the line of the record concerned, or the first line of the
    /// name concerned (column 0); only the file for a finding about the zone as a whole;
    /// `None` for records that did not come from a file.
    pub at: Option<Position>,
    /// Error or warning.
    pub severity: Severity,
    /// The owner name concerned, if any.
    pub owner: Option<Name>,
    /// The record type concerned, if any.
    pub rtype: Option<Rtype>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        if let Some(at) = &self.at {
            write!(f, "{at}: ")?;
        }
        write!(f, "{level}: ")?;
        if let Some(owner) = &self.owner {
            write!(f, "{owner} ")?;
        }
        if let Some(rtype) = self.rtype {
            write!(f, "{rtype} ")?;
        }
        f.write_str(&escape_controls(&self.message))
    }
}

/// Most issues of each severity kept in a report (the rest are only counted).
pub const MAX_ISSUES: usize = 1000;

/// The findings and counts of one zone load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    issues: Vec<Issue>,
    /// How many of `issues` are errors and warnings (so that a million duplicate records
    /// do not count the kept issues a million times).
    kept: [usize; 2],
    /// Issues not kept because of the cap on kept issues (`MAX_ISSUES`).
    pub suppressed: usize,
    /// Records loaded (RRSIG and NSEC3 included; duplicates and ignored records not).
    pub records: usize,
    /// Names holding data.
    pub names: usize,
    /// Zone cuts (delegations).
    pub delegations: usize,
    /// Records ignored (out of zone, duplicates).
    pub ignored: usize,
    /// True when the zone has DNSKEY records at the apex.
    pub signed: bool,
}

impl Report {
    /// Records an issue.
    pub fn push(
        &mut self,
        severity: Severity,
        owner: Option<&Dname>,
        rtype: Option<Rtype>,
        message: impl Into<String>,
    ) {
        self.push_at(severity, || None, owner, rtype, message);
    }

    /// Records an issue found at the place `at` gives (asked only if the issue is kept).
    pub fn push_at(
        &mut self,
        severity: Severity,
        at: impl FnOnce() -> Option<Position>,
        owner: Option<&Dname>,
        rtype: Option<Rtype>,
        message: impl Into<String>,
    ) {
        let slot = match severity {
            Severity::Error => 0,
            Severity::Warning => 1,
        };
        let Some(kept) = self.kept.get_mut(slot).filter(|k| **k < MAX_ISSUES) else {
            self.suppressed += 1;
            return;
        };
        *kept += 1;
        let owner = owner.map(Dname::to_name);
        self.issues.push(Issue { at: at(), severity, owner, rtype, message: message.into() });
    }

    /// Records an error.
    pub fn error(
        &mut self,
        owner: Option<&Dname>,
        rtype: Option<Rtype>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Error, owner, rtype, message);
    }

    /// Records a warning.
    pub fn warn(
        &mut self,
        owner: Option<&Dname>,
        rtype: Option<Rtype>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Warning, owner, rtype, message);
    }

    /// All kept issues, in the order found.
    pub fn issues(&self) -> &[Issue] {
        &self.issues
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Issue> + '_ {
        self.issues.iter().filter(|i| i.severity == Severity::Error)
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Issue> + '_ {
        self.issues.iter().filter(|i| i.severity == Severity::Warning)
    }

    /// True when there is at least one error.
    pub fn has_errors(&self) -> bool {
        self.kept.first().is_some_and(|&errors| errors > 0)
    }
}
