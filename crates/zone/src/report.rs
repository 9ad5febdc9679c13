//! What loading a zone found: semantic errors (the zone is refused), warnings (the zone
//! is served, the operator should look) and summary counts.

use std::fmt;

use tern_wire::{Dname, Name, Rtype};

use crate::error::escape_controls;

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
    /// Issues not kept because of [`MAX_ISSUES`].
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
        self.issues.push(Issue { severity, owner, rtype, message: message.into() });
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
