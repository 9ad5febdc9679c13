//! A primary zone: loaded from its zone file, and on reload loaded again only when the
//! file changed (size or modification time) or the last load failed.
//!
//! A reload whose serial rose becomes a changeset — the difference between the served
//! version and the new one — kept in the history, so secondaries get it by IXFR (what
//! Knot DNS calls `zonefile-load: difference`). A reload with changed content and the
//! same serial is published with a warning (secondaries will not see it: IXFR and SOA
//! checks depend on serials rising, RFC 1995, RFC 1996) and the history starts again;
//! so does a serial that went back.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use tern_engine::UpdatePolicy;
use tern_zone::records::serial_gt;
use tern_zone::{Changeset, History, HistoryLimits, Loaded, Options, ZoneContents, ZoneFile};
use tracing::{error, info, warn};

use crate::change::with_serial;
use crate::commit::{Change, Notify};
use crate::error::Error;
use crate::event::LoadOutcome;
use crate::listing::Found;
use crate::plan::{ZoneSource, ZonefileSync};
use crate::progress::LoadProgress;
use crate::state::{version, SourceVersion};
use crate::writer::Writer;

/// A load's result, computed off the runtime.
struct Built {
    zone: ZoneContents,
    /// The change from the served version, when the serial rose (or an edit was merged).
    change: Option<Changeset>,
    /// What the zone file holds when that is not `zone` (journaled updates replayed
    /// onto it, or an edit merged into updated data).
    file_holds: Option<ZoneContents>,
    /// An edit of the file merged with updates it lacked: the file must hold the merged
    /// version before the change is journaled (see [`Writer::write_merged`]).
    merged: bool,
    /// The journal's changes (at the first load).
    journaled: Vec<Changeset>,
    /// With `zonefile-sync = "never"`, a merged edit: what the journal holds once it is
    /// committed (one change from the edited file to the merged version).
    rebase: Option<Vec<Changeset>>,
    /// A database zone without a usable kept copy: the copy is written and the journal
    /// starts afresh from this version ([`crate::database_kept`]).
    keep_copy: bool,
}

impl Built {
    /// `zone` as it is: no change, the file holding it, nothing journaled or merged.
    fn of(zone: ZoneContents) -> Built {
        Built {
            zone,
            change: None,
            file_holds: None,
            journaled: Vec::new(),
            merged: false,
            rebase: None,
            keep_copy: false,
        }
    }
}

/// What a load starts from.
struct Base {
    /// The served version.
    old: Option<Arc<ZoneContents>>,
    /// What the zone file held, when updates made the served version differ from it.
    file: Option<Arc<ZoneContents>>,
    /// The journal's changes (at the first load).
    journaled: Vec<Changeset>,
    /// A serial to rise above: the journal was damaged (see `journaled`).
    floor: Option<u32>,
    limits: HistoryLimits,
    policy: UpdatePolicy,
    /// Now (seconds since the epoch), for serials by the time of day.
    now: u64,
    /// `zonefile-sync = "never"`: the file is never written.
    never: bool,
    /// The zone file, opened already (at the first load).
    opened: Option<ZoneFile>,
    /// A database zone's kept copy, at its first load.
    kept: Option<std::path::PathBuf>,
}

