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

use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_engine::{UpdatePolicy, UpdateRefusal};
use tern_wire::Rcode;
use tern_zone::{Changeset, ZoneContents};
use tracing::{error, info, warn};

use crate::commit::{Change, Notify};
use crate::event::Event;
use crate::inbox::Receiver;
use crate::peer::Peer;
use crate::plan::{Role, ZoneSource, ZonefileSync};
use crate::refusals::{refusals, Kind, Refusal};
use crate::state::{version, LastCommit, Senders};
use crate::storage;
use crate::updates::{Answers, UpdateTask};
use crate::writer::Writer;

/// Most updates committed together.
pub const BATCH: usize = 256;

/// When updates come from several clients, a primary's commits start at least this far
/// apart: the updates that arrive meanwhile share one trip to a blocking thread, one
/// journal sync, one copy of what they touch and one serial, instead of paying for each
/// alone (at 5,000 updates a second one at a time, that was about 100 µs of CPU an
/// update, taken from the query workers; 5 ms against 2 ms took the writer's CPU from
/// about 21 to 14 µs an update). An update after a quiet spell, or the next from the
/// client (address and port) whose update alone was committed last, is committed at
/// once: a client that waits for each answer is not slowed.
pub const COMMIT_GAP: Duration = Duration::from_millis(5);

/// While updates keep arriving (the newest less than [`LULL`] old), a commit waits for
/// more, checking every [`COMMIT_GAP`], up to this long after the last one began or
/// until [`ENOUGH`] are waiting. A commit's own cost (the trip, the sync, the copies,
/// the thread switches: several hundred µs of CPU on a VM) is then shared by over a
/// hundred updates: at 5,000 a second a batch is about 140 updates instead of 25, for
/// about 25 ms more latency. It stays under 40 ms: a client keeping 200 updates
/// outstanding at 5,000 a second is not held up.
pub const STREAM_GAP: Duration = Duration::from_millis(36);

/// A batch this large goes without waiting longer: a commit's own cost is shared
/// enough, and faster streams then commit back to back, as many as the writer can
/// (64 against 128: 16.8 against 11.4 µs of the writer's CPU an update at 5,000 a
/// second, held to half a CPU). Not more: clients that keep 200 updates outstanding
/// and send again once answered (dnsperf at full rate) then wait for most of their
/// updates to be in one batch, and nothing overlaps the commit; 176 took them from
/// about 29,000 to 24,000 updates a second held to half a CPU, for about 10% less of
/// the writer's CPU an update at 5,000 a second.
pub const ENOUGH: usize = 128;

