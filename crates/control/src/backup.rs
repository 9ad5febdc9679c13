//! `zone-backup` and `zone-restore`: a zone's served data, and its journal as it stood,
//! copied into a directory the operator names; and the data of such a directory made
//! the served version again.
//!
//! A backup is taken by the zone's writer between two changes, so its files agree:
//! `<stem>.zone`, the served version as a zone file (any server reads it), and
//! `<stem>.journal`, a copy of the journal up to its last synced change (the IXFR
//! history, and the changes a zone file with `zonefile-sync = "never"` lacks; kept for
//! the record: a restore reads the zone file alone). `<stem>` is the zone's name as
//! storage spells it ([`tern_journal::files::stem`]). Each file is written atomically
//! (written beside, synced, renamed, the directory synced), and a backup already in the
//! directory is never overwritten.
//!
//! A restore is a change like any other ([`crate::commit`]): on a primary, the
//! difference between the served version and the backup's, journaled and sent to the
//! secondaries by IXFR, under a serial that never goes back (the backup's when it is
//! higher, else the served one raised by the zone's serial policy, as an update
//! raises it); on a secondary, the backup's version whole, only when it is newer than
//! the served one (a secondary's serial is its primary's), and a refresh at once.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tern_engine::UpdatePolicy;
use tern_journal::files::stem;
use tern_wire::Name;
use tern_zone::records::{serial_gt, with_soa_serial};
use tern_zone::{Changeset, History, ZoneContents};
use tracing::info;

use crate::change::with_serial;
use crate::commit::{Change, Notify};
use crate::error::{Error, Result};
use crate::event::Outcome;
use crate::plan::{Role, ZoneSource};
use crate::state::SharedJournal;
use crate::storage;
use crate::writer::Writer;

/// Where a zone's backup lives in a backup directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupFiles {
    /// The served version, as a zone file.
    pub zone: PathBuf,
    /// The journal's copy.
    pub journal: PathBuf,
}

impl BackupFiles {
    /// The files of `zone`'s backup in `dir`, which must be an absolute path (the
    /// server's working directory is nobody's business).
    pub fn new(dir: &Path, zone: &Name) -> Result<BackupFiles> {
        if !dir.is_absolute() {
            return Err(Error::Backup(format!("{}: give an absolute path", dir.display())));
        }
        let stem = stem(zone);
        Ok(BackupFiles {
            zone: dir.join(format!("{stem}zone")),
            journal: dir.join(format!("{stem}journal")),
        })
    }
}

impl Writer {
    /// Writes the served version and the journal's copy into `dir` (see the module
    /// comment).
    pub async fn backup(&mut self, dir: PathBuf) -> Outcome {
        let files = BackupFiles::new(&dir, &self.plan.name)?;
        let zone = self.current.clone().ok_or(Error::NothingServed)?;
        let journal = self.journal.clone();
        let note = format!("backup by ternd at {} (unix time)", self.now());
        let serial = zone.serial();
        let dir_text = dir.display().to_string();
        let written = tokio::task::spawn_blocking(move || {
            write_backup(&dir, &files, &zone, journal.as_ref(), &note)
        })
        .await??;
        let journal = match written {
            Some(bytes) => format!(", journal {bytes} bytes"),
            None => String::new(),
        };
        info!(zone = %self.plan.name, serial, dir = %dir_text, "backup written");
        Ok(format!("backed up serial {serial}{journal} in {dir_text}"))
    }

    /// Serves the backup's data in `dir` again (see the module comment).
    pub async fn restore(&mut self, dir: PathBuf) -> Outcome {
        if self.frozen {
            return Err(Error::Frozen);
        }
        if matches!(self.plan.source, ZoneSource::Catalog(_)) {
            return Err(Error::Backup("a produced catalog is made from its members".into()));
        }
        let files = BackupFiles::new(&dir, &self.plan.name)?;
        let name = self.plan.name.clone();
        let backup = tokio::task::spawn_blocking(move || read_backup(&name, &files.zone)).await??;
        match self.plan.role {
            Role::Primary => self.restore_primary(backup).await,
            Role::Secondary(_) => self.restore_secondary(backup).await,
        }
    }

    /// A primary commits the difference to the backup's data, its serial raised when
    /// it would not rise.
    async fn restore_primary(&mut self, backup: ZoneContents) -> Outcome {
        let (policy, now) = (self.plan.update, self.now());
        let from = self.current.as_ref().ok_or(Error::NothingServed)?.serial();
        let file_base = self.current.clone().filter(|_| self.file_base.is_none());
        let build = move |base: Option<&Arc<ZoneContents>>| match base
            .ok_or(Error::NothingServed)
            .and_then(|b| restored(b, &backup, policy, now))
        {
            Ok(Some(change)) => {
                let count = change.removed.len() + change.added.len();
                (Some(Change::Apply(vec![change])), Ok(count))
            }
            Ok(None) => (None, Ok(0)),
            Err(why) => (None, Err(why)),
        };
        let (committed, count) = self.commit_with(build, Notify::Yes).await;
        let count = count?;
        let Some(zone) = committed? else {
            return Ok(format!("nothing to restore: serial {from} holds the backup's data"));
        };
        info!(zone = %self.plan.name, from, serial = zone.serial(), records = count, "zone restored from a backup");
        self.zone_file_lags(file_base);
        self.after_change().await;
        Ok(format!("restored: serial {from} → {}, {count} records changed", zone.serial()))
    }