impl Writer {
    /// Loads the zone file if it changed; publishes and notifies when the zone did.
    pub async fn load_primary(&mut self) -> LoadOutcome {
        self.reopen_refused_journal().await;
        // The plan's count, not a copy of its path: the build may run on another thread.
        let plan = Arc::clone(&self.plan);
        let (now_version, opened) = match self.current {
            None => first_version(&plan.source),
            Some(_) => (version(&plan.source), None),
        };
        if now_version.is_some() && now_version == self.source && self.current.is_some() {
            let records = self.current.as_ref().map_or(0, |z| z.record_count() as u64);
            return LoadOutcome::Unchanged { records };
        }
        // The first load takes the IXFR history back from the journal, opened on the
        // same blocking thread as the build (one hand-over a zone, not two: 100,000
        // zones load at start and when added together).
        let journal = if self.journal.is_none() { self.journal_path() } else { None };
        let kept = journal.as_ref().and_then(|_| self.database_copy_path());
        let mut base = Base {
            old: self.current.clone(),
            file: self.file_base.clone(),
            journaled: Vec::new(),
            floor: None,
            limits: self.plan.history,
            policy: self.plan.update,
            now: self.now(),
            never: self.plan.zonefile_sync == ZonefileSync::Never,
            kept,
            opened,
        };
        let name = self.plan.name.clone();
        let found = journal.as_deref().map_or(Found::Unknown, |j| self.look_for(j));
        let inline = quick(&plan.source, now_version.as_ref())
            && (journal.is_none() || found != Found::Unknown);
        let work = move || {
            let mut opened = journal
                .map(|path| crate::journaled::open_blocking(&name, &path, true, false, found));
            if let Some(opened) = &mut opened {
                base.journaled = std::mem::take(&mut opened.changes);
                base.floor = opened.floor;
            }
            (opened, build(&name, &plan.source, base))
        };
        let (opened, built) = match inline {
            true => work(),
            false => match tokio::task::spawn_blocking(work).await {
                Ok(done) => done,
                Err(e) => return self.failed(&Error::Task(e)),
            },
        };
        if let Some(opened) = opened {
            self.take_journal(opened); // its changes went to the build
        }
        let built = match built {
            Ok(built) => built,
            Err(why) if self.current.is_none() => {
                // Nothing served yet: the journal is opened again at the next load, whose
                // build needs its changes (a database zone down at start, for one).
                self.journal = None;
                return self.failed(&why);
            }
            Err(why) => return self.failed(&why),
        };
        self.install(built, now_version).await
    }

    /// A journal that refuses changes (it was damaged) is opened again at a reload: an
    /// operator may have dealt with it. Its changes, if any, are not replayed: the
    /// served version stays as it is.
    async fn reopen_refused_journal(&mut self) {
        if self.current.is_none() || self.journal_refused().is_none() {
            return;
        }
        self.journal = None;
        let journaled = self.open_journal().await.0;
        if self.journal_refused().is_none() {
            info!(zone = %self.plan.name, kept = journaled.len(), "journal in use again: changes are accepted");
            self.last_error = None;
        }
    }

    /// Writes a merged version — an edit of the zone file merged with the dynamic
    /// updates the file lacked — to the zone file, before the merge is journaled. The
    /// journal's updates lead from the serial the file had before the edit, which the
    /// edited file no longer has: a crash after the merge were journaled but before the
    /// file held the updates would serve the edit without them. Written first, the file
    /// holds everything; a crash before the journal append serves it, and the journal,
    /// which no longer leads to its serial, is set aside. Returns the version and the
    /// file's new size and time.
    async fn write_merged(
        &mut self,
        zone: ZoneContents,
    ) -> Result<(ZoneContents, Option<SourceVersion>), Error> {
        let source = self.plan.source.clone();
        let ZoneSource::File(path) = source.clone() else { return Ok((zone, version(&source))) };
        let note = "written by ternd: an edit of this file merged with dynamic updates";
        let written = tokio::task::spawn_blocking(move || {
            crate::storage::write_zone(&path, &zone, note).map(|()| zone)
        })
        .await?;
        let zone = written.map_err(|e| {
            Error::NotWritten(format!("{e}: the edit is not merged (the updates stay served)"))
        })?;
        Ok((zone, version(&source)))
    }

    fn failed(&mut self, why: &Error) -> LoadOutcome {
        let kept = if self.current.is_some() { " (previous contents kept)" } else { "" };
        error!(zone = %self.plan.name, "load failed{kept}: {why}");
        self.source = None;
        self.last_error = Some((self.now(), format!("load failed: {why}")));
        LoadOutcome::Failed(why.to_string())
    }

