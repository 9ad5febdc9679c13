//! A writer at rest (issue 54): a writer with nothing to do but wait lets go of its
//! task, its inbox and its status, and leaves a [`Dormant`] record in its zone's entry
//! ([`crate::registry`]): what serving the zone, answering `zone-status` and starting
//! the writer again need, a hundred-odd bytes (and a boxed [`Timed`] for a zone with
//! timers) instead of over a kilobyte.
//!
//! A zone not loaded yet starts at rest ([`Dormant::unloaded`]): the load sent to it
//! starts its writer, which rests again as soon as that first load is done.
//! Otherwise a writer rests once it has had nothing to do for [`REST_AFTER`]: no transaction, no
//! refresh under way or being retried after a failure, not expired, and nothing due
//! within [`REST_AFTER`]. What is due later — a secondary's refresh or expiry (RFC 1034
//! §4.3.5), a signed zone's signature refresh or key step, a primary's zone file to
//! write with the updates it lacks — is registered in the one timer queue of all zones
//! ([`crate::timer_queue`]), which wakes the writer when it falls due; the record keeps
//! what those timers need ([`Timed`]), and the woken writer does what is due from its
//! state, as its own timer would have. NOTIFYs still being retried (up to half an hour
//! for a secondary that does not answer) go on: the record keeps their tasks, so that a
//! newer change after the wake replaces them, and a removal stops them. What it does
//! when idle — letting go of the journal's file, showing its status, reporting a
//! catalog — is done first, as at every turn of its loop. An empty journal is let go of
//! too, and opened again before the writer's first event once it wakes
//! (`Writer::reopen_journal`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tern_ctl::proto::ZoneStatus;
use tern_zone::{ZoneContents, ZoneSlot};
use tokio::task::JoinHandle;
use tracing::warn;

use crate::plan::{Role, ZonePlan};
use crate::shared::Shared;
use crate::signer::Signer;
use crate::state::{Notices, Schedule, SharedJournal, SourceVersion};
use crate::writer::Writer;

/// How long a writer with nothing to do waits before it rests.
pub const REST_AFTER: Duration = Duration::from_secs(1);

/// What a resting writer keeps (see the module comment).
#[derive(Debug)]
pub struct Dormant {
    /// The zone's plan, as last applied.
    pub plan: Arc<ZonePlan>,
    /// The version last published.
    pub current: Option<Arc<ZoneContents>>,
    /// The source as last loaded.
    pub source: Option<SourceVersion>,
    /// When the served version was published.
    pub loaded_at: Kept,
    /// The journal, when it holds changes or refuses them (an empty one is let go of).
    pub journal: Option<SharedJournal>,
    /// An empty journal was let go of: it is opened again at the wake.
    pub journal_closed: bool,
    /// Frozen by an operator.
    pub frozen: bool,
    /// The journal's length as `zone-status` last showed it.
    pub journal_bytes: Kept,
    /// What few zones keep at rest: an error, NOTIFYs under way, a catalog's report.
    pub rare: Option<Box<Rare>>,
    /// A zone with timers: what they need, and the deadline it waits for.
    pub timed: Option<Box<Timed>>,
}

/// An `Option<u64>` in 8 bytes (`Option<u64>` takes 16), for what a million resting
/// zones each keep: `u64::MAX` stands for none, so that value itself reads back as none
/// (no time or journal length reaches it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept(u64);

impl Kept {
    /// None.
    pub const NONE: Kept = Kept(u64::MAX);

    /// `value` kept.
    pub fn new(value: Option<u64>) -> Kept {
        Kept(value.unwrap_or(u64::MAX))
    }

    /// The value kept.
    pub fn get(self) -> Option<u64> {
        (self.0 != u64::MAX).then_some(self.0)
    }
}

/// What a resting zone keeps only now and then (most keep none, and no box): the
/// writer's fields of the same names.
#[derive(Debug, Default)]
pub struct Rare {
    /// The last error and when, until something succeeds.
    pub last_error: Option<(u64, String)>,
    /// A consumed catalog's serial whose members were last reported.
    pub catalog_reported: Option<u32>,
    /// NOTIFYs still being sent.
    pub notifying: Box<[JoinHandle<()>]>,
}