/// Clients that wait for their answers send their next updates in a burst once they
/// have them, then stop: an update this old at the end of a batch says the burst is
/// over, and the batch goes (after [`COMMIT_GAP`], as before), while an update stream
/// that does not wait (a new one at least every millisecond) keeps gathering until
/// [`STREAM_GAP`]. While a stream runs (updates came during the last commit), a lull
/// counts only when a second look, this much later, finds no new update either: a
/// server kept off its CPU for a while (a saturated core, a CPU quota) takes the updates
/// queued meanwhile in its socket late, and the gap before them looks like a lull (see
/// [`Writer::paced`] for what that did to the batches).
pub const LULL: Duration = Duration::from_millis(1);

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
    /// The batch's changes joined into one changeset (none when nothing changed), for
    /// the journal and the history.
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
        if self.is_scripted() {
            warn!(zone = %self.plan.name, updates = tasks.len(), "updates refused: the zone is built by its script (change the script)");
            tasks.into_iter().for_each(|task| task.answer(Rcode::REFUSED));
            return;
        }
        if matches!(self.plan.source, crate::plan::ZoneSource::Database(_)) {
            warn!(zone = %self.plan.name, updates = tasks.len(), "updates refused: the zone is read from its database (change its rows there)");
            tasks.into_iter().for_each(|task| task.answer(Rcode::REFUSED));
            return;
        }
        match &self.plan.role {
            Role::Primary => self.commit_updates(tasks).await,
            Role::Secondary(_) => self.forward(tasks).await,
        }
    }

    /// Judges and applies the batch, journals it (in one trip to a blocking thread),
    /// publishes and notifies — all through the commit function ([`crate::commit`]) —
    /// then answers.
    async fn commit_updates(&mut self, tasks: Vec<UpdateTask>) {
        if self.current.is_none() {
            return; // SERVFAIL, as dropped
        }
        let (began, senders, stream) =
            (Instant::now(), Senders::of(&tasks), self.streaming(&tasks));
        let (policy, now) = (self.plan.update, self.now());
        let file_base = self.current.clone().filter(|_| self.file_base.is_none());
        let build = move |base: Option<&Arc<ZoneContents>>| match base {
            Some(base) => {
                let Computed { judged, changes, zone } = compute(base, tasks, policy, now);
                (zone.map(|zone| Change::Built { zone, changes }), judged)
            }
            None => (None, Vec::new()), // the tasks dropped: SERVFAIL
        };
        let (committed, mut judged) = self.commit_with(build, Notify::Yes).await;
        match committed {
            Ok(Some(zone)) => {
                let applied = judged.iter().filter(|j| j.changed).count();
                info!(zone = %self.plan.name, serial = zone.serial(), updates = applied, "updates applied");
                self.zone_file_lags(file_base);
            }
            Ok(None) => {}
            Err(why) => {
                error!(zone = %self.plan.name, "updates not applied: {why}");
                judged.iter_mut().filter(|j| j.changed).for_each(|j| j.rcode = Rcode::SERVFAIL);
            }
        }
        // Before the answers: updates their clients send once answered come after it.
        let ended = Instant::now();
        let mut answers = Answers::default();
        judged.into_iter().for_each(|j| j.task.answer_into(j.rcode, &mut answers));
        answers.send();
        self.last_commit = Some(LastCommit { began, ended, senders, stream });
        self.after_change().await;
    }

    /// `batch`, and the updates that arrive until [`COMMIT_GAP`] has passed since a
    /// primary's last commit began, when updates come from several clients (see there),
    /// and while they keep arriving ([`LULL`]), until [`STREAM_GAP`] or [`ENOUGH`]; up
    /// to [`BATCH`]. A batch of a stream ([`Writer::streaming`]) gathers so too when the
    /// last commit took longer than [`COMMIT_GAP`]: on a server short of CPU its
    /// batches would otherwise shrink to what arrives during one commit, and the
    /// commits' own cost grow with their number. At 5,000 updates a second under a
    /// quota of 0.75 of a CPU, with queries saturating it, batches held 58 updates on
    /// average before this rule and a stream's second look for a lull ([`LULL`]), and
    /// 183 with both and [`ENOUGH`] at 176 (83 with this rule alone, about 140 with
    /// [`ENOUGH`] at 128); the writer's CPU went from 15.5 to 6.1 µs an update.
    pub async fn paced(
        &self,
        mut batch: Vec<UpdateTask>,
        inbox: &Receiver<Event, UpdateTask>,
    ) -> Vec<UpdateTask> {
        let Some(LastCommit { began, senders, .. }) = self.last_commit else { return batch };
        let (mut wake, latest) = (began + COMMIT_GAP, began + STREAM_GAP);
        let same_client = senders != Senders::Several && Senders::of(&batch) == senders;
        let primary = matches!(self.plan.role, Role::Primary);
        let streaming = self.streaming(&batch);
        let late = Instant::now() >= wake;
        if same_client || !primary || batch.len() >= BATCH || (late && !streaming) {
            return batch;
        }
        // The newest update when the last look found it LULL old (in a stream, a lull
        // counts once a second look finds it too).
        let mut quiet_since = None;
        loop {
            if Instant::now() < wake {
                tokio::time::sleep_until(wake.into()).await;
            }
            batch.extend(inbox.take_updates(BATCH - batch.len()));
            let now = Instant::now();
            let newest = batch.last().map_or(began, |task| task.received);
            let quiet = now >= newest + LULL;
            let lull = quiet && (!streaming || quiet_since == Some(newest));
            if batch.len() >= ENOUGH || now >= latest || lull {
                return batch;
            }
            quiet_since = quiet.then_some(newest);
            wake = (now + if quiet { LULL } else { COMMIT_GAP }).min(latest);
        }
    }

    /// True when `batch` continues a stream of updates: its first came while the last
    /// commit was under way, or soon ([`COMMIT_GAP`]) after a commit of a stream ended.
    /// Clients that wait for their answers send their next updates only after the
    /// commit: their bursts are not a stream.
    pub fn streaming(&self, batch: &[UpdateTask]) -> bool {
        let (Some(last), Some(first)) = (self.last_commit, batch.first()) else { return false };
        first.received < last.ended || (last.stream && first.received < last.ended + COMMIT_GAP)
    }

    /// After a change the zone file lacks: keeps what the file holds (`before`, the
    /// version the change replaced, unless the file already lagged) and when to write
    /// it.
    pub fn zone_file_lags(&mut self, before: Option<Arc<ZoneContents>>) {
        if self.file_base.is_none() {
            self.file_base = before; // what the zone file holds
        }
        self.schedule_flush();
    }

    /// Forwards each update to the first primary that answers and relays its answer.
    async fn forward(&mut self, tasks: Vec<UpdateTask>) {
        let Role::Secondary(primaries) = &self.plan.role else { return };
        let (primaries, timeout) = (primaries.clone(), self.shared.limits.load().timeout);
        let (name, network) = (self.plan.name.clone(), Arc::clone(&self.shared.network));
        // Off the writer: a slow primary must not hold up its refreshes.
        tokio::task::spawn_blocking(move || {
            for task in tasks {
                let Some(request) = task.request() else { continue };
                let message = request.bytes().to_vec();
                let peers = primaries.iter().flat_map(|p| p.addrs.iter().map(move |&a| (a, p)));
                let answer = peers.map(|(addr, primary)| {
                    // As received: its own TSIG, not the remote's key.
                    let peer = Peer { key: None, ..primary.peer(addr) };
                    network.forward(peer, &message, timeout).map_err(|e| (addr, e))
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
        if self.plan.zonefile_sync == ZonefileSync::Never {
            return false;
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
            storage::write_zone(
                &file,
                &zone,
                "written by ternd with what the file lacked (dynamic updates, signatures)",
            )
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
                let delay = self.plan.zonefile_sync.delay().unwrap_or_default().as_secs();
                self.flush_at = Some(self.now() + delay.max(60));
                false
            }
            Err(_) => false,
        }
    }

    /// After a change: writes the zone file at once when `zonefile-sync` is 0, and
    /// compacts the journal when due.
    pub async fn after_change(&mut self) {
        if self.plan.zonefile_sync.delay() == Some(Duration::ZERO) || self.compaction_due() {
            self.flush_and_compact().await;
        }
    }

    /// Writes the zone file when it lacks updates, then compacts the journal if due —
    /// never before the file holds what the journal would drop. With `zonefile-sync =
    /// "never"` the file is not written, and the journal is compacted into one change
    /// from it ([`Writer::rebase_journal`]).
    pub async fn flush_and_compact(&mut self) {
        if self.plan.zonefile_sync == ZonefileSync::Never {
            if let Some(zone) = self.current.clone().filter(|_| self.compaction_due()) {
                self.rebase_journal(&zone);
            }
        } else if self.sync_zone_file().await && self.compaction_due() {
            if let Some(zone) = self.current.clone() {
                self.rewrite_journal(&zone);
            }
        }
    }

    /// When the zone file lacks changes: when to write it, unless it is already set or
    /// the file is never written.
    pub fn schedule_flush(&mut self) {
        if let (None, Some(delay)) = (self.flush_at, self.plan.zonefile_sync.delay()) {
            self.flush_at = Some(self.now() + delay.as_secs());
        }
    }
}

/// Judges and applies each update in turn (on a blocking thread), all to one version
/// of the zone: its first change copies what it touches of the served version, the
/// others change that copy where it is. The serial is raised once, at the end, when
/// the last change did not set it (RFC 2136 §3.6: it must rise before a change is seen,
/// and nothing of a batch is seen before all of it), so the apex is not rewritten for
/// each update; the batch is one changeset, for the journal and the history.
/// Public for `examples/update_cost.rs`, which counts its instructions (never inlined,
/// so that a profile can single it out: it runs once a batch).
#[inline(never)]
pub fn compute(
    current: &Arc<ZoneContents>,
    tasks: Vec<UpdateTask>,
    policy: UpdatePolicy,
    now: u64,
) -> Computed {
    let mut batch = Batch { zone: None, applied: Vec::new(), judged: Vec::new() };
    let count = tasks.len();
    for (n, task) in tasks.into_iter().enumerate() {
        let Some(request) = task.request() else { continue };
        let zone = batch.zone.as_ref().unwrap_or(current);
        // The last one raises the serial with its own change (the apex rewritten once).
        let change = match n + 1 == count {
            true => request.changes(zone, &policy, now),
            false => request.changes_unnumbered(zone, &policy),
        };
        let applied = change.and_then(|change| match change.is_empty() {
            true => Ok(false),
            false => batch.apply(current, change).map(|()| true),
        });
        let (rcode, changed) = match applied {
            Ok(changed) => (Rcode::NOERROR, changed),
            Err(refusal) => {
                log_refusal(current, &task, &refusal);
                (refusal.rcode, false)
            }
        };
        batch.judged.push(Judged { task, rcode, changed });
    }
    batch.finish(current, policy, now)
}

/// A batch being computed: the version its changes made so far, and the changes.
struct Batch {
    zone: Option<ZoneContents>,
    applied: Vec<Changeset>,
    judged: Vec<Judged>,
}

impl Batch {
    /// Applies one update's change; on failure the batch's version is made again
    /// without it.
    fn apply(&mut self, current: &ZoneContents, change: Changeset) -> Result<(), UpdateRefusal> {
        let mut next = self.zone.take().unwrap_or_else(|| current.clone());
        match next.apply_in_place(&change) {
            Ok(_) => {
                self.zone = Some(next);
                self.applied.push(change);
                Ok(())
            }
            Err(e) => {
                self.replay(current);
                Err(UpdateRefusal::from_apply(&e))
            }
        }
    }

    /// The version the changes applied so far (all applied once already) make of
    /// `current`, after a change that failed left the batch's version half changed.
    /// Should applying them again fail, nothing of the batch is kept and the updates
    /// answered so far fail with it.
    fn replay(&mut self, current: &ZoneContents) {
        self.zone = None;
        if self.applied.is_empty() {
            return;
        }
        let mut zone = current.clone();
        match self.applied.iter().try_for_each(|c| zone.apply_in_place(c).map(drop)) {
            Ok(()) => self.zone = Some(zone),
            Err(e) => {
                error!(zone = %current.origin(), "updates not applied: a batch did not apply again: {e}");
                self.fail_all();
            }
        }
    }

    fn fail_all(&mut self) {
        self.judged.iter_mut().filter(|j| j.changed).for_each(|j| {
            j.rcode = Rcode::SERVFAIL;
            j.changed = false;
        });
        self.applied.clear();
        self.zone = None;
    }

    /// Raises the serial unless the last change did (it set the SOA, or it was the
    /// batch's last update, numbered with its change) and joins the changes into one.
    fn finish(mut self, current: &ZoneContents, policy: UpdatePolicy, now: u64) -> Computed {
        let numbered = self.applied.last().is_some_and(|c| c.soa_to.is_some());
        if let (Some(zone), false) = (&mut self.zone, numbered) {
            let soa = zone.soa_record().map(|from| {
                let to = policy.next_soa(&from, now);
                Changeset { soa_from: Some(from), soa_to: Some(to), ..Changeset::default() }
            });
            match soa.map(|soa| zone.apply_in_place(&soa).map(|_| soa)) {
                Some(Ok(soa)) => self.applied.push(soa),
                Some(Err(e)) => {
                    error!(zone = %current.origin(), "updates not applied: the serial could not be raised: {e}");
                    self.fail_all();
                }
                None => self.fail_all(),
            }
        }
        let changes = match self.applied.is_empty() {
            true => Vec::new(),
            false => vec![Arc::new(Changeset::joined(self.applied))],
        };
        Computed { judged: self.judged, changes, zone: self.zone }
    }
}

/// Notes an update the writer refused in the refusal log ([`crate::refusals`]).
fn log_refusal(zone: &ZoneContents, task: &UpdateTask, refusal: &UpdateRefusal) {
    let Some(request) = task.request() else { return };
    refusals().note(Kind::Update, crate::clock::unix_now(), || Refusal {
        kind: Kind::Update,
        zone: zone.origin().to_string(),
        client: request.client(),
        key: request.key_name().map(ToString::to_string),
        rcode: refusal.rcode,
        why: refusal.reason.clone(),
    });
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tern_wire::{Class, Name, Rtype};
    use tern_zone::{Options, ZoneSlot};

    use super::*;

    const ZONE: &str = "@ 300 SOA ns h 10 60 60 600 60\n@ 300 NS ns\nns 300 A 192.0.2.53\n";

    fn zone() -> Arc<ZoneContents> {
        let origin: Name = "example.".parse().unwrap();
        let opts = Options::default();
        let loaded = tern_zone::load_bytes(ZONE.as_bytes(), Path::new("t"), &origin, &opts);
        Arc::new(loaded.unwrap().contents)
    }

    /// An UPDATE of `example.` ([`crate::testing::update`]).
    fn message(records: &[(&str, Rtype, Class, &str)], absent: Option<(&str, Rtype)>) -> Vec<u8> {
        crate::testing::update("example.", records, absent)
    }

    fn tasks(
        zone: &Arc<ZoneContents>,
        messages: &[Vec<u8>],
    ) -> (Vec<UpdateTask>, Vec<std::sync::mpsc::Receiver<Vec<u8>>>) {
        crate::testing::update_tasks(zone, messages)
    }

    fn batch(zone: &Arc<ZoneContents>, messages: &[Vec<u8>]) -> Computed {
        let (tasks, _streams) = tasks(zone, messages);
        compute(zone, tasks, UpdatePolicy::default(), crate::clock::unix_now())
    }

    fn add(owner: &str, address: &str) -> Vec<u8> {
        message(&[(owner, Rtype::A, Class::IN, address)], None)
    }

    fn rcodes(computed: &Computed) -> Vec<Rcode> {
        computed.judged.iter().map(|j| j.rcode).collect()
    }

    #[test]
    fn a_batch_is_one_change_and_one_serial() {
        let zone = zone();
        let messages = [
            add("a.example.", "192.0.2.1"),
            add("b.example.", "192.0.2.2"),
            message(&[("a.example.", Rtype::A, Class::NONE, "192.0.2.1")], None),
        ];
        let computed = batch(&zone, &messages);
        assert_eq!(rcodes(&computed), [Rcode::NOERROR; 3]);
        let [change] = computed.changes.as_slice() else { panic!("{:?}", computed.changes) };
        assert_eq!((change.from_serial(), change.to_serial()), (Some(10), Some(11)));
        let added: Vec<String> = change.added.iter().map(|r| r.owner.to_string()).collect();
        assert_eq!(
            (added, change.removed.len()),
            (vec!["b.example.".to_owned()], 0),
            "a came and went"
        );
        let next = computed.zone.unwrap();
        assert_eq!(next.serial(), 11);
        assert!(next.find(&"a.example.".parse::<Name>().unwrap()).is_none());
    }

    #[test]
    fn prerequisites_see_the_updates_before_them_in_the_batch() {
        let zone = zone();
        let guarded = message(
            &[("c.example.", Rtype::A, Class::IN, "192.0.2.4")],
            Some(("a.example.", Rtype::A)),
        );
        let computed = batch(&zone, &[add("a.example.", "192.0.2.1"), guarded]);
        assert_eq!(rcodes(&computed), [Rcode::NOERROR, Rcode::YXRRSET]);
        assert_eq!(computed.zone.unwrap().serial(), 11);
    }

    #[test]
    fn an_soa_set_by_an_update_is_raised_again_only_for_changes_after_it() {
        let zone = zone();
        let soa = |serial: u32| {
            let text = format!("ns.example. h.example. {serial} 60 60 600 60");
            message(&[("example.", Rtype::SOA, Class::IN, &text)], None)
        };
        let last = batch(&zone, &[add("a.example.", "192.0.2.1"), soa(500)]);
        assert_eq!(last.zone.unwrap().serial(), 500, "the update's own serial, as it is");
        let then = batch(
            &zone,
            &[soa(500), add("a.example.", "192.0.2.1"), add("b.example.", "192.0.2.2")],
        );
        let change = then.changes.first().unwrap();
        assert_eq!((change.from_serial(), change.to_serial()), (Some(10), Some(501)));
        assert_eq!(then.zone.unwrap().serial(), 501);
    }

    /// A primary's writer for `example.`, whose last commit began `ago` and ended at
    /// `ended`, for updates from several clients.
    fn writer_after_commit(ago: Duration, ended: Instant) -> Writer {
        let source = crate::plan::ZoneSource::File("/nonexistent".into());
        let plan = crate::testing::primary("example.", source);
        let shared = crate::Shared::for_tests(None);
        let slot = Arc::new(ZoneSlot::new(&plan.name));
        let mut writer = Writer::new(plan, slot, shared);
        let began = Instant::now() - ago;
        let senders = Senders::Several;
        writer.last_commit = Some(LastCommit { began, ended, senders, stream: false });
        writer
    }

    /// Updates that came while the last commit was under way are a stream: when that
    /// commit took longer than COMMIT_GAP, the batch still gathers what keeps coming
    /// rather than going at once with what came meanwhile.
    #[tokio::test]
    async fn a_stream_keeps_gathering_after_a_slow_commit() {
        let zone = zone();
        let messages: Vec<Vec<u8>> =
            (0..40).map(|n| add(&format!("s{n}.example."), "192.0.2.9")).collect();
        let (mut tasks, _streams) = tasks(&zone, &messages);
        let later = tasks.split_off(2);
        let writer = writer_after_commit(COMMIT_GAP * 2, Instant::now());
        let (inbox, receiver) = crate::inbox::inbox::<Event, UpdateTask>(64);
        let feeder = std::thread::spawn(move || {
            for mut task in later {
                task.received = Instant::now();
                assert!(inbox.try_send_update(task).is_ok());
                std::thread::sleep(Duration::from_micros(300));
            }
        });
        let batch = writer.paced(tasks, &receiver).await;
        feeder.join().unwrap();
        assert!(batch.len() > 2, "went with the {} that came during the commit", batch.len());
    }

    /// A batch whose first update came during the last commit, or soon after a
    /// commit of a stream, continues a stream; one that came after the commit of a
    /// batch that was not (clients sending once answered) does not.
    #[test]
    fn a_stream_is_told_from_the_bursts_of_answered_clients() {
        let zone = zone();
        let (tasks, _streams) = tasks(&zone, &[add("b.example.", "192.0.2.9")]);
        let received = tasks[0].received;
        let mut writer = writer_after_commit(COMMIT_GAP, received + Duration::from_micros(1));
        assert!(writer.streaming(&tasks), "came during the commit");
        let after = |writer: &mut Writer, stream: bool| {
            let last = writer.last_commit.as_mut().unwrap();
            (last.ended, last.stream) = (received - Duration::from_micros(500), stream);
        };
        after(&mut writer, false);
        assert!(!writer.streaming(&tasks), "a burst after a commit that was not a stream's");
        after(&mut writer, true);
        assert!(writer.streaming(&tasks), "soon after a stream's commit");
        assert!(!writer.streaming(&[]));
    }

    /// An update after a quiet spell goes at once, however late.
    #[tokio::test]
    async fn an_update_after_a_quiet_spell_goes_at_once() {
        let zone = zone();
        let writer = writer_after_commit(COMMIT_GAP * 2, Instant::now() - COMMIT_GAP);
        let (tasks, _streams) = tasks(&zone, &[add("q.example.", "192.0.2.9")]);
        let (_inbox, receiver) = crate::inbox::inbox::<Event, UpdateTask>(64);
        let started = Instant::now();
        let batch = writer.paced(tasks, &receiver).await;
        assert_eq!(batch.len(), 1);
        assert!(started.elapsed() < COMMIT_GAP, "waited {:?}", started.elapsed());
    }

    #[test]
    fn a_batch_that_changes_nothing_keeps_the_serial() {
        let zone = zone();
        let computed =
            batch(&zone, &[message(&[("ns.example.", Rtype::A, Class::IN, "192.0.2.53")], None)]);
        assert_eq!(rcodes(&computed), [Rcode::NOERROR]);
        assert!(computed.changes.is_empty() && computed.zone.is_none());
    }
}