    /// Commits what was built ([`crate::commit`]): the change from the served version
    /// when the serial rose, or — at the first load — the version with what the journal
    /// kept, or a version of its own when the serial did not rise.
    async fn install(&mut self, built: Built, version: Option<SourceVersion>) -> LoadOutcome {
        let Built { zone, change, mut file_holds, journaled, merged, rebase, keep_copy } = built;
        let (zone, version) = match merged {
            false => (zone, version),
            true if rebase.is_some() => (zone, version), // the file is never written
            true => match self.write_merged(zone).await {
                Ok(written) => {
                    file_holds = None; // the file holds what is served now
                    written
                }
                Err(why) => return self.failed(&why),
            },
        };
        // No clone of the served version is held here: it must be the writer's last
        // reference when replaced, so that it is freed off this task (`retire`).
        let old_serial = self.current.as_ref().map(|z| z.serial());
        let restarted = old_serial.is_none() && self.journal.is_some();
        self.warn_serial(old_serial, zone.serial());
        let changed = old_serial.is_none_or(|o| o != zone.serial());
        let raised = old_serial.is_none() && change.is_some();
        let notify = match (changed && old_serial.is_some()) || raised {
            true => Notify::Yes,
            false => Notify::No,
        };
        // A signed zone's file gets the signed version (as Knot DNS writes it): what the
        // file holds, to compare with what the commit publishes.
        let unsigned = self.signer.as_ref().map(|_| (zone.serial(), zone.record_count()));
        let change = self.change_of(zone, change, &journaled);
        let change = match rebase {
            Some(journal) => Change::Rebased { change: Box::new(change), journal },
            None => change,
        };
        let zone = match self.commit(change, notify).await {
            Ok(zone) => zone,
            Err(why) => return self.failed(&why),
        };
        self.source = version;
        self.file_base = file_holds.map(Arc::new);
        if unsigned.is_some_and(|u| u != (zone.serial(), zone.record_count())) {
            // Signing changed what the file holds: written at once, so that a restart
            // finds the signed version and the journal leads from it. Until then the
            // file is taken to hold the signed version, the one served (no copy of the
            // unsigned zone is kept beside it: at a million names, as much memory again
            // as a third of the signed zone): the two differ only by the records the
            // signer makes, which an edit merged meanwhile loses on its way to being
            // signed (they are taken out of every change and made again).
            self.file_base.get_or_insert_with(|| Arc::clone(&zone));
            self.flush_at = Some(self.now());
        }
        if self.file_base.is_some() {
            // The journal alone has what the file lacks: it stays until the file is written.
            self.schedule_flush();
        } else if keep_copy || (restarted && zone.history().len() != journaled.len()) {
            self.rewrite_journal(&zone); // what no longer leads to this version goes
        } else {
            self.compact_if_due(&zone);
        }
        LoadOutcome::Loaded { serial: zone.serial(), records: zone.record_count() as u64 }
    }

    /// What a load changes: the difference from the served version when the serial
    /// rose; at the first load, the version with the history the journal kept (and the
    /// serial's raise after a damaged journal, `change`, to journal); the served
    /// version's history when the file was only touched; none otherwise.
    fn change_of(
        &mut self,
        zone: ZoneContents,
        change: Option<Changeset>,
        journaled: &[Changeset],
    ) -> Change {
        let journal: Vec<Arc<Changeset>> = Vec::new();
        match (&self.current, change) {
            (Some(_), Some(change)) => Change::Built { zone, changes: vec![Arc::new(change)] },
            (None, raise) => {
                let history = self.journaled_history(journaled, zone.serial());
                let journal = raise.map(Arc::new).into_iter().collect();
                Change::Whole { zone, history, journal }
            }
            // Touched, not changed: the history still leads here.
            (Some(old), None) if old.serial() == zone.serial() => {
                let history = old.history().clone();
                Change::Whole { zone, history, journal }
            }
            _ => Change::Whole { zone, history: History::default(), journal },
        }
    }

    fn warn_serial(&self, old: Option<u32>, serial: u32) {
        if let Some(previous) = old.filter(|&o| serial_gt(o, serial)) {
            warn!(zone = %self.plan.name, serial, previous, "the serial went back: secondaries keep the higher one until it passes it");
        }
    }

    /// The history the journal kept for `serial`: its changes that lead there. A journal
    /// that does not lead there (the file edited while the server was down) starts
    /// afresh, and is kept aside first: it may hold updates the edit did not keep.
    fn journaled_history(&mut self, journaled: &[Changeset], serial: u32) -> History {
        let chain = crate::change::chain_to(journaled, serial);
        if !journaled.is_empty() && chain.is_empty() {
            let end = journaled.last().and_then(Changeset::to_serial).unwrap_or(0);
            self.keep_unused_journal(end, serial);
        }
        crate::journaled::history_of(chain, self.plan.history)
    }