/// What a resting zone with timers keeps beside the rest (a primary without any keeps
/// none): the writer's fields of the same names, and its deadline's registration.
#[derive(Debug, Default)]
pub struct Timed {
    /// The generation its deadline was registered under in the timer queue (0: none).
    pub generation: u64,
    /// A secondary's timers.
    pub schedule: Schedule,
    /// A secondary's NOTIFYs, for the pace of its refreshes and log lines.
    pub notices: Option<Box<Notices>>,
    /// The zone's signer, when this server signs it.
    pub signer: Option<Box<Signer>>,
    /// A signing secondary's version from its primary.
    pub upstream: Option<Arc<ZoneContents>>,
    /// A primary's version that its zone file holds, while updates made the served
    /// version differ from it.
    pub file_base: Option<Arc<ZoneContents>>,
    /// When the zone file is written with the updates.
    pub flush_at: Option<u64>,
}

impl Timed {
    /// True when it keeps nothing (then no record keeps it).
    fn is_empty(&self) -> bool {
        self.generation == 0
            && self.schedule == Schedule::default()
            && self.notices.is_none()
            && self.signer.is_none()
            && self.upstream.is_none()
            && self.file_base.is_none()
            && self.flush_at.is_none()
    }
}

impl Dormant {
    /// The record of a zone not loaded yet: its writer starts when told to load
    /// ([`crate::plane`] paces the loads of many zones so that few writers run at once).
    pub fn unloaded(plan: Arc<ZonePlan>) -> Dormant {
        Dormant {
            plan,
            current: None,
            source: None,
            loaded_at: Kept::NONE,
            journal: None,
            journal_closed: false,
            frozen: false,
            journal_bytes: Kept::NONE,
            rare: None,
            timed: None,
        }
    }

    /// What `zone-status` shows: what the writer showed when it went to rest.
    pub fn status(&self) -> ZoneStatus {
        let zone = self.current.as_ref();
        let last_error = self.rare.as_ref().and_then(|rare| rare.last_error.clone());
        let timed = self.timed.as_deref();
        let mut status = ZoneStatus {
            zone: self.plan.name.to_string(),
            serial: zone.map(|z| z.serial()),
            records: zone.map_or(0, |z| z.record_count() as u64),
            loaded_at: self.loaded_at.get(),
            journal_bytes: self.journal_bytes.get(),
            unflushed: timed.is_some_and(|t| t.file_base.is_some()),
            frozen: self.frozen,
            last_error: last_error.or_else(|| refused(self.journal.as_ref(), self.loaded_at.get())),
            ..ZoneStatus::default()
        };
        let schedule = timed.map_or_else(Schedule::default, |t| t.schedule);
        show_role(&self.plan, &schedule, &mut status);
        status
    }

    /// True while it waits for the deadline registered under `generation`.
    pub fn waits_for(&self, generation: u64) -> bool {
        generation != 0 && self.timed.as_ref().is_some_and(|t| t.generation == generation)
    }
}

/// What `zone-status` shows of a zone's role and, for a secondary, its timers (a
/// running writer's or a resting one's).
pub(crate) fn show_role(plan: &ZonePlan, schedule: &Schedule, status: &mut ZoneStatus) {
    let secondary = matches!(plan.role, Role::Secondary(_));
    status.role = if secondary { "secondary" } else { "primary" }.into();
    status.last_refresh = Some(schedule.last_refresh).filter(|&t| secondary && t > 0);
    status.next_refresh = schedule.refresh_at.filter(|_| secondary);
    status.expires_at = schedule.expire_at.filter(|_| secondary);
    status.expired = schedule.expired;
}

