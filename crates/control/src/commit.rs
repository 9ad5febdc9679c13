//! The one commit function: every change to a zone, whatever its source, passes through
//! [`Writer::commit_with`] (or [`Writer::commit`]), which
//!
//! 1. checks that the served version is still the writer's (nothing else publishes a
//!    zone, so a failure is a bug: refused before anything is written);
//! 2. on a blocking thread: builds the change (the caller's work, such as judging a
//!    batch of updates); signs it when the zone is signed by this server
//!    ([`crate::signer::sign`]); applies it copy-on-write, keeps it in the IXFR
//!    history, and appends it to the journal and syncs (`fdatasync`) — on the writer's
//!    own task instead for a small whole version with nothing to journal or sign
//!    (`Writer::quick_commit`: a zone's first load at a start of many zones);
//! 3. publishes the new version with one pointer swap that checks it replaces the
//!    version it started from;
//! 4. sends NOTIFY to the secondaries, when asked.
//!
//! The caller acknowledges (answers an UPDATE, a transaction's commit, a PATCH) only
//! once it returns `Ok`: a change is on disk before anyone is told of it, and one that
//! could not be journaled is neither published nor acknowledged.
//!
//! Sources: a primary's load and reload difference ([`primary`](crate::primary)), a
//! transfer in ([`secondary`](crate::secondary)), an UPDATE batch
//! ([`dynamic`](crate::dynamic)), a transaction or an API PATCH
//! ([`commands`](crate::commands)), a produced catalog, the journal's replay at
//! start-up.

use std::sync::Arc;

use tern_zone::{Changeset, History, HistoryLimits, ZoneContents};
use tracing::error;

pub use crate::change::{Change, Notify};
use crate::error::{Error, Result};
use crate::journaled;
use crate::signer::Signing;
use crate::state::SharedJournal;
use crate::writer::Writer;

/// Whole versions up to this many records are committed on the writer's own task when
/// nothing is synced or signed ([`Writer::quick_commit`]).
const QUICK_COMMIT_RECORDS: usize = 1_000;

/// The version a change makes, ready to publish, and what it sends to the journal.
struct Made {
    zone: ZoneContents,
    journal: Vec<Arc<Changeset>>,
    /// What the journal is replaced by instead ([`Change::Rebased`]).
    replace: Option<Vec<Changeset>>,
}

impl Writer {
    /// Commits `change` (see the module comment); the version published.
    pub async fn commit(&mut self, change: Change, notify: Notify) -> Result<Arc<ZoneContents>> {
        let inline = self.quick_commit(&change);
        let build = move |_: Option<&Arc<ZoneContents>>| (Some(change), ());
        let (committed, ()) = self.commit_on(build, notify, inline).await;
        committed?.ok_or(Error::NothingServed)
    }

    /// True when committing `change` costs less than handing it to a blocking thread
    /// and back: a whole version of at most [`QUICK_COMMIT_RECORDS`] records with
    /// nothing for the journal (nothing to write or sync), of a zone this server does
    /// not sign. A start with a million small zones commits each first load so, on the
    /// writer's task.
    fn quick_commit(&self, change: &Change) -> bool {
        let small = matches!(change, Change::Whole { zone, journal, .. }
            if journal.is_empty() && zone.record_count() <= QUICK_COMMIT_RECORDS);
        small && self.signer.is_none() && self.plan.signing.is_none()
    }