    /// Keeps the journal as `<journal>.unused-<time>` (a hard link, made before it is
    /// rewritten). It leads to serial `end`, not to the zone file's `serial`: the updates
    /// it holds beyond what the file was written with are not served, unless the edit
    /// kept them.
    fn keep_unused_journal(&mut self, end: u32, serial: u32) {
        let Some(path) = self.journal_path() else { return };
        let mut kept = path.clone().into_os_string();
        kept.push(format!(".unused-{}", self.now()));
        let kept = std::path::PathBuf::from(kept);
        warn!(zone = %self.plan.name, serial, journal_serial = end, kept = %kept.display(), "the journal does not lead to the zone file's serial (edited while the server was down?): updates it holds that the edit did not keep are not served; the journal is kept aside as it was (delete it once the zone is checked), and IXFR history starts afresh");
        let name = self.plan.name.clone();
        self.store(move || {
            if let Err(e) = std::fs::hard_link(&path, &kept) {
                error!(zone = %name, "the unused journal could not be kept as {}: {e}", kept.display());
            }
        });
    }
}

/// Loads the file and compares it with the served version (on a blocking thread): a
/// plain reload, the first load (with the journal's updates replayed), or an edit
/// merged into updated data.
fn build(name: &tern_wire::Name, source: &ZoneSource, mut base: Base) -> Result<Built, Error> {
    if let ZoneSource::Catalog(members) = source {
        return produced(name, members, base.old.as_deref(), (base.limits, base.now));
    }
    let loaded = load(name, source, base.now, base.opened.take())?;
    if let (ZoneSource::Database(_), None) = (source, &base.old) {
        return database_first(name, loaded, base);
    }
    if let ZoneSource::Script(_) | ZoneSource::Database(_) = source {
        return scripted(base.old.as_deref(), loaded, (base.limits, base.policy, base.now));
    }
    let Base { old, file, journaled, floor, limits, policy, now, never, .. } = base;
    match (old, file) {
        (Some(old), Some(file)) => merge(&old, &file, loaded, (limits, policy, now), never),
        (Some(old), None) => reloaded(&old, loaded, limits),
        (None, _) => {
            let built = replay(loaded, journaled)?;
            match floor {
                Some(floor) => raise_above(built, floor, policy, now),
                None => Ok(built),
            }
        }
    }
}

/// Zone files up to this size load on the writer's own task: read and built in tens of
/// microseconds, less than handing them to a blocking thread and back costs (at a start
/// with a million small zones, those hand-overs were most of the time).
const QUICK_LOAD_MAX: u64 = 16 * 1024;

/// True when a zone file is small enough to load on the writer's task
/// ([`QUICK_LOAD_MAX`], by `version`, read just before). The load runs there if it has
/// no journal to replay either ([`absent`]: a journal may be large).
fn quick(source: &ZoneSource, version: Option<&SourceVersion>) -> bool {
    matches!(
        (source, version),
        (ZoneSource::File(_), Some(SourceVersion::File { len, .. })) if *len <= QUICK_LOAD_MAX
    )
}

impl Writer {
    /// What is known of the zone's journal at `journal` before it is opened: what the
    /// start's listing says ([`crate::listing`]), else whether a file is there (one
    /// `stat`; the journal is then not looked for again as it is opened).
    fn look_for(&self, journal: &Path) -> Found {
        match self.shared.listing.found(journal) {
            Found::Unknown if absent(journal) => Found::NoJournal,
            found => found,
        }
    }
}

