//! A database zone's served version across restarts ([`crate::database`]): its rows
//! say what the zone holds, not which serial it was served with — a change committed
//! from the database raised the serial by the zone's policy, not in the database's SOA
//! row. Without more, a restart would serve the database's serial again, below what
//! secondaries hold, and they would ignore the zone (RFC 1982, RFC 1996 §4.7).
//!
//! So, as a secondary does, a database zone keeps a copy of a served version beside its
//! journal (`<stem>zone` in the storage directory): written after the first load
//! and whenever the journal is compacted, before the journal is rewritten, so that the
//! journal's changes always lead on from it. At a restart the copy with the journal's
//! changes replayed is the version last served, with its IXFR history; the database's
//! rows are then compared with it like at any reload ([`crate::primary`]): unchanged,
//! the same serial and history are served; changed, the difference is committed under
//! a higher serial, so secondaries follow by IXFR across the restart.
//!
//! Without a usable copy (the first start of this version, a copy that could not be
//! written, a damaged journal) what was served is not known exactly: the serial is
//! raised above every serial the journal shows, and the history starts afresh
//! (secondaries then ask for the whole zone, RFC 1995 §4).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tern_wire::Name;
use tern_zone::records::serial_gt;
use tern_zone::{Changeset, ZoneContents};
use tracing::{error, info, warn};

use crate::error::Error;
use crate::plan::ZoneSource;
use crate::writer::Writer;

/// What a database zone served before this start, as its kept copy and journal say.
#[derive(Debug)]
pub enum Before {
    /// Nothing: no journal, no copy.
    Nothing,
    /// This version, with the journal's changes that lead to it (oldest first).
    Served {
        /// The version last served.
        zone: Box<ZoneContents>,
        /// Its history.
        chain: Vec<Changeset>,
    },
    /// Something, up to this serial, but not known exactly.
    Unknown {
        /// The highest serial the journal or copy shows.
        highest: u32,
    },
}

/// Where `zone`'s copy is kept in `storage`.
pub fn copy_path(storage: &Path, zone: &Name) -> PathBuf {
    tern_journal::files::ZoneFiles::new(storage, zone).zone_copy()
}

/// What `zone` served before, from its kept `copy` and the `journaled` changes (blocking);
/// `floor` is set when the journal was damaged.
pub fn before(zone: &Name, copy: &Path, journaled: &[Changeset], floor: Option<u32>) -> Before {
    let journal_end = journaled.last().and_then(Changeset::to_serial);
    let kept = match copy.exists() {
        true => replayed(zone, copy, journaled),
        false => None,
    };
    let served = match kept {
        Some((served, chain))
            if floor.is_none() && journal_end.is_none_or(|e| e == served.serial()) =>
        {
            return Before::Served { zone: Box::new(served), chain };
        }
        Some((served, _)) => Some(served.serial()),
        None => None,
    };
    let serials = journaled.iter().flat_map(|c| [c.from_serial(), c.to_serial()]);
    let highest = serials.chain([served, floor]).flatten().reduce(|a, b| match serial_gt(b, a) {
        true => b,
        false => a,
    });
    match highest {
        Some(highest) => Before::Unknown { highest },
        None => Before::Nothing,
    }
}

/// The copy with the journal's changes that follow it applied, and the changes that
/// lead to the result; `None` (logged) when the copy does not read or they do not apply.
fn replayed(
    zone: &Name,
    copy: &Path,
    journaled: &[Changeset],
) -> Option<(ZoneContents, Vec<Changeset>)> {
    let loaded = tern_zone::load_file(copy, zone, &Default::default(), &mut |_| {});
    let mut served = match loaded {
        Ok(loaded) => loaded.contents,
        Err(e) => {
            error!(zone = %zone, copy = %copy.display(), "the kept copy does not read, the serial is raised instead: {e}");
            return None;
        }
    };
    let after = crate::change::chain_from(journaled, served.serial());
    for change in after {
        if let Err(e) = served.apply_in_place(change) {
            error!(zone = %zone, serial = change.to_serial(), "a journaled change does not apply to the kept copy, the serial is raised instead: {e}");
            return None;
        }
    }
    let chain = crate::change::chain_to(journaled, served.serial()).to_vec();
    if !after.is_empty() {
        info!(zone = %zone, replayed = after.len(), serial = served.serial(), "journal replayed onto the kept copy: the version last served");
    }
    Some((served, chain))
}