    /// A secondary serves the backup's version when it is newer than the served one,
    /// keeps it as its copy, and asks its primaries at once.
    async fn restore_secondary(&mut self, backup: ZoneContents) -> Outcome {
        let serial = backup.serial();
        if self.schedule.expired {
            return Err(Error::Backup("the zone expired: refresh it from its primaries".into()));
        }
        if let Some(ours) = self.current.as_ref().map(|z| z.serial()) {
            if !serial_gt(serial, ours) {
                return Err(Error::Backup(format!("the backup's serial {serial} is not newer than the served {ours}: a secondary serves its primary's versions (zone-retransfer asks for the whole zone)")));
            }
        }
        let change = Change::Whole { zone: backup, history: History::default(), journal: vec![] };
        let zone = self.commit(change, Notify::Yes).await?;
        let now = self.now();
        let soa = zone.soa_numbers();
        self.schedule.expire_at = soa.map(|s| now + u64::from(s.expire));
        self.schedule.refresh_at = Some(now);
        self.store_zone(Arc::clone(&zone), true);
        self.rewrite_journal(&zone);
        info!(zone = %self.plan.name, serial, "zone restored from a backup; refreshing from the primaries");
        Ok(format!("restored: serial {serial}; refreshing from the primaries"))
    }
}

/// Writes `zone` and the journal's copy as `files` (in `dir`); the journal's length
/// when one was copied. Refused when a backup of the zone is there already.
fn write_backup(
    dir: &Path,
    files: &BackupFiles,
    zone: &ZoneContents,
    journal: Option<&SharedJournal>,
    note: &str,
) -> Result<Option<u64>> {
    for path in [&files.zone, &files.journal] {
        if fs::symlink_metadata(path).is_ok() {
            let why = format!("{} exists: back up into another directory", path.display());
            return Err(Error::Backup(why));
        }
    }
    let failed = |what: &Path, e: io::Error| Error::Backup(format!("{}: {e}", what.display()));
    create_dir(dir).map_err(|e| failed(dir, e))?;
    let copied = match journal {
        Some(journal) => copy_journal(journal, &files.journal)?,
        None => None,
    };
    storage::write_zone(&files.zone, zone, note).map_err(|e| failed(&files.zone, e))?;
    Ok(copied)
}

/// Creates `dir` and its parents, readable by the server's user and group alone.
fn create_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().recursive(true).mode(0o750).create(dir)
}

/// Copies the journal's synced bytes to `to`, holding it still meanwhile (a
/// compaction may run beside the writer); `None` when it refuses changes (damaged)
/// or is empty.
fn copy_journal(journal: &SharedJournal, to: &Path) -> Result<Option<u64>> {
    let journal = journal.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if journal.refused().is_some() || journal.is_empty() {
        return Ok(None);
    }
    let len = journal.len();
    let failed = |e: io::Error| Error::Backup(format!("{}: {e}", journal.path().display()));
    let mut source = File::open(journal.path()).map_err(failed)?.take(len);
    storage::replace(to, |out| io::copy(&mut source, out).map(drop))
        .map_err(|e| Error::Backup(format!("{}: {e}", to.display())))?;
    Ok(Some(len))
}

/// The backup's zone file of `zone`, loaded (and checked) as any zone file is.
fn read_backup(zone: &Name, path: &Path) -> Result<ZoneContents> {
    if fs::symlink_metadata(path).is_err() {
        return Err(Error::Backup(format!("{}: no backup of {zone} there", path.display())));
    }
    let loaded = tern_zone::load_file(path, zone, &Default::default(), &mut |_| {})?;
    Ok(loaded.contents)
}

/// The change from `served` to `backup`; its serial raised by `policy` above the served
/// one when the backup's is not higher. `None` when the data is the same and the
/// serial would not rise.
fn restored(
    served: &ZoneContents,
    backup: &ZoneContents,
    policy: UpdatePolicy,
    now: u64,
) -> Result<Option<Changeset>> {
    let mut change = served.diff(backup).ok_or(Error::NoSoa("the backup"))?;
    if serial_gt(backup.serial(), served.serial()) {
        return Ok(Some(change));
    }
    if change.removed.is_empty() && change.added.is_empty() && soa_alike(&change) {
        return Ok(None);
    }
    // The SOA is not among a difference's records: raising the serial is its `soa_to`'s.
    let to = change.soa_to.as_ref().ok_or(Error::NoSoa("the backup"))?;
    change.soa_to = Some(with_serial(to, policy.serial.next(served.serial(), now))?);
    Ok(Some(change))
}

/// Whether `change`'s SOAs differ in their serial alone.
fn soa_alike(change: &Changeset) -> bool {
    let (Some(from), Some(to)) = (&change.soa_from, &change.soa_to) else { return false };
    let serial = from.soa_serial().unwrap_or(0);
    from.ttl == to.ttl && with_soa_serial(&to.rdata, serial).as_ref() == Some(&from.rdata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_files_are_named_as_storage_names_zones() {
        let zone: Name = "Ex/ample.test.".parse().unwrap();
        let files = BackupFiles::new(Path::new("/b"), &zone).unwrap();
        assert_eq!(files.zone, Path::new("/b").join(format!("{}zone", stem(&zone))));
        assert_eq!(files.journal, Path::new("/b").join(format!("{}journal", stem(&zone))));
        assert!(files.zone.starts_with("/b") && files.zone.parent() == Some(Path::new("/b")));
    }

    #[test]
    fn a_relative_backup_directory_is_refused() {
        let zone: Name = "example.test.".parse().unwrap();
        let why = BackupFiles::new(Path::new("backups"), &zone).unwrap_err();
        assert!(why.to_string().contains("absolute"), "{why}");
    }
}
