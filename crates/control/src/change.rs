//! What a change to a zone is, as its source hands it to the commit function
//! ([`crate::commit`]): changesets, a version built from the served one, a whole new
//! version, or one after which the journal is replaced — and whether secondaries are
//! told.

use std::sync::Arc;

use tern_zone::records::with_soa_serial;
use tern_zone::{Changeset, History, RecordData, ZoneContents};

use crate::error::Error;

/// A change to a zone, as its source has it.
#[derive(Debug)]
pub enum Change {
    /// Changesets to apply in order to the served version (a transaction, a PATCH, a
    /// reload's difference, an edit merged with updates).
    Apply(Vec<Changeset>),
    /// Changesets the signer made (a signature refresh, new keys: [`crate::signer`]),
    /// applied in order as they are: the sign step leaves them alone.
    Signed(Vec<Changeset>),
    /// A version built from the served one, and the changes that lead there: an UPDATE
    /// batch (each update judged against the version the one before it left), an IXFR
    /// (applied as it was checked).
    Built {
        /// The new version.
        zone: ZoneContents,
        /// What leads there, in order.
        changes: Vec<Arc<Changeset>>,
    },
    /// A whole new version with the history it starts with: an AXFR, a reload whose
    /// serial did not rise (or that only touched the file), the first load of a zone
    /// (its history from the journal). `journal`: changes to append before it is
    /// published (the serial raised after a damaged journal).
    Whole {
        /// The new version.
        zone: ZoneContents,
        /// Its IXFR history.
        history: History,
        /// Changes the journal does not hold yet.
        journal: Vec<Arc<Changeset>>,
    },
    /// Another change, after which the journal holds `journal` alone (replaced, not
    /// appended to): with `zonefile-sync = "never"`, an edit of the zone file merged
    /// with updates the file lacks, whose journal must lead from the edited file (its
    /// new serial) to the merged version.
    Rebased {
        /// The change that makes the version.
        change: Box<Change>,
        /// What the journal holds once it is committed.
        journal: Vec<Changeset>,
    },
}

/// Whether a commit tells the secondaries (RFC 1996).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notify {
    /// Send NOTIFY once published.
    Yes,
    /// Do not (a zone's first load: its secondaries are told by their own timers).
    No,
}

/// `soa` with `serial`: the SOA a change leads to when it raises the serial.
pub(crate) fn with_serial(soa: &RecordData, serial: u32) -> Result<RecordData, Error> {
    let rdata = with_soa_serial(&soa.rdata, serial).ok_or(Error::NoSoa("a malformed SOA"))?;
    Ok(RecordData { rdata, ..soa.clone() })
}

/// The changes that lead to `serial`, oldest first: the longest run at the journal's end
/// in which each starts where the one before ended.
pub fn chain_to(changes: &[Changeset], serial: u32) -> &[Changeset] {
    if changes.last().and_then(Changeset::to_serial) != Some(serial) {
        return &[];
    }
    let mut start = changes.len().saturating_sub(1);
    while start > 0 {
        let (Some(before), Some(after)) = (changes.get(start - 1), changes.get(start)) else {
            break;
        };
        if before.to_serial().is_none() || before.to_serial() != after.from_serial() {
            break;
        }
        start -= 1;
    }
    changes.get(start..).unwrap_or(&[])
}

/// The changes that follow `serial`, in order: from the one that starts there, as long
/// as each starts where the one before ended.
pub fn chain_from(changes: &[Changeset], serial: u32) -> &[Changeset] {
    let Some(start) = changes.iter().position(|c| c.from_serial() == Some(serial)) else {
        return &[];
    };
    let mut end = start + 1;
    while let (Some(before), Some(after)) = (changes.get(end - 1), changes.get(end)) {
        if before.to_serial() != after.from_serial() {
            break;
        }
        end += 1;
    }
    changes.get(start..end).unwrap_or(&[])
}