/// Why `journal` refuses changes, as `zone-status` shows it (never waiting for its lock).
pub fn refused(journal: Option<&SharedJournal>, loaded_at: Option<u64>) -> Option<(u64, String)> {
    let journal = journal?.try_lock().ok()?;
    journal.refused().map(|why| (loaded_at.unwrap_or(0), why.to_owned()))
}

impl Writer {
    /// The writer of the zone of `slot` woken from rest, showing `status`.
    pub fn from_dormant(
        record: Dormant,
        slot: Arc<ZoneSlot>,
        status: Arc<Mutex<ZoneStatus>>,
        shared: Arc<Shared>,
    ) -> Writer {
        let mut writer = Writer::with_status(record.plan, slot, shared, status);
        writer.current = record.current;
        writer.source = record.source;
        writer.loaded_at = record.loaded_at.get();
        writer.journal = record.journal;
        writer.journal_closed = record.journal_closed;
        writer.frozen = record.frozen;
        let rare = record.rare.map(|rare| *rare).unwrap_or_default();
        writer.last_error = rare.last_error;
        writer.catalog_reported = rare.catalog_reported;
        writer.notifying = rare.notifying.into_vec();
        let timed = record.timed.map(|t| *t).unwrap_or_default();
        writer.schedule = timed.schedule;
        writer.notices = timed.notices;
        writer.signer = timed.signer;
        writer.upstream = timed.upstream;
        writer.file_base = timed.file_base;
        writer.flush_at = timed.flush_at;
        writer
    }

    /// True when nothing is under way, being retried or due within [`REST_AFTER`] but
    /// tasks of its own that end by themselves (a file being written, NOTIFYs being
    /// sent): see the module comment.
    pub(crate) fn restful(&self) -> bool {
        let soon = self.now().saturating_add(REST_AFTER.as_secs());
        self.txn.is_none()
            && self.refreshing.is_none()
            && self.schedule.failures == 0
            && !self.schedule.expired
            && !self.journal_closed
            && !self.notices.as_ref().is_some_and(|n| n.before_load) // awaits its load
            && self.next_wake().is_none_or(|at| at > soon)
    }

    /// True when its file is written (a secondary's: a primary has none).
    pub(crate) fn tasks_done(&self) -> bool {
        self.storing.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// What the writer keeps at rest, taken from it (it ends next); `generation` is
    /// its deadline's, 0 without one.
    pub(crate) fn take_dormant(&mut self, generation: u64) -> Dormant {
        let journal = self.journal.take();
        let empty = journal.as_ref().is_some_and(|j| {
            Arc::strong_count(j) == 1
                && j.try_lock().is_ok_and(|j| j.is_empty() && j.refused().is_none())
        });
        let journal_bytes = self.status.lock().ok().and_then(|s| s.journal_bytes);
        Dormant {
            plan: Arc::clone(&self.plan),
            current: self.current.take(),
            source: self.source.take(),
            loaded_at: Kept::new(self.loaded_at),
            journal: journal.filter(|_| !empty),
            journal_closed: empty,
            frozen: self.frozen,
            journal_bytes: Kept::new(journal_bytes),
            rare: self.take_rare(),
            timed: self.take_timed(generation),
        }
    }

    /// What only some zones keep at rest, taken from it; `None` when it has none.
    fn take_rare(&mut self) -> Option<Box<Rare>> {
        let rare = Rare {
            last_error: self.last_error.take(),
            catalog_reported: self.catalog_reported,
            notifying: self.notifying.drain(..).filter(|t| !t.is_finished()).collect(),
        };
        let empty = rare.last_error.is_none()
            && rare.catalog_reported.is_none()
            && rare.notifying.is_empty();
        (!empty).then(|| Box::new(rare))
    }

    /// What its timers need, taken from it; `None` when it has none.
    fn take_timed(&mut self, generation: u64) -> Option<Box<Timed>> {
        let timed = Timed {
            generation,
            schedule: std::mem::take(&mut self.schedule),
            notices: self.notices.take(),
            signer: self.signer.take(),
            upstream: self.upstream.take(),
            file_base: self.file_base.take(),
            flush_at: self.flush_at.take(),
        };
        (!timed.is_empty()).then(|| Box::new(timed))
    }

    /// Opens the journal let go of at rest, before the first event after the wake.
    pub(crate) async fn reopen_journal(&mut self) {
        self.journal_closed = false;
        let (changes, _) = self.open_journal().await;
        if !changes.is_empty() {
            // It was empty when let go of, and only this writer writes it.
            warn!(zone = %self.plan.name, changes = changes.len(), "journal: changes found at a wake, left to the next load");
        }
    }
}

#[cfg(test)]
#[path = "dormant_timers_tests.rs"]
mod timers_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ZoneSource;

