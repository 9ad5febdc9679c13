//! The commit function driven in-process (issue 50): each kind of event reaches it — a
//! load and a reload, a batch of updates, a transaction, a transfer in (AXFR, then IXFR
//! after a NOTIFY), a refresh by the timer on a clock the test drives — against an
//! in-memory primary; and its failures lose nothing: a journal that fails publishes and
//! acknowledges nothing, a version replaced behind the writer is refused before anything
//! is journaled.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tern_ctl::proto::TxnStep;
use tern_journal::Journal;
use tern_wire::{Class, Rcode, Rtype};
use tern_zone::{ZoneContents, ZoneSlot};
use tokio::sync::oneshot;

use crate::clock::{Clock, SystemClock, TokioClock};
use crate::commands::ZoneCommand;
use crate::inbox::{Next, Receiver};
use crate::peer::Network;
use crate::plan::{Remote, ZonePlan, ZoneSource};
use crate::testing::{self, answered, MemoryPrimary, ZONE_TEXT};
use crate::updates::UpdateTask;
use crate::writer::Writer;
use crate::{Event, LoadOutcome, Notified, Shared};

const ORIGIN: &str = "example.com.";

/// A zone's writer and what the test looks at.
struct Zone {
    writer: Writer,
    slot: Arc<ZoneSlot>,
    storage: PathBuf,
    receiver: Receiver<Event, UpdateTask>,
}

impl Zone {
    fn new(
        plan: Arc<ZonePlan>,
        storage: &Path,
        network: Arc<dyn Network>,
        clock: Arc<dyn Clock>,
    ) -> Zone {
        let shared = Shared::with(Some(storage.to_owned()), network, clock);
        let slot = Arc::new(ZoneSlot::new(&plan.name));
        let mut writer = Writer::new(plan, Arc::clone(&slot), shared);
        let (inbox, receiver) = crate::inbox::inbox(16);
        writer.inbox = Some(inbox);
        Zone { writer, slot, storage: storage.to_owned(), receiver }
    }

    async fn load(&mut self) -> LoadOutcome {
        let (done, outcome) = oneshot::channel();
        let plan = Arc::clone(&self.writer.plan);
        self.writer.event(Event::Load { plan, done: Some(crate::event::LoadDone::to(done)) }).await;
        outcome.await.unwrap()
    }

    fn served(&self) -> Option<u32> {
        self.slot.contents_full().map(|z| z.serial())
    }

    fn journal_frames(&self) -> u64 {
        let path = crate::journaled::path(&self.storage, &self.writer.plan.name);
        Journal::open(&path).map_or(0, |opened| opened.journal.frames())
    }

    /// Sends UPDATEs adding `names` (each `name.example.com. A 192.0.2.1`) as one
    /// batch; their RCODEs.
    async fn update(&mut self, names: &[&str]) -> Vec<Rcode> {
        let zone =
            self.slot.contents_full().unwrap_or_else(|| Arc::new(testing::load(ORIGIN, ZONE_TEXT)));
        let messages: Vec<Vec<u8>> = names
            .iter()
            .map(|n| {
                let owner = format!("{n}.{ORIGIN}");
                testing::update(ORIGIN, &[(&owner, Rtype::A, Class::IN, "192.0.2.1")], None)
            })
            .collect();
        let (tasks, answers) = testing::update_tasks(&zone, &messages);
        drop(zone);
        self.writer.updates(tasks).await;
        answers.iter().map(answered).collect()
    }

    async fn command(&mut self, command: ZoneCommand) -> crate::commands::Outcome {
        let (reply, outcome) = oneshot::channel();
        self.writer.event(Event::Command { command: Box::new(command), reply }).await;
        outcome.await.unwrap()
    }

    /// The next event the writer sent itself (a refresh's outcome), taken.
    async fn take_own_event(&mut self) {
        let next = tokio::time::timeout(Duration::from_secs(10), self.receiver.next(1)).await;
        match next {
            Ok(Next::Event(event)) => self.writer.event(event).await,
            other => panic!("no event from the writer: {other:?}"),
        }
    }
}

/// A primary zone from a file in `dir`, notifying one secondary, its journal in
/// `dir/storage`.
fn primary_zone(dir: &Path, network: Arc<dyn Network>) -> Zone {
    let file = dir.join("example.com.zone");
    if !file.exists() {
        std::fs::write(&file, ZONE_TEXT).unwrap();
    }
    let mut plan = ZonePlan::clone(&testing::primary(ORIGIN, ZoneSource::File(file)));
    let target = Remote {
        id: "s".into(),
        addrs: vec!["127.0.0.1:9".parse().unwrap()],
        key: None,
        via: vec![],
        tls: None,
    };
    plan.notify = vec![target];
    Zone::new(Arc::new(plan), &dir.join("storage"), network, Arc::new(SystemClock))
}

