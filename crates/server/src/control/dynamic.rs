//! Dynamic updates (RFC 2136) in a zone's writer, and what they mean for a primary's
//! zone file.
//!
//! * A primary takes the updates queued for it in one batch: each is checked and turned
//!   into a changeset against the version the one before it left (RFC 2136 §3.7:
//!   updates are serialized with their prerequisites), then the batch's changesets are
//!   appended to the journal with one sync, the last version is published, and only
//!   then are the clients answered and the secondaries notified (group commit: every
//!   acknowledged update is on disk).
//! * A secondary forwards each update to its primary as it was received, TSIG record
//!   included, and relays the primary's answer as it is (RFC 2136 §6): the primary
//!   judges it with the client's key, and its answer is signed for the client.
//! * The zone file catches up with the updates `zonefile-sync` after the first one (and
//!   before the journal is compacted, which would drop them). It is not overwritten when
//!   someone edited it meanwhile; a reload then merges the edit into the served version
//!   (`ZoneContents::rebase`), so neither the edit nor the updates are lost.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_engine::{UpdatePolicy, UpdateRefusal};
use tern_wire::Rcode;
use tern_zone::{Changeset, HistoryLimits, ZoneContents};
use tracing::{error, info, warn};

use super::inbox::Receiver;
use super::primary::version;
use super::writer::{now, Writer};
use super::{journaled, storage, Event};
use crate::client::{self, Peer};
use crate::config::{Role, ZoneSource};
use crate::updates::UpdateTask;

/// Most updates committed together.
pub const BATCH: usize = 256;

/// When updates stream in from several clients, a primary's commits start at least this
/// far apart: the updates that arrive meanwhile share one trip to a blocking thread, one
/// journal sync and one copy of what they touch, instead of paying for each alone (at
/// 5,000 updates a second one at a time, that was about 100 µs of CPU an update, taken
/// from the query workers). An update after a quiet spell, or the next from the client
/// (address and port) whose update alone was committed last, is committed at once: a
/// client that waits for each answer is not slowed.
pub const COMMIT_GAP: Duration = Duration::from_millis(2);

/// Who sent a batch of updates (see [`COMMIT_GAP`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Senders {
    /// One update, from this UDP client (`None`: over TCP).
    One(Option<SocketAddr>),
    /// Several updates.
    Several,
}

impl Senders {
    fn of(batch: &[UpdateTask]) -> Senders {
        match batch {
            [one] => Senders::One(one.udp_client()),
            _ => Senders::Several,
        }
    }
}

/// One update's fate in a batch.
#[derive(Debug)]
pub struct Judged {
    /// The update, to answer.
    pub task: UpdateTask,
    /// Its answer's response code.
    pub rcode: Rcode,
    /// Its changeset was applied (and must be journaled before the answer).
    pub changed: bool,
}

/// What a batch of updates computed.
#[derive(Debug)]
pub struct Computed {
    /// Each update's fate, in order.
    pub judged: Vec<Judged>,
    /// The changesets applied, in order: shared with the history of `zone`, and
    /// journaled from there.
    pub changes: Vec<Arc<Changeset>>,
    /// The version after the last change (`None`: nothing changed).
    pub zone: Option<ZoneContents>,
}

impl Writer {
    /// Takes a batch of updates (see the module comment).
    pub async fn updates(&mut self, tasks: Vec<UpdateTask>) {
        if self.frozen {
            warn!(zone = %self.plan.name, updates = tasks.len(), "updates refused: the zone is frozen");
            tasks.into_iter().for_each(|task| task.answer(Rcode::REFUSED));
            return;
        }
        match &self.plan.role {
            Role::Primary => self.commit(tasks).await,
            Role::Secondary(_) => self.forward(tasks).await,
        }
    }

    /// Applies and journals (in one trip to a blocking thread), publishes, answers,
    /// notifies.
    async fn commit(&mut self, tasks: Vec<UpdateTask>) {
        let Some(current) = self.current.clone() else { return }; // SERVFAIL, as dropped
        self.last_commit = Some((Instant::now(), Senders::of(&tasks)));
        let (policy, limits) = (self.plan.update, self.plan.history);
        let (journal, name) = (self.journal.clone(), self.plan.name.to_string());
        let computed = tokio::task::spawn_blocking(move || {
            compute_and_journal(&current, tasks, policy, limits, journal.as_ref(), &name)
        })
        .await;
        let Ok((Computed { mut judged, changes, zone }, journaled)) = computed else { return };
        if let Some(zone) = zone {
            let applied = changes.len();
            let published = match journaled {
                Ok(()) => self.publish_updated(zone),
                Err(why) => {
                    error!(zone = %self.plan.name, "updates not applied: the journal failed: {why}");
                    self.last_error = Some((now(), format!("the journal failed: {why}")));
                    false
                }
            };
            if !published {
                judged.iter_mut().filter(|j| j.changed).for_each(|j| j.rcode = Rcode::SERVFAIL);
            } else if let Some(zone) = &self.current {
                info!(zone = %self.plan.name, serial = zone.serial(), updates = applied, "updates applied");
            }
        }
        for j in judged {
            j.task.answer(j.rcode);
        }
        self.after_change().await;
    }