    /// Commits the change `build` makes of the served version on a blocking thread (see
    /// the module comment). `build` returns the change (`None`: nothing to commit) and
    /// what its caller needs afterwards (an UPDATE batch's judged updates), which comes
    /// back whatever became of the change. The version published, `None` when there
    /// was nothing to commit; `Err` when it was not published (and not journaled, but
    /// for a publish that fails after the journal: a bug, logged).
    pub async fn commit_with<T: Send + 'static>(
        &mut self,
        build: impl FnOnce(Option<&Arc<ZoneContents>>) -> (Option<Change>, T) + Send + 'static,
        notify: Notify,
    ) -> (Result<Option<Arc<ZoneContents>>>, T) {
        self.commit_on(build, notify, false).await
    }

    /// [`Self::commit_with`], the change made on the writer's own task when `inline`
    /// ([`Self::quick_commit`]), on a blocking thread otherwise.
    async fn commit_on<T: Send + 'static>(
        &mut self,
        build: impl FnOnce(Option<&Arc<ZoneContents>>) -> (Option<Change>, T) + Send + 'static,
        notify: Notify,
        inline: bool,
    ) -> (Result<Option<Arc<ZoneContents>>>, T) {
        let base = self.current.clone();
        let (journal, name, limits) =
            (self.journal.clone(), self.plan.name.to_string(), self.plan.history);
        let ours = self.slot_holds_ours();
        let signing = self.signing();
        let work = move || {
            let (change, extra) = build(base.as_ref());
            let made = match change {
                None => Ok(None),
                Some(_) if !ours => Err(Error::Raced),
                Some(change) => {
                    let signing = &signing;
                    prepare(base.as_ref(), change, limits, journal.as_ref(), &name, signing)
                        .map(Some)
                }
            };
            drop(base); // freed here, off the writer, when it is the last reference
            (made, extra)
        };
        let (made, extra) = match inline {
            true => work(),
            false => match tokio::task::spawn_blocking(work).await {
                Ok(done) => done,
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            },
        };
        let published = match made {
            Ok(Some(zone)) => self.publish_change(zone, notify).map(Some),
            other => other.map(|_| None),
        };
        if let Err(why) = &published {
            self.last_error = Some((self.now(), format!("change not committed: {why}")));
        }
        (published, extra)
    }

    /// Publishes a committed version and notifies; `Err` if something else replaced
    /// the served version meanwhile (a bug: the change is in the journal).
    fn publish_change(
        &mut self,
        mut zone: ZoneContents,
        notify: Notify,
    ) -> Result<Arc<ZoneContents>> {
        zone.share_origin(&self.plan.name);
        let zone = Arc::new(zone);
        if !self.publish(Arc::clone(&zone)) {
            error!(zone = %self.plan.name, "a journaled change was not published: the zone changed under its writer");
            return Err(Error::Raced);
        }
        if notify == Notify::Yes {
            self.notify_secondaries();
        }
        Ok(zone)
    }

    /// True when the zone's slot serves the writer's version (none while expired).
    fn slot_holds_ours(&self) -> bool {
        let expected = if self.schedule.expired { None } else { self.current.as_ref() };
        match (self.slot.contents_full(), expected) {
            (Some(served), Some(ours)) => Arc::ptr_eq(&served, ours),
            (None, None) => true,
            _ => false,
        }
    }
}

/// What a commit does on its blocking thread once the change is built: the version
/// `change` makes of `base` (applied copy-on-write, with its history), signed, and
/// the change appended to `journal` and synced. Public for `examples/update_cost.rs`,
/// which counts its instructions.
pub fn prepare(
    base: Option<&Arc<ZoneContents>>,
    change: Change,
    limits: HistoryLimits,
    journal: Option<&SharedJournal>,
    zone_name: &str,
    signing: &Signing,
) -> Result<ZoneContents> {
    let change = crate::signer::sign(base, change, signing)?;
    let made = make(base, change, limits)?;
    match (journal, made.replace) {
        (Some(journal), Some(changes)) => journaled::replace(journal, zone_name, &changes)?,
        (Some(journal), None) if !made.journal.is_empty() => {
            journaled::append(journal, zone_name, &made.journal)?;
        }
        _ => {}
    }
    Ok(made.zone)
}

/// The version `change` makes of `base`, with its history, and what goes to the journal.
fn make(base: Option<&Arc<ZoneContents>>, change: Change, limits: HistoryLimits) -> Result<Made> {
    let base_history = || base.map(|b| b.history().clone()).unwrap_or_default();
    match change {
        Change::Apply(changes) | Change::Signed(changes) => {
            let base = base.ok_or(Error::NothingServed)?;
            let mut zone = ZoneContents::clone(base);
            for change in &changes {
                zone.apply_in_place(change)
                    .map_err(|why| Error::Apply { what: "the change does not apply", why })?;
            }
            let journal: Vec<Arc<Changeset>> = changes.into_iter().map(Arc::new).collect();
            zone.set_history(Arc::new(pushed(base_history(), &journal, limits)));
            Ok(Made { zone, journal, replace: None })
        }
        Change::Built { mut zone, changes } => {
            zone.set_history(Arc::new(pushed(base_history(), &changes, limits)));
            Ok(Made { zone, journal: changes, replace: None })
        }
        Change::Whole { mut zone, history, journal } => {
            zone.set_history(Arc::new(history));
            Ok(Made { zone, journal, replace: None })
        }
        Change::Rebased { change, journal } => {
            let made = make(base, *change, limits)?;
            Ok(Made { replace: Some(journal), ..made })
        }
    }
}

/// `history` with `changes` after it, within `limits`.
fn pushed(history: History, changes: &[Arc<Changeset>], limits: HistoryLimits) -> History {
    changes.iter().fold(history, |h, c| h.push(Arc::clone(c), limits))
}

#[cfg(test)]
#[path = "commit_tests.rs"]
mod tests;