/// True when there is no file at `journal`.
fn absent(journal: &Path) -> bool {
    matches!(std::fs::symlink_metadata(journal), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// The version of a zone's source at its first load and, for a zone file, the file
/// opened: its size and time are taken from the open file, so the file is looked up
/// once (a start with a million zones), and the version is the one of the file read.
/// A file that cannot be opened has no version; the load then says why.
fn first_version(source: &ZoneSource) -> (Option<SourceVersion>, Option<ZoneFile>) {
    let ZoneSource::File(path) = source else { return (version(source), None) };
    match ZoneFile::open(path, &Options::default()) {
        Ok(file) => {
            let version = SourceVersion::File { len: file.size(), modified: file.modified() };
            (Some(version), Some(file))
        }
        Err(_) => (None, None),
    }
}

/// A produced catalog: its serial kept while its members are, raised when they change
/// (the first one the time of day, so that a restart never goes back).
fn produced(
    name: &tern_wire::Name,
    members: &[crate::plan::CatalogMember],
    old: Option<&ZoneContents>,
    (limits, now): (HistoryLimits, u64),
) -> Result<Built, Error> {
    let make = |serial: u32| {
        let text = crate::catalog::produce(name, members, serial);
        tern_zone::load_bytes(text.as_bytes(), Path::new("<catalog>"), name, &Options::default())
            .map(|loaded| loaded.contents)
            .map_err(Error::Load)
    };
    let today = u32::try_from(now & u64::from(u32::MAX)).unwrap_or(1);
    let Some(old) = old else {
        return Ok(Built::of(make(today)?));
    };
    let same = make(old.serial())?;
    if old.diff(&same).is_none_or(|c| c.removed.is_empty() && c.added.is_empty()) {
        return reloaded(old, same, limits);
    }
    let next = tern_engine::SerialPolicy::UnixTime.next(old.serial(), now);
    reloaded(old, make(next)?, limits)
}

/// A scripted zone's new version: the script's serial when it rose; else, when the
/// records changed, the served serial raised by the serial policy (a script need not
/// count serials); else the served version's serial, nothing changed.
fn scripted(
    old: Option<&ZoneContents>,
    mut new: ZoneContents,
    (limits, policy, now): (HistoryLimits, UpdatePolicy, u64),
) -> Result<Built, Error> {
    let Some(old) = old else { return Ok(Built::of(new)) };
    if !serial_gt(new.serial(), old.serial()) {
        let changed = old.diff(&new).is_some_and(|c| !c.removed.is_empty() || !c.added.is_empty());
        let serial = if changed { policy.serial.next(old.serial(), now) } else { old.serial() };
        let from = new.soa_record().ok_or(Error::NoSoa("the script's zone"))?;
        let raise = Changeset::between(from.clone(), with_serial(&from, serial)?);
        new.apply_in_place(&raise)
            .map_err(|why| Error::Apply { what: "the script's serial cannot be set", why })?;
    }
    reloaded(old, new, limits)
}

/// A database zone's first load ([`crate::database_kept`]): its rows compared with the
/// version last served, as a reload would be, so that neither the serial nor the IXFR
/// history goes back; without that version, the serial raised above the journal's.
fn database_first(name: &tern_wire::Name, rows: ZoneContents, base: Base) -> Result<Built, Error> {
    use crate::database_kept::{before, raise_above, Before};
    let Base { journaled, floor, limits, policy, now, kept, .. } = base;
    let before = match &kept {
        Some(copy) => before(name, copy, &journaled, floor),
        None => Before::Nothing, // no storage: nothing kept, nothing journaled
    };
    let keep_copy = kept.is_some();
    match before {
        Before::Nothing => Ok(Built { keep_copy, ..Built::of(rows) }),
        Before::Served { zone, mut chain } => {
            let mut built = scripted(Some(&*zone), rows, (limits, policy, now))?;
            chain.extend(built.change.clone());
            built.journaled = chain;
            Ok(built)
        }
        Before::Unknown { highest } => {
            let mut zone = rows;
            let change = raise_above(&mut zone, highest, |s| policy.serial.next(s, now))?;
            Ok(Built { change, keep_copy, ..Built::of(zone) })
        }
    }
}

/// The zone file (or script), loaded and its warnings logged.
fn load(
    name: &tern_wire::Name,
    source: &ZoneSource,
    now: u64,
    opened: Option<ZoneFile>,
) -> Result<ZoneContents, Error> {
    let mut progress = LoadProgress::start(name);
    let options = Options::default();
    let loaded = match source {
        ZoneSource::File(path) => {
            let mut progress = |p: tern_zone::Progress| progress.update(p.records);
            let loaded = match opened {
                Some(file) => tern_zone::load_opened(file, name, &options, &mut progress),
                None => tern_zone::load_file(path, name, &options, &mut progress),
            };
            loaded.map_err(Error::Load)
        }
        ZoneSource::Embedded(text) => {
            tern_zone::load_bytes(text.as_bytes(), Path::new("<built-in>"), name, &options)
                .map_err(Error::Load)
        }
        ZoneSource::Script(script) => crate::script::run(script, name, now),
        ZoneSource::Database(database) => crate::database_load::load(database, name),
        ZoneSource::Catalog(_) => return Err(Error::NoFile),
    };
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            progress.fail(&e);
            return Err(e);
        }
    };
    progress.finish(loaded.contents.record_count() as u64, loaded.contents.serial());
    log_findings(name, &loaded);
    Ok(loaded.contents)
}

