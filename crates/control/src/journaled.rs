//! A zone's journal in its writer (`tern_journal`): every change — a primary's reload
//! difference, a secondary's IXFR — is appended and synced before it is published, and
//! the journal is replayed at start-up, so what was served survives a crash and the IXFR
//! history survives a restart.
//!
//! * A primary replays only the history: its zone file is the source of the data, so
//!   the journal's changes that lead to the file's serial become the history again
//!   (a journal that does not lead there — the file was edited while the server was
//!   down — starts afresh, kept aside first as `<journal>.unused-<time>`).
//! * A secondary replays the changes that follow its kept copy: the copy is written
//!   only now and then (compaction), the journal after every change.
//! * Compaction: once the journal holds twice what the history keeps, it is rewritten
//!   with the history alone (a secondary first writes its zone file). The rewrite runs
//!   after the zone's earlier disk writes, off the writer's path, and keeps the changes
//!   appended after it was decided (`Journal::rewrite_since`).
//! * Damage ([`open_blocking`]): a torn tail (the last write, cut by a crash, never
//!   acknowledged) is cut off. Corruption in the middle (a flipped bit) is never cut
//!   away: the file is kept aside as `<journal>.damaged`, the intact changes before it
//!   are kept, and a primary's serial is raised above every serial the journal shows,
//!   so that it never goes back. A journal that cannot be read at all is set aside
//!   too; then a primary refuses every change (UPDATE SERVFAIL, commits and PATCH
//!   refused) until an operator has checked it and removed the set-aside file — its
//!   changes are unknown, so a change now could not be numbered above them — and a
//!   secondary starts a new journal and is transferred again.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tern_journal::{Journal, Opened};
use tern_wire::Name;
use tern_zone::{Changeset, History, HistoryLimits, ZoneContents};
use tracing::{debug, error, info, warn};

use crate::change::chain_to;
use crate::counters::control::control;
use crate::state::SharedJournal;

/// A journal shared between the writer and its disk writes (see [`SharedJournal`]).
pub type Shared = SharedJournal;
use crate::error::Error;
use crate::listing::Found;
use crate::writer::Writer;

/// Where a zone's journal is kept (named by `tern_journal::files`, which cannot leave
/// `storage` nor give two zones one file).
pub fn path(storage: &Path, zone: &tern_wire::Name) -> PathBuf {
    tern_journal::files::ZoneFiles::new(storage, zone).journal()
}

/// A zone's journal as opened for its writer.
#[derive(Debug)]
pub struct OpenedJournal {
    /// The journal (one that refuses changes when it could not be used).
    pub journal: Journal,
    /// Its intact changes.
    pub changes: Vec<Changeset>,
    /// A serial the zone must be raised above: the journal was damaged, and changes
    /// up to this serial may have been served that are not kept.
    pub floor: Option<u32>,
}

/// Opens `zone`'s journal at `path` (blocking), dealing with damage as the module
/// comment says; `primary` for a primary zone. Files an earlier version named after
/// the zone as written are taken over first (see `tern_journal::files`; with
/// `default_copy`, the kept copy too). `found`: what the caller knows is not there
/// (at a start, the files are looked for once: [`crate::listing`]). Everything done is
/// logged.
pub fn open_blocking(
    zone: &Name,
    path: &Path,
    primary: bool,
    default_copy: bool,
    mut found: Found,
) -> OpenedJournal {
    if let Some(dir) = path.parent() {
        let files = tern_journal::files::ZoneFiles::new(dir, zone);
        for (old, new) in files.adopt_legacy(zone, default_copy) {
            if new == path {
                found = Found::Unknown; // a journal taken over is there now
            }
            info!(zone = %zone, from = %old.display(), to = %new.display(), "file renamed to the name this version gives it");
        }
    }
    let aside = match found {
        Found::Nothing => None,
        Found::NoJournal => tern_journal::set_aside_beside(path),
        Found::Unknown => tern_journal::set_aside_before(path),
    };
    if let Some(aside) = aside.filter(|_| primary) {
        let why = format!("a damaged journal was set aside as {}: changes are refused until it is checked and removed (then `ternctl zone-reload {zone}`)", aside.display());
        error!(zone = %zone, "{why}");
        return refusing(path, why);
    }
    match found {
        Found::NoJournal | Found::Nothing => opened_journal(zone, Journal::open_absent(path)),
        Found::Unknown => match Journal::open(path) {
            Ok(opened) => opened_journal(zone, opened),
            Err(e) => unreadable(zone, path, primary, &e),
        },
    }
}