    /// `batch`, and the updates that arrive until [`COMMIT_GAP`] has passed since a
    /// primary's last commit, when updates stream in from several clients (see there),
    /// up to [`BATCH`].
    pub async fn paced(
        &self,
        mut batch: Vec<UpdateTask>,
        inbox: &Receiver<Event, UpdateTask>,
    ) -> Vec<UpdateTask> {
        let Some((last, senders)) = self.last_commit else { return batch };
        let ready = last + COMMIT_GAP;
        let same_client = senders != Senders::Several && Senders::of(&batch) == senders;
        let primary = matches!(self.plan.role, Role::Primary);
        if same_client || !primary || batch.len() >= BATCH || Instant::now() >= ready {
            return batch;
        }
        tokio::time::sleep_until(ready.into()).await;
        batch.extend(inbox.take_updates(BATCH - batch.len()));
        batch
    }

    /// Publishes the updated version and keeps the zone file's copy in view.
    pub fn publish_updated(&mut self, zone: ZoneContents) -> bool {
        let before = self.current.clone();
        if !self.publish(Arc::new(zone)) {
            return false;
        }
        if self.file_base.is_none() {
            self.file_base = before; // what the zone file holds
        }
        if self.flush_at.is_none() {
            self.flush_at = Some(now() + self.plan.zonefile_sync.as_secs());
        }
        self.notify_secondaries();
        true
    }

    /// Forwards each update to the first primary that answers and relays its answer.
    async fn forward(&mut self, tasks: Vec<UpdateTask>) {
        let Role::Secondary(primaries) = &self.plan.role else { return };
        let (primaries, timeout) = (primaries.clone(), self.shared.limits.load().timeout);
        let name = self.plan.name.clone();
        // Off the writer: a slow primary must not hold up its refreshes.
        tokio::task::spawn_blocking(move || {
            for task in tasks {
                let Some(request) = task.request() else { continue };
                let message = request.bytes().to_vec();
                let peers = primaries.iter().flat_map(|p| p.addrs.iter());
                let answer = peers.map(|&addr| {
                    client::forward(Peer { addr, key: None }, &message, timeout)
                        .map_err(|e| (addr, e))
                });
                let mut last = None;
                for result in answer {
                    match result {
                        Ok(answer) => {
                            task.relay(answer);
                            last = None;
                            break;
                        }
                        Err(e) => last = Some(e),
                    }
                }
                if let Some((addr, e)) = last {
                    warn!(zone = %name, primary = %addr, "update not forwarded: {e}");
                }
            }
        });
    }

    /// Writes the zone file with the served version when updates made it differ (see
    /// the module comment). False when it is not written: the journal must keep what
    /// the file lacks.
    pub async fn sync_zone_file(&mut self) -> bool {
        self.flush_at = None;
        if self.file_base.is_none() {
            return true;
        }
        let (ZoneSource::File(path), Some(zone)) = (self.plan.source.clone(), self.current.clone())
        else {
            return false;
        };
        if version(&self.plan.source) != self.source {
            warn!(zone = %self.plan.name, file = %path.display(), "the zone file was edited since it was read: not overwritten with the updates (reload to merge the edit with them; the journal keeps them meanwhile)");
            return false;
        }
        let (serial, file) = (zone.serial(), path.clone());
        let written = tokio::task::spawn_blocking(move || {
            storage::write_zone(&file, &zone, "written by ternd after dynamic updates")
        })
        .await;
        match written {
            Ok(Ok(())) => {
                self.source = version(&self.plan.source);
                self.file_base = None;
                info!(zone = %self.plan.name, serial, file = %path.display(), "zone file written");
                true
            }
            Ok(Err(e)) => {
                error!(zone = %self.plan.name, file = %path.display(), "cannot write the zone file (the journal keeps the updates): {e}");
                self.flush_at = Some(now() + self.plan.zonefile_sync.as_secs().max(60));
                false
            }
            Err(_) => false,
        }
    }