/// A reload: the new file's difference from the served version. Changed data under
/// the served serial is refused: secondaries compare serials (RFC 1996 §4.7, RFC 1982)
/// and would keep the old data for ever.
fn reloaded(old: &ZoneContents, new: ZoneContents, limits: HistoryLimits) -> Result<Built, Error> {
    let mut built = Built::of(new);
    let new = &built.zone;
    if serial_gt(new.serial(), old.serial()) && limits.max_changes > 0 {
        built.change = old.diff(new);
    } else if new.serial() == old.serial()
        && old.diff(new).is_some_and(|c| !c.removed.is_empty() || !c.added.is_empty())
    {
        return Err(Error::SerialNotRaised(new.serial()));
    }
    Ok(built)
}

/// The first load: the journal's changes that follow the file's serial (dynamic
/// updates not yet written to the file) applied in order. A change that no longer
/// applies (the file was edited while the server was down, its serial left alone) is
/// merged instead: what it removes that is gone, or adds that is there, is left out.
fn replay(file: ZoneContents, journaled: Vec<Changeset>) -> Result<Built, Error> {
    let after = crate::journaled::chain_after(&journaled, file.serial());
    if after.is_empty() {
        return Ok(Built { journaled, ..Built::of(file) });
    }
    let mut zone = file.clone();
    let mut applied: Vec<Cow<'_, Changeset>> = Vec::with_capacity(after.len());
    for change in after {
        let Err(e) = zone.apply_in_place(change) else {
            applied.push(Cow::Borrowed(change));
            continue;
        };
        warn!(zone = %zone.origin(), serial = change.to_serial(), "a journaled update does not apply to the zone file as it is (edited while the server was down?), merged instead: {e}");
        zone = reapply(&file, &applied)?; // the failed change may have left it half done
        let soa = change.soa_to.clone().ok_or(Error::NoSoa("a journaled change"))?;
        let merged = zone.rebase(change, soa).ok_or(Error::NoSoa("the zone file"))?;
        zone.apply_in_place(&merged).map_err(|why| Error::Apply {
            what: "the journal's updates do not apply to the zone file",
            why,
        })?;
        applied.push(Cow::Owned(merged));
    }
    if !after.is_empty() {
        info!(zone = %zone.origin(), replayed = after.len(), from = file.serial(), serial = zone.serial(), "journal replayed: updates not yet in the zone file");
    }
    let file_holds = (!after.is_empty()).then_some(file);
    Ok(Built { file_holds, journaled, ..Built::of(zone) })
}