/// An opened journal, its torn tail or damage logged.
fn opened_journal(zone: &Name, opened: Opened) -> OpenedJournal {
    if let Some(dropped) = &opened.dropped {
        warn!(zone = %zone, "journal: {dropped}");
    }
    let floor = opened.damaged.as_ref().map(|damaged| {
        error!(zone = %zone, aside = %damaged.aside.display(), kept = opened.changes.len(), left_out = damaged.later, highest_serial = damaged.highest_serial.unwrap_or(0), "JOURNAL DAMAGED ({}): the intact changes before the damage are kept, the file as it was is kept aside; changes after the damage are NOT served (check the set-aside file); the serial is raised above every serial the journal shows", damaged.why);
        damaged.highest_serial.unwrap_or(0)
    });
    OpenedJournal { journal: opened.journal, changes: opened.changes, floor }
}

/// A journal that could not be read: set aside; a primary refuses changes, a secondary
/// starts afresh.
fn unreadable(zone: &Name, path: &Path, primary: bool, e: &tern_journal::Error) -> OpenedJournal {
    let aside = match tern_journal::set_aside(path) {
        Ok(aside) => aside,
        Err(e2) => {
            let why = format!(
                "the journal cannot be read ({e}) nor set aside ({e2}): changes are refused"
            );
            error!(zone = %zone, "{why}");
            return refusing(path, why);
        }
    };
    if primary {
        let why = format!("the journal cannot be read ({e}); it was set aside as {}: changes are refused until it is checked and removed (then `ternctl zone-reload {zone}`)", aside.display());
        error!(zone = %zone, "{why}");
        return refusing(path, why);
    }
    error!(zone = %zone, aside = %aside.display(), "the journal cannot be read ({e}); it was set aside, a new one is started and the zone is transferred again");
    match Journal::open(path) {
        Ok(opened) => opened_journal(zone, opened),
        Err(e) => refusing(path, format!("a new journal cannot be started: {e}")),
    }
}

fn refusing(path: &Path, why: String) -> OpenedJournal {
    OpenedJournal { journal: Journal::refusing(path, why), changes: Vec::new(), floor: None }
}

/// The changes that follow `serial` and lead to the journal's end: a primary's dynamic
/// updates that its zone file (at `serial`) does not hold yet.
pub fn chain_after(changes: &[Changeset], serial: u32) -> &[Changeset] {
    let Some(end) = changes.last().and_then(Changeset::to_serial) else { return &[] };
    let run = chain_to(changes, end);
    match run.iter().position(|c| c.from_serial() == Some(serial)) {
        Some(start) => run.get(start..).unwrap_or(&[]),
        None => &[],
    }
}

/// Appends `changes` (plain or shared) to `journal` and syncs them (blocking); `Err`
/// says why they must not be published.
pub fn append<C: std::borrow::Borrow<Changeset>>(
    journal: &Shared,
    zone: &str,
    changes: &[C],
) -> Result<(), Error> {
    // A poisoned lock: a panic in another write left the journal as that write did,
    // which the journal's own error handling copes with.
    let mut journal = journal.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let appended = journal.append(changes);
    control().journal_size(zone, journal.len());
    Ok(appended?)
}

/// Replaces what `journal` holds by `changes` (atomically, synced; blocking); `Err`
/// says why the version they lead to must not be published.
pub fn replace(journal: &Shared, zone: &str, changes: &[Changeset]) -> Result<(), Error> {
    let mut journal = journal.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let replaced = journal.rewrite(changes);
    control().journal_size(zone, journal.len());
    Ok(replaced?)
}

/// The history holding `changes`, bounded by `limits`.
pub fn history_of(changes: &[Changeset], limits: HistoryLimits) -> History {
    changes.iter().fold(History::default(), |h, c| h.push(Arc::new(c.clone()), limits))
}

impl Writer {
    /// Lets go of the journal's file while the writer waits with nothing to do (it is
    /// kept open while updates stream in, see `tern_journal`). Skipped when a disk
    /// write holds the journal: the writer never waits for one.
    pub fn release_journal(&self) {
        if let Some(mut journal) = self.journal.as_ref().and_then(|j| j.try_lock().ok()) {
            journal.release();
        }
    }