    /// After a change: writes the zone file at once when `zonefile-sync` is 0, and
    /// compacts the journal when due.
    pub async fn after_change(&mut self) {
        if self.plan.zonefile_sync == Duration::ZERO || self.compaction_due() {
            self.flush_and_compact().await;
        }
    }

    /// Writes the zone file when it lacks updates, then compacts the journal if due —
    /// never before the file holds what the journal would drop.
    pub async fn flush_and_compact(&mut self) {
        if self.sync_zone_file().await && self.compaction_due() {
            if let Some(zone) = self.current.clone() {
                self.rewrite_journal(&zone);
            }
        }
    }
}

/// What a primary's commit does on a blocking thread: computes the batch (`compute`), then
/// appends its changes to `journal` (when there is one and something changed); the
/// journal's `Err` says why they must not be published. Public for
/// `examples/update_cost.rs`, which counts its instructions (never inlined, so that
/// a profile can single it out: it runs once a batch).
#[inline(never)]
pub fn compute_and_journal(
    current: &Arc<ZoneContents>,
    tasks: Vec<UpdateTask>,
    policy: UpdatePolicy,
    limits: HistoryLimits,
    journal: Option<&journaled::Shared>,
    name: &str,
) -> (Computed, Result<(), String>) {
    let computed = compute(current, tasks, policy, limits);
    let journaled = match (&computed.zone, journal) {
        (Some(_), Some(journal)) => journaled::append(journal, name, &computed.changes),
        _ => Ok(()),
    };
    (computed, journaled)
}

/// Judges and applies each update in turn (on a blocking thread), all to one version
/// of the zone: its first change copies what it touches of the served version, the
/// others change that copy where it is.
fn compute(
    current: &Arc<ZoneContents>,
    tasks: Vec<UpdateTask>,
    policy: UpdatePolicy,
    limits: HistoryLimits,
) -> Computed {
    let mut zone: Option<ZoneContents> = None;
    let mut out =
        Computed { judged: Vec::with_capacity(tasks.len()), changes: Vec::new(), zone: None };
    let now = now();
    for task in tasks {
        let Some(request) = task.request() else { continue };
        let change = request.changes(zone.as_ref().unwrap_or(current), &policy, now);
        let (rcode, changed) = match change {
            Ok(change) if change.is_empty() => (Rcode::NOERROR, false),
            Ok(change) => {
                let mut next = zone.take().unwrap_or_else(|| (**current).clone());
                match next.apply_in_place(&change) {
                    Ok(_) => {
                        zone = Some(next);
                        out.changes.push(Arc::new(change));
                        (Rcode::NOERROR, true)
                    }
                    Err(e) => {
                        zone = replay(current, &mut out);
                        let refusal = UpdateRefusal::from_apply(&e);
                        log_refusal(current, &task, &refusal);
                        (refusal.rcode, false)
                    }
                }
            }
            Err(refusal) => {
                log_refusal(current, &task, &refusal);
                (refusal.rcode, false)
            }
        };
        out.judged.push(Judged { task, rcode, changed });
    }
    out.zone = zone.map(|mut zone| {
        let mut history = current.history().clone();
        for change in &out.changes {
            history.append(Arc::clone(change), limits);
        }
        zone.set_history(Arc::new(history));
        zone
    });
    out
}

/// The version `changes` (all applied once already) make of `current`, after a change
/// that failed left the batch's version half changed. Should applying them again fail,
/// nothing of the batch is kept and the updates answered so far fail with it.
fn replay(current: &ZoneContents, out: &mut Computed) -> Option<ZoneContents> {
    if out.changes.is_empty() {
        return None;
    }
    let mut zone = current.clone();
    match out.changes.iter().try_for_each(|c| zone.apply_in_place(c).map(drop)) {
        Ok(()) => Some(zone),
        Err(e) => {
            error!(zone = %current.origin(), "updates not applied: a batch did not apply again: {e}");
            out.judged.iter_mut().filter(|j| j.changed).for_each(|j| {
                j.rcode = Rcode::SERVFAIL;
                j.changed = false;
            });
            out.changes.clear();
            None
        }
    }
}

fn log_refusal(zone: &ZoneContents, task: &UpdateTask, refusal: &UpdateRefusal) {
    let Some(request) = task.request() else { return };
    let key = request.key_name().map_or_else(|| "-".to_owned(), ToString::to_string);
    info!(zone = %zone.origin(), client = %request.client(), key, rcode = %refusal.rcode, "update refused: {}", refusal.reason);
}