/// `zone` (the database's rows) with its serial raised above `highest` by `next`,
/// and the change that raises it (to journal before it is served).
pub fn raise_above(
    zone: &mut ZoneContents,
    highest: u32,
    next: impl FnOnce(u32) -> u32,
) -> Result<Option<Changeset>, Error> {
    if serial_gt(zone.serial(), highest) {
        return Ok(None);
    }
    let (from, serial) = (zone.serial(), next(highest));
    let soa = zone.soa_record().ok_or(Error::NoSoa("the database's zone"))?;
    let raise = Changeset::between(soa.clone(), crate::change::with_serial(&soa, serial)?);
    zone.apply_in_place(&raise)
        .map_err(|why| Error::Apply { what: "the database zone's serial cannot be raised", why })?;
    warn!(zone = %zone.origin(), from, serial, highest, "no kept copy of the version last served (first start with one, or it was lost): the serial is raised above every serial the journal shows, and secondaries transfer the whole zone once");
    Ok(Some(raise))
}

impl Writer {
    /// The path of the zone's kept copy, for a database zone with a storage directory.
    pub fn database_copy_path(&self) -> Option<PathBuf> {
        let ZoneSource::Database(_) = self.plan.source else { return None };
        Some(copy_path(self.shared.storage.as_ref()?, &self.plan.name))
    }

    /// Writes `zone` as a database zone's kept copy (after the zone's earlier disk
    /// writes, before the ones that follow: the journal rewrite that starts from it).
    pub fn keep_database_copy(&mut self, zone: &Arc<ZoneContents>) {
        let Some(path) = self.database_copy_path() else { return };
        let (zone, name) = (Arc::clone(zone), self.plan.name.clone());
        self.store(move || {
            let note = "kept by ternd (the version served from the database; the journal leads on from it)";
            if let Err(e) = crate::storage::write_zone(&path, &zone, note) {
                error!(zone = %name, file = %path.display(), "cannot keep the database zone's copy (a restart raises the serial instead): {e}");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_zone::Options;

    const ZONE: &str =
        "$ORIGIN example.\n@ 60 SOA ns h 5 60 60 600 60\n@ 60 NS ns\nns 60 A 192.0.2.1\n";

    fn zone(serial: u32, extra: &str) -> ZoneContents {
        let text = ZONE.replace(" 5 ", &format!(" {serial} ")) + extra;
        let origin: Name = "example.".parse().unwrap();
        tern_zone::load_bytes(text.as_bytes(), Path::new("<t>"), &origin, &Options::default())
            .unwrap()
            .contents
    }

    fn origin() -> Name {
        "example.".parse().unwrap()
    }

    #[test]
    fn the_copy_with_the_journal_replayed_is_the_version_last_served() {
        let dir = tempfile::tempdir().unwrap();
        let copy = copy_path(dir.path(), &origin());
        let v5 = zone(5, "");
        crate::storage::write_zone(&copy, &v5, "test").unwrap();
        let v6 = zone(6, "www 60 A 192.0.2.6\n");
        let v7 = zone(7, "www 60 A 192.0.2.7\n");
        let (old, c56, c67) = (zone(4, ""), v5.diff(&v6).unwrap(), v6.diff(&v7).unwrap());
        let journaled = vec![old.diff(&v5).unwrap(), c56, c67];
        match before(&origin(), &copy, &journaled, None) {
            Before::Served { zone, chain } => {
                assert_eq!(zone.serial(), 7);
                assert!(zone.diff(&v7).unwrap().added.is_empty(), "the records of 7");
                assert_eq!(chain.len(), 3, "4 → 7: the history before the copy too");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_a_usable_copy_the_highest_serial_shown_is_known() {
        let dir = tempfile::tempdir().unwrap();
        let copy = copy_path(dir.path(), &origin());
        assert!(matches!(before(&origin(), &copy, &[], None), Before::Nothing));
        let journaled = vec![zone(1, "").diff(&zone(9, "")).unwrap()];
        let highest = |b| match b {
            Before::Unknown { highest } => highest,
            other => panic!("{other:?}"),
        };
        assert_eq!(highest(before(&origin(), &copy, &journaled, None)), 9, "no copy");
        crate::storage::write_zone(&copy, &zone(3, ""), "test").unwrap();
        assert_eq!(
            highest(before(&origin(), &copy, &journaled, None)),
            9,
            "a copy the journal does not lead from"
        );
        assert_eq!(highest(before(&origin(), &copy, &[], Some(12))), 12, "a damaged journal");
        std::fs::write(&copy, "not a zone").unwrap();
        assert_eq!(
            highest(before(&origin(), &copy, &journaled, None)),
            9,
            "a copy that does not read"
        );
    }

    #[test]
    fn the_serial_is_raised_above_the_highest_only_when_it_is_not_above_it() {
        let mut rows = zone(1, "");
        let raise = raise_above(&mut rows, 9, |s| s + 1).unwrap().unwrap();
        assert_eq!(
            (rows.serial(), raise.from_serial(), raise.to_serial()),
            (10, Some(1), Some(10))
        );
        assert!(raise_above(&mut rows, 9, |s| s + 1).unwrap().is_none(), "10 is above 9");
    }
}
