//! A primary zone: loaded from its zone file, and on reload loaded again only when the
//! file changed (size or modification time) or the last load failed.
//!
//! A reload whose serial rose becomes a changeset — the difference between the served
//! version and the new one — kept in the history, so secondaries get it by IXFR (what
//! Knot DNS calls `zonefile-load: difference`). A reload with changed content and the
//! same serial is published with a warning (secondaries will not see it: IXFR and SOA
//! checks depend on serials rising, RFC 1995, RFC 1996) and the history starts again;
//! so does a serial that went back.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use tern_zone::records::serial_gt;
use tern_zone::{Changeset, History, HistoryLimits, Loaded, Options, ZoneContents};
use tracing::{error, warn};

use super::writer::Writer;
use super::LoadOutcome;
use crate::config::ZoneSource;
use crate::logging::LoadProgress;

/// What a zone file was when loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceVersion {
    /// A file's size and modification time.
    File { len: u64, modified: Option<SystemTime> },
    /// Text built into the binary.
    Embedded,
}

/// The file's version (`None` when it cannot be read: load, and fail with the reason).
fn version(source: &ZoneSource) -> Option<SourceVersion> {
    match source {
        ZoneSource::File(path) => {
            let meta = std::fs::metadata(path).ok()?;
            Some(SourceVersion::File { len: meta.len(), modified: meta.modified().ok() })
        }
        ZoneSource::Embedded(_) => Some(SourceVersion::Embedded),
    }
}

/// A load's result, computed off the runtime.
struct Built {
    loaded: Loaded,
    /// The change from the served version, when the serial rose.
    change: Option<Changeset>,
    /// The content changed but the serial did not.
    same_serial_changed: bool,
}

impl Writer {
    /// Loads the zone file if it changed; publishes and notifies when the zone did.
    pub async fn load_primary(&mut self) -> LoadOutcome {
        let source = self.plan.source.clone();
        let now_version = version(&source);
        if now_version.is_some() && now_version == self.source && self.current.is_some() {
            let records = self.current.as_ref().map_or(0, |z| z.record_count() as u64);
            return LoadOutcome::Unchanged { records };
        }
        // The first load takes the IXFR history back from the journal.
        let journaled = if self.journal.is_none() { self.open_journal().await } else { Vec::new() };
        let (name, old, limits) = (self.plan.name.clone(), self.current.clone(), self.plan.history);
        let built =
            tokio::task::spawn_blocking(move || build(&name, &source, old.as_deref(), limits))
                .await;
        let built = match built {
            Ok(Ok(built)) => built,
            Ok(Err(why)) => return self.failed(why),
            Err(e) => return self.failed(e.to_string()),
        };
        self.install(built, now_version, journaled).await
    }

    fn failed(&mut self, why: String) -> LoadOutcome {
        let kept = if self.current.is_some() { " (previous contents kept)" } else { "" };
        error!(zone = %self.plan.name, "load failed{kept}: {why}");
        self.source = None;
        LoadOutcome::Failed(why)
    }

    /// Publishes what was built, with its history: the served version's and the change
    /// (journaled first), or — at the first load — what the journal kept.
    async fn install(
        &mut self,
        built: Built,
        version: Option<SourceVersion>,
        journaled: Vec<Changeset>,
    ) -> LoadOutcome {
        let Built { loaded, change, same_serial_changed } = built;
        let mut zone = loaded.contents;
        // No clone of the served version is held here: it must be the writer's last
        // reference when replaced, so that it is freed off this task (`retire`).
        let old_serial = self.current.as_ref().map(|z| z.serial());
        if let Some(change) = &change {
            if let Err(why) = self.journal_append(vec![change.clone()]).await {
                return self.failed(format!("the change could not be journaled: {why}"));
            }
        }
        let restarted = old_serial.is_none() && self.journal.is_some();
        let history = match (&self.current, change) {
            (Some(old), Some(change)) => old.history().push(Arc::new(change), self.plan.history),
            (None, _) => self.journaled_history(&journaled, zone.serial()),
            _ => History::default(),
        };
        if same_serial_changed {
            warn!(zone = %self.plan.name, serial = zone.serial(), "the zone changed but its serial did not: secondaries will not see the change until the serial rises");
        }
        if let Some(previous) = old_serial.filter(|&o| serial_gt(o, zone.serial())) {
            warn!(zone = %self.plan.name, serial = zone.serial(), previous, "the serial went back: secondaries keep the higher one until it passes it");
        }
        let changed = old_serial.is_none_or(|o| o != zone.serial() || same_serial_changed);
        zone.set_history(Arc::new(history));
        let records = zone.record_count() as u64;
        let serial = zone.serial();
        let zone = Arc::new(zone);
        if !self.publish(Arc::clone(&zone)) {
            return LoadOutcome::Failed("not published".into());
        }
        self.source = version;
        if restarted && zone.history().len() != journaled.len() {
            self.rewrite_journal(&zone); // what no longer leads to this version goes
        } else {
            self.compact_if_due(&zone);
        }
        if changed && old_serial.is_some() {
            self.notify_secondaries();
        }
        LoadOutcome::Loaded { serial, records }
    }

    /// The history the journal kept for `serial`: its changes that lead there.
    fn journaled_history(&self, journaled: &[Changeset], serial: u32) -> History {
        let chain = super::journaled::chain_to(journaled, serial);
        if !journaled.is_empty() && chain.is_empty() {
            warn!(zone = %self.plan.name, serial, "the journal does not lead to the zone file's serial (edited while the server was down?): IXFR history starts afresh");
        }
        super::journaled::history_of(chain, self.plan.history)
    }
}

/// Loads the file and compares it with the served version (on a blocking thread).
fn build(
    name: &tern_wire::Name,
    source: &ZoneSource,
    old: Option<&ZoneContents>,
    limits: HistoryLimits,
) -> Result<Built, String> {
    let mut progress = LoadProgress::start(name);
    let options = Options::default();
    let loaded = match source {
        ZoneSource::File(path) => {
            tern_zone::load_file(path, name, &options, &mut |p| progress.update(p.records))
        }
        ZoneSource::Embedded(text) => {
            tern_zone::load_bytes(text.as_bytes(), Path::new("<built-in>"), name, &options)
        }
    };
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            progress.fail(&e);
            return Err(e.to_string());
        }
    };
    progress.finish(loaded.contents.record_count() as u64, loaded.contents.serial());
    log_findings(name, &loaded);
    let mut built = Built { loaded, change: None, same_serial_changed: false };
    if let Some(old) = old {
        let new = &built.loaded.contents;
        let rose = serial_gt(new.serial(), old.serial());
        if rose && limits.max_changes > 0 {
            built.change = old.diff(new);
        } else if new.serial() == old.serial() {
            built.same_serial_changed =
                old.diff(new).is_some_and(|c| !c.removed.is_empty() || !c.added.is_empty());
        }
    }
    Ok(built)
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