    #[test]
    fn kept_values_read_back_and_a_resting_entry_stays_small() {
        for value in [None, Some(0), Some(7), Some(u64::MAX - 1)] {
            assert_eq!(Kept::new(value).get(), value);
        }
        assert_eq!(Kept::NONE.get(), None);
        // A million resting zones each hold an entry: 104 bytes (120 with its counts,
        // a 128-byte block in glibc's heap). Two `Option<u64>` fields made it 120.
        assert!(std::mem::size_of::<crate::registry::Entry>() <= 104);
    }

    /// A primary loaded from a file, its journal opened (empty) under `storage`.
    async fn loaded(storage: &std::path::Path) -> Writer {
        let file = storage.join("example.com.zone");
        std::fs::write(&file, crate::testing::ZONE_TEXT).unwrap();
        let plan = crate::testing::primary("example.com.", ZoneSource::File(file));
        let shared = Shared::for_tests(Some(storage.to_owned()));
        let slot = Arc::new(ZoneSlot::new(&plan.name));
        let mut writer = Writer::new(Arc::clone(&plan), slot, shared);
        let (done, _outcome) = tokio::sync::oneshot::channel();
        writer
            .event(crate::event::Event::Load { plan, done: Some(crate::event::LoadDone::to(done)) })
            .await;
        writer
    }

    /// An idle primary rests with its status unchanged, lets go of its empty journal
    /// and opens it again once woken; a frozen one rests too, frozen.
    #[tokio::test]
    async fn an_idle_primary_rests_and_wakes_as_it_was() {
        let storage = tempfile::tempdir().unwrap();
        let mut writer = loaded(storage.path()).await;
        writer.frozen = true;
        writer.show_status();
        assert!(writer.restful() && writer.tasks_done());
        let before = writer.status.lock().unwrap().clone();
        let slot = Arc::clone(&writer.slot);
        let record = writer.take_dormant(0);
        assert_eq!(record.status(), before);
        assert!(record.journal.is_none() && record.journal_closed);
        let current = record.current.clone().unwrap();
        let status = Arc::new(Mutex::new(record.status()));
        let shared = Shared::for_tests(Some(storage.path().to_owned()));
        let mut woken = Writer::from_dormant(record, Arc::clone(&slot), status, shared);
        assert!(!woken.restful(), "not before its journal is open again");
        woken.reopen_journal().await;
        assert!(woken.journal.is_some() && woken.restful());
        woken.show_status();
        assert_eq!(*woken.status.lock().unwrap(), before);
        assert!(Arc::ptr_eq(woken.current.as_ref().unwrap(), &current));
        assert!(Arc::ptr_eq(&slot.contents_full().unwrap(), &current));
    }

    /// NOTIFYs still being sent when the writer rests go on, and are its again once
    /// woken (a newer change replaces them); those done are let go of.
    #[tokio::test]
    async fn notifies_being_sent_are_kept_at_rest() {
        let storage = tempfile::tempdir().unwrap();
        let mut writer = loaded(storage.path()).await;
        let done = tokio::spawn(async {});
        while !done.is_finished() {
            tokio::task::yield_now().await;
        }
        writer.notifying = vec![tokio::spawn(std::future::pending()), done];
        assert!(writer.restful() && writer.tasks_done());
        let slot = Arc::clone(&writer.slot);
        let record = writer.take_dormant(0);
        let rare = record.rare.as_ref().unwrap();
        assert_eq!(rare.notifying.len(), 1, "the one still being sent");
        let status = Arc::new(Mutex::new(record.status()));
        let woken = Writer::from_dormant(record, slot, status, Shared::for_tests(None));
        assert_eq!(woken.notifying.len(), 1);
        assert!(!woken.notifying[0].is_finished());
    }