/// `file` with `changes`, which applied to it before, applied again.
fn reapply(file: &ZoneContents, changes: &[Cow<'_, Changeset>]) -> Result<ZoneContents, Error> {
    let mut zone = file.clone();
    for change in changes {
        zone.apply_in_place(change).map_err(|why| Error::Apply {
            what: "journaled updates applied once do not apply again",
            why,
        })?;
    }
    Ok(zone)
}

/// After a damaged journal (see `journaled`): the serial raised above `floor`, the
/// highest the journal showed, and above what the replay reached, so that the served
/// serial never goes back and secondaries see that the data changed. The raise is a
/// change of its own (the SOA alone), journaled before it is published; the zone file
/// is written with it later.
fn raise_above(
    mut built: Built,
    floor: u32,
    policy: UpdatePolicy,
    now: u64,
) -> Result<Built, Error> {
    let served = built.zone.serial();
    let above = if serial_gt(floor, served) { floor } else { served };
    let serial = policy.serial.next(above, now);
    let from = built.zone.soa_record().ok_or(Error::NoSoa("the zone file"))?;
    let to = with_serial(&from, serial)?;
    let change = Changeset::between(from, to);
    let file = built.file_holds.take().unwrap_or_else(|| built.zone.clone());
    built.zone.apply_in_place(&change).map_err(|why| Error::Apply {
        what: "the serial cannot be raised after the journal's damage",
        why,
    })?;
    warn!(zone = %built.zone.origin(), from = served, serial, highest_in_journal = floor, "serial raised above every serial the damaged journal shows");
    built.journaled.push(change.clone());
    built.change = Some(change);
    built.file_holds = Some(file);
    Ok(built)
}

/// An edit of the zone file merged into a version that took updates since the file
/// was read (`ZoneContents::rebase`): the serial is the file's when it is higher than
/// the served one, else the served one raised by the serial policy. With `never` (the
/// file is not written, so it lacks the updates the merged version keeps) the serial
/// is always raised above both: the journal leads from the file's to it.
fn merge(
    current: &ZoneContents,
    file: &ZoneContents,
    edited: ZoneContents,
    (limits, policy, now): (HistoryLimits, UpdatePolicy, u64),
    never: bool,
) -> Result<Built, Error> {
    if std::ptr::eq(file, current) && !never {
        // The file is taken to hold the served version itself (a signed zone whose
        // file is being written with it): nothing to merge, a plain reload.
        return reloaded(current, edited, limits);
    }
    let edit = file.diff(&edited).ok_or(Error::NoSoa("the zone file"))?;
    if edit.removed.is_empty() && edit.added.is_empty() && edit.soa_to == edit.soa_from {
        // Touched, not changed.
        return Ok(Built { file_holds: Some(edited), ..Built::of(current.clone()) });
    }
    let soa = edited.soa_record().ok_or(Error::NoSoa("the zone file"))?;
    let higher = serial_gt(edited.serial(), current.serial());
    let serial = match (higher, never) {
        (true, false) => edited.serial(),
        (true, true) => policy.serial.next(edited.serial(), now),
        (false, _) => policy.serial.next(current.serial(), now),
    };
    let merged = current
        .rebase(&edit, with_serial(&soa, serial)?)
        .ok_or(Error::NoSoa("the served version"))?;
    let (zone, _) = current
        .apply(&merged)
        .map_err(|why| Error::Apply { what: "the edit does not merge with the updates", why })?;
    info!(zone = %current.origin(), serial, removed = merged.removed.len(), added = merged.added.len(), "zone file edit merged with the dynamic updates");
    let change = (limits.max_changes > 0).then_some(merged);
    let rebase = never.then(|| edited.diff(&zone).into_iter().collect());
    Ok(Built { change, file_holds: Some(edited), merged: true, rebase, ..Built::of(zone) })
}

/// Logs the warnings of a successful load (errors refuse the zone and are in the error).
fn log_findings(zone: &tern_wire::Name, loaded: &Loaded) {
    for w in &loaded.parse.warnings {
        warn!(zone = %zone, "{}: {}", w.at, w.message);
    }
    for issue in loaded.report.warnings() {
        warn!(zone = %zone, "{issue}");
    }
    let dropped = loaded.parse.warnings_dropped + loaded.report.suppressed as u64;
    if dropped > 0 {
        warn!(zone = %zone, "{dropped} more warnings not shown");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::load;

    const ZONE: &str = "$ORIGIN example.\n$TTL 300\n@ SOA ns h 7 60 60 600 60\n@ NS ns\n\
                        ns A 192.0.2.1\n";

    fn settings() -> (HistoryLimits, UpdatePolicy, u64) {
        (HistoryLimits::default(), UpdatePolicy::default(), 1_000)
    }

    /// A file taken to hold the served version itself (a signed zone whose file is
    /// being written with it): an edit is a plain reload of the served version, not a
    /// merge — the edited file is the new version, nothing written first.
    #[test]
    fn an_edit_of_a_file_that_holds_the_served_version_is_a_plain_reload() {
        let served = load("example.", ZONE);
        let edited = load("example.", &ZONE.replace(" 7 ", " 8 ").replace("ns A", "www A"));
        let built = merge(&served, &served, edited, settings(), false).unwrap();
        assert!(!built.merged && built.file_holds.is_none());
        assert_eq!(built.zone.serial(), 8);
        let change = built.change.expect("the serial rose: the difference");
        assert_eq!((change.removed.len(), change.added.len()), (1, 1));
    }

    /// A file that holds an older version than the one served: its edit is merged with
    /// what was served since.
    #[test]
    fn an_edit_of_a_file_behind_the_served_version_is_merged() {
        let file = load("example.", ZONE);
        let served = load("example.", &format!("{}www A 192.0.2.2\n", ZONE.replace(" 7 ", " 9 ")));
        let edited = load("example.", &format!("{ZONE}mail A 192.0.2.3\n"));
        let built = merge(&served, &file, edited, settings(), false).unwrap();
        assert!(built.merged);
        let mut owners = Vec::new();
        built.zone.for_each_record(|owner, _, _, _| owners.push(owner.to_string()));
        for name in ["www.example.", "mail.example."] {
            assert!(owners.iter().any(|o| o == name), "{name} in {owners:?}");
        }
    }
}