    /// Opens the zone's journal (at the first load); returns its changes and the floor
    /// its serial must rise above (see [`open_blocking`]).
    pub async fn open_journal(&mut self) -> (Vec<Changeset>, Option<u32>) {
        let Some(path) = self.journal_path() else { return (Vec::new(), None) };
        let (name, primary) = (self.plan.name.clone(), self.is_primary());
        let default_copy = self.plan.source
            == crate::plan::ZoneSource::File(
                tern_journal::files::ZoneFiles::new(path.parent().unwrap_or(&path), &name)
                    .zone_copy(),
            );
        let open = move || open_blocking(&name, &path, primary, default_copy, Found::Unknown);
        match tokio::task::spawn_blocking(open).await {
            Ok(opened) => {
                let floor = opened.floor;
                (self.take_journal(opened), floor)
            }
            Err(_) => (Vec::new(), None),
        }
    }

    /// True for a primary zone (its journal's damage refuses changes).
    pub fn is_primary(&self) -> bool {
        matches!(self.plan.role, crate::plan::Role::Primary)
    }

    /// Where the zone's journal is, when it has one (not for embedded zones and
    /// produced catalogs and scripted zones, which are made anew at every start, nor
    /// without a storage directory).
    pub fn journal_path(&self) -> Option<std::path::PathBuf> {
        let storage = self.shared.storage.as_ref()?;
        use crate::plan::ZoneSource;
        if matches!(
            self.plan.source,
            ZoneSource::Embedded(_) | ZoneSource::Catalog(_) | ZoneSource::Script(_)
        ) {
            return None;
        }
        Some(path(storage, &self.plan.name))
    }

    /// Keeps the journal [`open_blocking`] gave; its changes.
    pub fn take_journal(&mut self, opened: OpenedJournal) -> Vec<Changeset> {
        control().journal_size_of(&self.plan.name, opened.journal.len());
        if let Some(why) = opened.journal.refused() {
            self.last_error = Some((self.now(), why.to_owned()));
        }
        self.journal = Some(Arc::new(Mutex::new(opened.journal)));
        opened.changes
    }

    /// Why the zone's changes are refused, when its journal could not be used.
    pub fn journal_refused(&self) -> Option<String> {
        let journal = self.journal.as_ref()?.lock().ok()?;
        journal.refused().map(str::to_owned)
    }

    /// True when the journal holds twice the changesets the history keeps and is about
    /// as large as the zone (or, whatever the zone, twice the history's bytes). A
    /// compaction writes the whole zone first, so its cost is spread over changes worth
    /// as many bytes: with a change per update, compacting every `2 × ixfr-history`
    /// changes would write a large zone's file many times a second. And it must have
    /// doubled since the last compaction, which may have left it large (with
    /// `zonefile-sync = "never"`, the whole difference from the zone file).
    pub fn compaction_due(&self) -> bool {
        let limits = self.plan.history;
        let zone_bytes = self.current.as_ref().map_or(0, |z| z.record_count() * BYTES_PER_RECORD);
        self.journal.as_ref().is_some_and(|j| {
            j.lock().is_ok_and(|j| {
                let len = j.len() as usize;
                let due = (j.frames() as usize > limits.max_changes.max(1) * 2
                    && len > zone_bytes.max(MIN_COMPACTED))
                    || len > limits.max_bytes.saturating_mul(2);
                // What the last compaction left (with `zonefile-sync = "never"`, the whole
                // difference from the zone file) must have doubled first: a compaction
                // costs about that much, and would not make the journal smaller.
                due && len > (j.rewritten_len() as usize).saturating_mul(2)
            })
        })
    }

    /// Rewrites the journal with `zone`'s history once it is due (a primary: its zone
    /// file holds the data, the journal only the history).
    pub fn compact_if_due(&mut self, zone: &Arc<ZoneContents>) {
        if self.compaction_due() {
            self.rewrite_journal(zone);
        }
    }