    /// A writer with something under way, being retried or due soon does not rest; one
    /// whose deadline is further off does.
    #[tokio::test]
    async fn a_writer_with_something_pending_does_not_rest() {
        let storage = tempfile::tempdir().unwrap();
        let mut writer = loaded(storage.path()).await;
        writer.flush_at = Some(writer.now() + 1);
        assert!(!writer.restful(), "a zone file to write now");
        writer.flush_at = Some(writer.now() + 60);
        assert!(writer.restful(), "a zone file to write in a minute");
        writer.flush_at = None;
        writer.txn = Some(tern_engine::Edit::default());
        assert!(!writer.restful(), "a transaction");
        writer.txn = None;
        writer.storing = Some(tokio::spawn(std::future::pending()));
        assert!(writer.restful() && !writer.tasks_done(), "a file being written");
        writer.storing = None;
        let primary = "127.0.0.1:9".parse().unwrap();
        writer.plan = crate::testing::secondary("example.com.", storage.path(), primary);
        writer.schedule.refresh_at = Some(writer.now() + 3600);
        assert!(writer.restful(), "a secondary waiting for its refresh");
        writer.schedule.failures = 1;
        assert!(!writer.restful(), "a secondary retrying");
        writer.schedule.failures = 0;
        writer.schedule.expired = true;
        assert!(!writer.restful(), "an expired secondary");
        writer.schedule.expired = false;
        writer.refreshing = Some(Box::new(crate::state::Refreshing {
            task: tokio::spawn(std::future::pending()),
            full: false,
            base: None,
            primaries: Vec::new(),
            waiters: Vec::new(),
            again: None,
            next_waiters: Vec::new(),
        }));
        assert!(!writer.restful(), "a refresh under way");
    }

    /// A secondary rests with its timers and NOTIFY pace, shows them in `zone-status`
    /// as it did running, and has them again once woken; a primary without timers
    /// keeps no [`Timed`].
    #[tokio::test]
    async fn a_secondary_rests_with_its_timers() {
        let storage = tempfile::tempdir().unwrap();
        let mut writer = loaded(storage.path()).await;
        assert!(writer.take_dormant(0).timed.is_none(), "a primary without timers");
        let mut writer = loaded(storage.path()).await;
        let primary = "127.0.0.1:9".parse().unwrap();
        writer.plan = crate::testing::secondary("example.com.", storage.path(), primary);
        let now = writer.now();
        writer.schedule = crate::state::Schedule {
            refresh_at: Some(now + 7200),
            expire_at: Some(now + 1_209_600),
            last_refresh: now,
            ..Default::default()
        };
        writer.notices = Some(Box::default());
        writer.show_status();
        let before = writer.status.lock().unwrap().clone();
        assert_eq!((before.role.as_str(), before.next_refresh), ("secondary", Some(now + 7200)));
        let slot = Arc::clone(&writer.slot);
        let record = writer.take_dormant(7);
        assert_eq!(record.status(), before, "zone-status at rest");
        assert!(record.waits_for(7) && !record.waits_for(6) && !record.waits_for(0));
        let status = Arc::new(Mutex::new(record.status()));
        let woken = Writer::from_dormant(record, slot, status, Shared::for_tests(None));
        assert_eq!(woken.schedule.refresh_at, Some(now + 7200));
        assert_eq!(woken.next_wake(), Some(now + 7200));
        assert!(woken.notices.is_some());
    }