async fn notified(primary: &MemoryPrimary, at_least: usize) -> bool {
    for _ in 0..500 {
        if primary.notifies.load(Relaxed) >= at_least {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// A load, a batch of updates, a transaction and a reload each commit: journaled before
/// they are served, the updates answered after, the secondaries told; a restart serves
/// what was committed.
#[tokio::test]
async fn every_change_of_a_primary_goes_through_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let network = MemoryPrimary::new(ORIGIN, ZONE_TEXT); // here: the secondary told
    let mut zone = primary_zone(dir.path(), Arc::clone(&network) as Arc<dyn Network>);
    assert!(matches!(zone.load().await, LoadOutcome::Loaded { serial: 1, .. }));
    assert_eq!(zone.update(&["a", "b"]).await, [Rcode::NOERROR, Rcode::NOERROR]);
    assert_eq!((zone.served(), zone.journal_frames()), (Some(2), 1));
    assert!(notified(&network, 1).await, "NOTIFY after the commit");
    for step in [
        TxnStep::Begin,
        TxnStep::Set { owner: "t".into(), ttl: None, rtype: "TXT".into(), rdata: "\"x\"".into() },
        TxnStep::Commit,
    ] {
        zone.command(ZoneCommand::Txn(step)).await.unwrap();
    }
    assert_eq!((zone.served(), zone.journal_frames()), (Some(3), 2));
    let history = zone.slot.contents_full().unwrap().history().len();
    assert_eq!(history, 2, "the history has each change");
    // A restart replays the journal onto the zone file.
    let mut again = primary_zone(dir.path(), network);
    assert!(matches!(again.load().await, LoadOutcome::Loaded { serial: 3, .. }));
    assert_eq!(again.slot.contents_full().unwrap().history().len(), 2);
}

/// An edit of the zone file while it lacks acknowledged updates, reloaded: the edit is
/// merged with the updates, and the file holds the merged version before the merge is
/// journaled, so that a crash before the next flush loses neither (the file used to
/// keep the edit alone, at the serial the journal ended at: the updates were not
/// replayed).
#[tokio::test]
async fn an_edit_merged_with_updates_survives_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let mut zone = primary_zone(dir.path(), Arc::new(testing::NoNetwork));
    zone.load().await;
    assert_eq!(zone.update(&["a", "b"]).await, [Rcode::NOERROR, Rcode::NOERROR]);
    let edited = ZONE_TEXT.replace("hostmaster 1 ", "hostmaster 10 ") + "edit A 192.0.2.10\n";
    std::fs::write(dir.path().join("example.com.zone"), edited).unwrap();
    assert!(matches!(zone.load().await, LoadOutcome::Loaded { serial: 10, .. }));
    drop(zone); // a crash: the zone file is not flushed (zonefile-sync 60 s)
    let mut again = primary_zone(dir.path(), Arc::new(testing::NoNetwork));
    again.load().await;
    let served = again.slot.contents_full().unwrap();
    assert_eq!(served.serial(), 10);
    for name in ["a", "b", "edit"] {
        let owner: tern_wire::Name = format!("{name}.{ORIGIN}").parse().unwrap();
        assert!(served.find(&owner).is_some(), "{owner} lost");
    }
}

/// A journal that refuses (its write failing) publishes nothing and acknowledges
/// nothing: the updates are answered SERVFAIL, the served version stays, and a
/// transaction stays open.
#[tokio::test]
async fn a_journal_that_fails_publishes_and_acknowledges_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut zone = primary_zone(dir.path(), Arc::new(testing::NoNetwork));
    zone.load().await;
    let before = zone.slot.contents_full().unwrap();
    let path = crate::journaled::path(&zone.storage, &zone.writer.plan.name);
    let refusing = Journal::refusing(&path, "the disk failed (test)".into());
    zone.writer.journal = Some(Arc::new(Mutex::new(refusing)));
    assert_eq!(zone.update(&["a"]).await, [Rcode::SERVFAIL]);
    assert!(Arc::ptr_eq(&before, &zone.slot.contents_full().unwrap()), "nothing published");
    zone.command(ZoneCommand::Txn(TxnStep::Begin)).await.unwrap();
    let set =
        TxnStep::Set { owner: "t".into(), ttl: None, rtype: "A".into(), rdata: "192.0.2.9".into() };
    zone.command(ZoneCommand::Txn(set)).await.unwrap();
    let why = zone.command(ZoneCommand::Txn(TxnStep::Commit)).await.unwrap_err();
    assert!(why.to_string().contains("disk failed"), "{why}");
    assert!(zone.writer.txn.is_some(), "the transaction stays open");
    assert_eq!(zone.served(), Some(1));
}

/// A version published behind the writer's back (a bug: nothing else publishes a
/// zone) makes the next change fail before it is journaled: refused, not lost, and
/// nothing in the journal that a restart would replay unasked.
#[tokio::test]
async fn a_version_replaced_behind_the_writer_is_refused_before_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let mut zone = primary_zone(dir.path(), Arc::new(testing::NoNetwork));
    zone.load().await;
    assert_eq!(zone.update(&["a"]).await, [Rcode::NOERROR]);
    let frames = zone.journal_frames();
    let foreign = Arc::new(testing::load(ORIGIN, ZONE_TEXT));
    zone.slot.publish(Arc::clone(&foreign));
    assert_eq!(zone.update(&["b"]).await, [Rcode::SERVFAIL]);
    assert_eq!(zone.journal_frames(), frames, "nothing journaled");
    assert!(Arc::ptr_eq(&zone.slot.contents_full().unwrap(), &foreign), "nothing published");
    assert!(zone.writer.last_error.as_ref().is_some_and(|(_, why)| why.contains("not published")));
}