    /// Rewrites the journal with `zone`'s history alone (after a snapshot of `zone`, the
    /// version the journal leads to now). The rewrite waits for the zone's earlier disk
    /// writes (the snapshot among them); the changes appended meanwhile are kept.
    pub fn rewrite_journal(&mut self, zone: &Arc<ZoneContents>) {
        self.keep_database_copy(zone); // a database zone's journal leads on from its copy
        self.rewrite_journal_with(zone, |zone| history_changes(zone.history()));
    }

    /// With `zonefile-sync = "never"`: rewrites the journal with one change, from what
    /// the zone file holds to `zone` (the version the journal leads to now), so that
    /// it stays about as large as what the file lacks; the IXFR history it held is not
    /// kept (the served version's stays in memory). A start-up replays it onto the file.
    pub fn rebase_journal(&mut self, zone: &Arc<ZoneContents>) {
        let Some(file) = self.file_base.clone() else { return self.rewrite_journal(zone) };
        self.rewrite_journal_with(zone, move |zone| file.diff(zone).into_iter().collect());
    }

    /// Rewrites the journal with what `changes` makes of `zone` (on the zone's disk
    /// thread, after its earlier writes), keeping what is appended meanwhile.
    fn rewrite_journal_with(
        &mut self,
        zone: &Arc<ZoneContents>,
        changes: impl FnOnce(&ZoneContents) -> Vec<Changeset> + Send + 'static,
    ) {
        let Some(journal) = self.journal.clone() else { return };
        let Ok(mark) = journal.lock().map(|j| j.mark()) else { return };
        let (zone, name) = (Arc::clone(zone), self.plan.name.clone());
        let rewrite = move || {
            let changes = changes(&zone);
            let rewritten = journal.lock().map(|mut j| (j.rewrite_since(&changes, mark), j.len()));
            match rewritten {
                Ok((Ok(()), len)) => {
                    control().journal_size_of(&name, len);
                    info!(zone = %name, kept = changes.len(), "journal compacted");
                }
                Ok((Err(tern_journal::Error::StaleMark), _)) => {
                    debug!(zone = %name, "journal compaction skipped: rewritten since it was decided");
                }
                Ok((Err(e), _)) => error!(zone = %name, "journal not compacted: {e}"),
                Err(_) => error!(zone = %name, "journal lock poisoned"),
            }
        };
        self.store(rewrite);
    }
}

/// A zone's size in bytes, about, for [`Writer::compaction_due`]: a record in a zone
/// file or a journal frame takes at least this much.
const BYTES_PER_RECORD: usize = 32;

/// A journal smaller than this is never compacted for its length in changesets.
const MIN_COMPACTED: usize = 1 << 20;

/// The changesets a history holds, oldest first.
fn history_changes(history: &History) -> Vec<Changeset> {
    history.iter().map(|c| (**c).clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::chain_from;
    use tern_wire::{rdata, Rtype};
    use tern_zone::RecordData;

    fn change(from: u32, to: u32) -> Changeset {
        let soa = |s: u32| {
            let text = format!("ns.example. h.example. {s} 60 60 600 60");
            RecordData {
                owner: "example.".parse().unwrap(),
                rtype: Rtype::SOA,
                ttl: 60,
                rdata: rdata::parse_str(Rtype::SOA, &text, None).unwrap(),
            }
        };
        Changeset::between(soa(from), soa(to))
    }

    #[test]
    fn chains_to_and_from_a_serial() {
        let changes = vec![change(1, 2), change(5, 6), change(6, 7), change(7, 8)];
        assert_eq!(chain_to(&changes, 8).len(), 3, "5 → 8, not past the gap");
        assert!(chain_to(&changes, 7).is_empty(), "the journal does not end at 7");
        assert_eq!(chain_from(&changes, 6).len(), 2, "6 → 8");
        assert_eq!(chain_from(&changes, 1).len(), 1, "1 → 2, then a gap");
        assert!(chain_from(&changes, 3).is_empty());
        assert_eq!(chain_after(&changes, 6).len(), 2, "6 → 8, the journal's end");
        assert!(chain_after(&changes, 1).is_empty(), "1 → 2 does not lead to the end");
        assert!(chain_after(&changes, 8).is_empty(), "nothing after the end");
        let history = history_of(chain_to(&changes, 8), HistoryLimits::default());
        assert_eq!((history.len(), history.first_serial()), (3, Some(5)));
        assert_eq!(history_changes(&history).len(), 3);
    }
}