    /// The control plane, its zones' files and journals under `storage`.
    fn control(storage: &std::path::Path) -> crate::plane::Control {
        crate::plane::Control::start(crate::plane::Options {
            db: Arc::new(tern_zone::ZoneDb::new()),
            max_incoming: 2,
            limits: limits(),
            storage: Some(storage.to_owned()),
            network: Arc::new(crate::testing::NoNetwork),
            clock: Arc::new(crate::clock::SystemClock),
            catalogs_listed: None,
            on_thread_start: Arc::new(|| {}),
            query_stats_rows: 0,
        })
        .unwrap()
    }

    fn limits() -> crate::peer::Limits {
        let second = Duration::from_secs(1);
        crate::peer::Limits { timeout: second, max_size: 1 << 20, max_time: second, idle: second }
    }

    /// Waits until `done` (true) or 20 s passed (false).
    fn eventually(done: impl Fn() -> bool) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !done() {
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Waits until `zone`'s writer rests (true) or 20 s passed (false).
    fn rests(zones: &crate::plane::Zones, zone: &tern_wire::Name) -> bool {
        eventually(|| zones.is_resting(zone))
    }

    /// Through the control plane: a resting primary answers `zone-status` as before,
    /// and wakes for a command and a reload, resting again after each, and for an
    /// update, journaled once its journal is open again; one removed while it rests
    /// is gone.
    #[test]
    fn a_resting_zone_wakes_for_each_kind_of_event() {
        let storage = tempfile::tempdir().unwrap();
        let plans: Vec<_> = ["example.com.", "example.net."]
            .into_iter()
            .map(|origin| {
                let file = storage.path().join(format!("{origin}zone"));
                let text = crate::testing::ZONE_TEXT.replace("example.com.", origin);
                std::fs::write(&file, text).unwrap();
                crate::testing::primary(origin, ZoneSource::File(file))
            })
            .collect();
        let control = control(storage.path());
        assert!(control.apply(&plans, limits(), true).wait(Duration::from_secs(20)));
        let zones = control.zones();
        let (name, other) = (plans[0].name.clone(), plans[1].name.clone());
        assert!(rests(&zones, &name) && rests(&zones, &other));
        let status = zones.status(&name).unwrap();
        assert_eq!((status.serial, status.role.as_str()), (Some(1), "primary"));
        assert!(status.records > 0 && status.loaded_at.is_some());
        // A command.
        let read = crate::event::ZoneCommand::Read { owner: None, rtype: None };
        let text = control.handle().block_on(zones.command(&name, read)).unwrap();
        assert!(text.contains("192.0.2.80"), "{text}");
        assert!(rests(&zones, &name));
        assert_eq!(zones.status(&name).unwrap(), status, "as before");
        // A reload.
        let mut loading = control.apply(&plans, limits(), true);
        assert!(loading.wait(Duration::from_secs(20)));
        assert_eq!(loading.report().failed, 0);
        assert!(rests(&zones, &name));
        assert_eq!(zones.status(&name).unwrap(), status, "unchanged");
        // Removed while resting.
        let mut loading = control.change(&[], std::slice::from_ref(&other), limits());
        assert!(loading.wait(Duration::from_secs(20)));
        assert_eq!((zones.status(&other), zones.names()), (None, vec![name.clone()]));
        // An update from the data plane.
        let served = Arc::new(crate::testing::load("example.com.", crate::testing::ZONE_TEXT));
        let add = [("new.example.com.", tern_wire::Rtype::A, tern_wire::Class::IN, "192.0.2.9")];
        let message = crate::testing::update("example.com.", &add, None);
        let (mut tasks, answers) = crate::testing::update_tasks(&served, &[message]);
        control.update_sink().submit(tasks.remove(0));
        assert_eq!(crate::testing::answered(&answers[0]), tern_wire::Rcode::NOERROR);
        assert!(eventually(|| zones.status(&name).unwrap().serial == Some(2)));
        let after = zones.status(&name).unwrap();
        assert_eq!((after.serial, after.records), (Some(2), status.records + 1));
        assert!(after.journal_bytes.unwrap_or(0) > 0, "journaled: {after:?}");
        assert!(after.unflushed && !zones.is_resting(&name), "the zone file lacks it");
        control.shutdown();
    }
}