/// A secondary takes an AXFR, then after a NOTIFY an IXFR, from a primary in memory,
/// each through the commit: the IXFR journaled, and a restart serves it from the kept
/// copy and the journal.
#[tokio::test]
async fn a_secondary_commits_what_it_transfers() {
    let dir = tempfile::tempdir().unwrap();
    let primary = MemoryPrimary::new(ORIGIN, ZONE_TEXT);
    let network = Arc::clone(&primary) as Arc<dyn Network>;
    let plan = testing::secondary(ORIGIN, dir.path(), "127.0.0.1:53".parse().unwrap());
    let mut zone =
        Zone::new(Arc::clone(&plan), dir.path(), Arc::clone(&network), Arc::new(SystemClock));
    assert_eq!(zone.load().await, LoadOutcome::Waiting);
    zone.writer.on_time().await; // the first refresh is due at once
    zone.take_own_event().await;
    assert_eq!((zone.served(), zone.journal_frames()), (Some(1), 0), "AXFR: nothing to journal");
    primary.change(testing::soa_change(&primary.zone(), 2));
    tokio::time::sleep(crate::refresh::NOTIFY_REFRESH_GAP).await; // NOTIFYs are paced
    let from = "127.0.0.1:53".parse().unwrap();
    zone.writer.event(Event::Notify(Box::new(Notified { serial: Some(2), from, merged: 0 }))).await;
    zone.take_own_event().await;
    assert_eq!((zone.served(), zone.journal_frames()), (Some(2), 1), "IXFR: journaled");
    assert_eq!(primary.transfers.load(Relaxed), 2);
    zone.writer.storing.take().unwrap().await.unwrap(); // the kept copy written
    let mut again = Zone::new(plan, dir.path(), network, Arc::new(SystemClock));
    again.load().await;
    assert_eq!(again.served(), Some(2), "kept copy and journal replayed");
}

/// Refresh timers run on the clock the control plane is given: a day of them passes
/// in paused tokio time, each refresh due by the SOA's refresh interval (7200 s).
#[tokio::test(start_paused = true)]
async fn refreshes_come_when_the_clock_says() {
    let dir = tempfile::tempdir().unwrap();
    let primary = MemoryPrimary::new(ORIGIN, ZONE_TEXT);
    let clock = Arc::new(TokioClock::starting_at(1_000_000_000));
    let plan = testing::secondary(ORIGIN, dir.path(), "127.0.0.1:53".parse().unwrap());
    let zone = Zone::new(plan, dir.path(), Arc::clone(&primary) as Arc<dyn Network>, clock);
    let Zone { mut writer, receiver, slot, .. } = zone;
    let (done, outcome) = oneshot::channel();
    let inbox = receiver.inbox();
    inbox
        .send(Event::Load {
            plan: Arc::clone(&writer.plan),
            done: Some(crate::event::LoadDone::to(done)),
        })
        .unwrap();
    writer.inbox = Some(Arc::clone(&inbox));
    let running = tokio::spawn(writer.run(receiver, None));
    assert_eq!(outcome.await.unwrap(), LoadOutcome::Waiting);
    // 24 h of refreshes every 7200 s: 12 SOA checks, one transfer (the first).
    for hour in 1..=24 {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        if hour == 1 {
            assert_eq!(
                slot.contents_full().map(|z| z.serial()),
                Some(1),
                "served after the first refresh"
            );
        }
    }
    assert_eq!(primary.transfers.load(Relaxed), 1, "up to date: SOA checks only");
    primary.change(testing::soa_change(&primary.zone(), 2));
    tokio::time::sleep(Duration::from_secs(7300)).await;
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert_eq!(slot.contents_full().map(|z| z.serial()), Some(2), "the next refresh took it");
    inbox.send(Event::Stop).unwrap();
    running.await.unwrap();
}

/// Committing a whole version keeps nothing of the last one's history; a change
/// applied to the served version goes onto its history.
#[test]
fn histories_follow_the_kind_of_change() {
    let base = Arc::new(testing::load(ORIGIN, ZONE_TEXT));
    let change = testing::soa_change(&base, 2);
    let made =
        super::make(Some(&base), super::Change::Apply(vec![change]), Default::default()).unwrap();
    assert_eq!((made.zone.serial(), made.zone.history().len(), made.journal.len()), (2, 1, 1));
    let whole = ZoneContents::clone(&made.zone);
    let change =
        super::Change::Whole { zone: whole, history: Default::default(), journal: Vec::new() };
    let made = super::make(Some(&base), change, Default::default()).unwrap();
    assert_eq!((made.zone.history().len(), made.journal.len()), (0, 0));
}
