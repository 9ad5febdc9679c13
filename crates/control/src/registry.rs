//! The zones' writers, by zone name, as everyone else finds them: the control plane
//! (which starts and stops them), the control socket (status, commands), and the data
//! plane, which puts each accepted update straight into its zone's writer's inbox.
//!
//! The map is an immutable snapshot behind an `ArcSwap`: readers take it without a
//! lock; the control plane changes a copy and swaps it in (one change at a time). The
//! copy shares all it does not change with the snapshot ([`NameMap`]), so adding or
//! removing one writer beside a million copies a few chunks of the map, not the map. An
//! update thus costs the query worker a lookup and a queue push, and wakes the control
//! plane only when its writer waits idle: a writer gathering a batch (`COMMIT_GAP`)
//! is not woken for each update that joins it.
//!
//! Each zone's [`Entry`] says how its writer is: running (its inbox and status), at rest
//! (a [`Dormant`] record, no task and no inbox: see [`crate::dormant`]) or stopped.
//! Whatever is sent to a writer at rest wakes it: under the entry's lock the record is
//! taken, a new inbox made with what was sent in it, and the writer started again from
//! the record ([`Wake`], a task on the control plane's runtime). A writer goes to rest
//! only under that lock and with its inbox empty ([`Entry::rest`]), and every sender
//! takes the lock, so nothing sent is lost or handled twice.
//!
//! A writer that rests with a deadline (a secondary's refresh, a signed zone's
//! signatures) registers it in the one timer queue of all zones ([`ZoneTimers`],
//! [`crate::timer_queue`]), by its zone's slot, under a generation its record keeps; when it falls due the
//! queue's task wakes the writer the same way, with [`Event::TimerDue`], if it still
//! rests under that generation ([`Writers::timer_due`]). A wake by anything else leaves
//! the deadline in the queue, found stale when it falls due: the senders above never
//! touch the queue.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use arc_swap::ArcSwap;
use tern_ctl::proto::ZoneStatus;
use tern_wire::{Dname, Name};
use tern_zone::{Keyed, NameMap, ZoneSlot};
use tracing::warn;

use crate::dormant::Dormant;
use crate::event::{Event, WriterInbox};
use crate::inbox::Receiver;
use crate::shared::ZoneTimers;
use crate::updates::{UpdateSink, UpdateTask};

/// One zone's writer, however it is (see the module comment).
#[derive(Debug)]
pub struct Entry {
    /// The zone's slot, whose origin the writers' map finds the entry by (so that the
    /// map keeps no name of its own for each zone).
    slot: Arc<ZoneSlot>,
    life: Mutex<Life>,
}

impl Keyed for Entry {
    fn key(&self) -> &Dname {
        self.slot.origin()
    }
}

#[derive(Debug)]
enum Life {
    /// Its task runs: its inbox, and what it last showed of the zone.
    Running { inbox: Arc<WriterInbox>, status: Arc<Mutex<ZoneStatus>> },
    /// At rest: what it keeps.
    Dormant(Dormant),
    /// The zone was removed.
    Stopped,
}

/// A writer at rest, woken: what [`Wake`] starts again.
#[derive(Debug)]
pub struct Woken {
    /// Its entry, where it rests again.
    pub entry: Arc<Entry>,
    /// What it kept.
    pub record: Dormant,
    /// Its new inbox, what woke it inside.
    pub inbox: Receiver<Event, UpdateTask>,
    /// Where it shows its status (showing the record's already).
    pub status: Arc<Mutex<ZoneStatus>>,
}

/// Starts a woken writer's task (the control plane's runtime; called by whoever woke
/// it, a query worker too: it must not block).
pub type Wake = Box<dyn Fn(Woken) + Send + Sync>;

impl Entry {
    /// The entry of a running writer of the zone of `slot`, with its `inbox` and
    /// `status`.
    pub fn running(
        slot: Arc<ZoneSlot>,
        inbox: Arc<WriterInbox>,
        status: Arc<Mutex<ZoneStatus>>,
    ) -> Arc<Entry> {
        Arc::new(Entry { slot, life: Mutex::new(Life::Running { inbox, status }) })
    }

    /// The entry of a writer at rest of the zone of `slot` (not started yet: see
    /// [`Dormant::unloaded`]).
    pub fn dormant(slot: Arc<ZoneSlot>, record: Dormant) -> Arc<Entry> {
        Arc::new(Entry { slot, life: Mutex::new(Life::Dormant(record)) })
    }

    /// The zone's name.
    pub fn name(&self) -> &Name {
        self.slot.origin()
    }

    /// The zone's slot, which its writer publishes to (a woken one too).
    pub fn slot(&self) -> &Arc<ZoneSlot> {
        &self.slot
    }

    fn life(&self) -> MutexGuard<'_, Life> {
        self.life.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What `zone-status` shows (`None` once stopped).
    pub fn status(&self) -> Option<ZoneStatus> {
        let status = match &*self.life() {
            Life::Running { status, .. } => Arc::clone(status),
            Life::Dormant(record) => return Some(record.status()),
            Life::Stopped => return None,
        };
        let status = status.lock().ok()?.clone();
        Some(status)
    }

    /// True while the writer rests.
    pub fn is_resting(&self) -> bool {
        matches!(*self.life(), Life::Dormant(_))
    }

    /// True while the writer rests waiting for the deadline it registered under
    /// `generation` (see the module comment).
    pub fn waits_for(&self, generation: u64) -> bool {
        matches!(&*self.life(), Life::Dormant(record) if record.waits_for(generation))
    }

    /// Puts the running writer whose end of the inbox is `inbox` to rest, keeping what
    /// `record` takes from it, unless something waits in its inbox or it was stopped:
    /// true if it rests (its task then ends).
    pub fn rest(
        &self,
        inbox: &Receiver<Event, UpdateTask>,
        record: impl FnOnce() -> Dormant,
    ) -> bool {
        let mut life = self.life();
        if !matches!(*life, Life::Running { .. }) || !inbox.is_empty() {
            return false;
        }
        // Empty, and no one sends to it but under this lock: nothing is dropped.
        drop(inbox.close());
        *life = Life::Dormant(record());
        true
    }

    /// Stops the writer (its zone was removed): told to if it runs, its record dropped
    /// if it rests.
    pub fn stop(&self) {
        match std::mem::replace(&mut *self.life(), Life::Stopped) {
            Life::Running { inbox, .. } => {
                let _ = inbox.send(Event::Stop);
            }
            Life::Dormant(record) => {
                record.rare.iter().flat_map(|rare| rare.notifying.iter()).for_each(|t| t.abort());
            }
            Life::Stopped => {}
        }
    }
}

/// The writers by zone name (each entry found by its slot's origin).
pub type WriterMap = NameMap<Arc<Entry>>;

/// The writers (see the module comment).
pub struct Writers {
    map: ArcSwap<WriterMap>,
    /// Held while a copy is changed, so that two changes never lose one another.
    changing: Mutex<()>,
    /// Updates dropped for want of a writer or of room, logged at most once a second.
    dropped: Dropped,
    /// Starts a woken writer.
    wake: Wake,
    /// Updates waiting for each writer, at most.
    max_updates: usize,
}

impl std::fmt::Debug for Writers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writers").field("max_updates", &self.max_updates).finish_non_exhaustive()
    }
}

impl Writers {
    /// No writers yet; those woken are started by `wake`, each with room for
    /// `max_updates` updates.
    pub fn new(wake: Wake, max_updates: usize) -> Writers {
        Writers {
            map: ArcSwap::default(),
            changing: Mutex::new(()),
            dropped: Dropped::default(),
            wake,
            max_updates,
        }
    }

    /// The writers now.
    pub fn load(&self) -> Arc<WriterMap> {
        self.map.load_full()
    }

    /// `zone`'s writer, if it has one.
    pub fn get(&self, zone: &Dname) -> Option<Arc<Entry>> {
        self.map.load().get(zone).map(Arc::clone)
    }

    /// Sends `event` to `entry`'s writer, woken if it rests; gives it back once the
    /// writer stopped.
    pub fn send(&self, entry: &Arc<Entry>, event: Event) -> Result<(), Event> {
        self.deliver(entry, event, |inbox, event| inbox.send(event))
    }

    /// [`send`](Self::send), merged into the event sent so that still waits
    /// ([`crate::inbox::Inbox::send_merged`]).
    pub fn send_merged(
        &self,
        entry: &Arc<Entry>,
        event: Event,
        merge: impl FnOnce(&mut Event, Event),
    ) -> Result<(), Event> {
        self.deliver(entry, event, |inbox, event| inbox.send_merged(event, merge))
    }

    /// Puts `item` in `entry`'s writer's inbox with `put`, waking the writer first if
    /// it rests (see the module comment).
    fn deliver<T>(
        &self,
        entry: &Arc<Entry>,
        item: T,
        put: impl FnOnce(&WriterInbox, T) -> Result<(), T>,
    ) -> Result<(), T> {
        let life = entry.life();
        if let Life::Running { inbox, .. } = &*life {
            return put(inbox, item);
        }
        self.wake_from_rest(life, entry, item, put)
    }

    /// A deadline `entry`'s writer registered under `generation` when it went to rest
    /// fell due: it is woken with [`Event::TimerDue`] if it still rests under that
    /// generation; otherwise the deadline is stale (see the module comment).
    pub fn timer_due(&self, entry: &Arc<Entry>, generation: u64) {
        let life = entry.life();
        if matches!(&*life, Life::Dormant(record) if record.waits_for(generation)) {
            let _ =
                self.wake_from_rest(life, entry, Event::TimerDue, |inbox, event| inbox.send(event));
        }
    }

    /// Wakes `entry`'s writer, at rest under `life` (its lock), with `item` put in its
    /// new inbox by `put`; gives `item` back if the writer stopped.
    fn wake_from_rest<T>(
        &self,
        mut life: MutexGuard<'_, Life>,
        entry: &Arc<Entry>,
        item: T,
        put: impl FnOnce(&WriterInbox, T) -> Result<(), T>,
    ) -> Result<(), T> {
        let Life::Dormant(record) = std::mem::replace(&mut *life, Life::Stopped) else {
            return Err(item);
        };
        let (inbox, receiver) = crate::inbox::inbox(self.max_updates);
        let status = Arc::new(Mutex::new(record.status()));
        let put = put(&inbox, item);
        *life = Life::Running { inbox, status: Arc::clone(&status) };
        drop(life);
        (self.wake)(Woken { entry: Arc::clone(entry), record, inbox: receiver, status });
        put
    }

    /// Changes the map with `f` (on a copy, swapped in after); returns what `f` did.
    pub fn change<R>(&self, f: impl FnOnce(&mut WriterMap) -> R) -> R {
        let _one_at_a_time = self.changing.lock().unwrap_or_else(|p| p.into_inner());
        let mut map = WriterMap::clone(&self.map.load());
        let out = f(&mut map);
        self.map.store(Arc::new(map));
        out
    }
}

impl UpdateSink for Writers {
    /// Queues `task` for its zone's writer; without one, or with its queue full, the
    /// task is dropped, which answers SERVFAIL.
    fn submit(&self, task: UpdateTask) {
        let Some(zone) = task.request().map(|r| r.zone()) else { return };
        let map = self.map.load();
        let Some(entry) = map.get(zone) else {
            return self.dropped.note("update for a zone without a writer: SERVFAIL", zone);
        };
        if let Err(task) = self.deliver(entry, task, |inbox, task| inbox.try_send_update(task)) {
            if let Some(request) = task.request() {
                let why = "update answered SERVFAIL: the zone's writer is behind";
                self.dropped.note(why, request.zone());
            }
        }
    }
}

/// Runs `timers`, waking each writer of `writers` whose deadline falls due (the control
/// plane's runtime: one task for every zone). A deadline names its zone by its slot:
/// a zone removed, or served by another entry since, is not woken by it.
pub async fn run_timers(timers: Arc<ZoneTimers>, writers: Arc<Writers>) {
    let entry = |slot: &Weak<ZoneSlot>| writers.get(slot.upgrade()?.origin());
    let fire = |(slot, generation): (Weak<ZoneSlot>, u64)| {
        if let Some(entry) = entry(&slot) {
            writers.timer_due(&entry, generation);
        }
    };
    let live = |(slot, generation): &(Weak<ZoneSlot>, u64)| {
        entry(slot).is_some_and(|entry| entry.waits_for(*generation))
    };
    timers.run(fire, live).await;
}

/// A log of dropped updates that a flood of them cannot fill: one line a second at most,
/// with how many were dropped since the last.
#[derive(Debug, Default)]
struct Dropped {
    second: AtomicU64,
    count: AtomicU64,
}

impl Dropped {
    fn note(&self, what: &str, zone: &tern_wire::Dname) {
        let now = crate::clock::unix_now(); // the log's pace, not the zone's time
        let count = self.count.fetch_add(1, Relaxed) + 1;
        if self.second.swap(now, Relaxed) != now {
            self.count.fetch_sub(count, Relaxed);
            warn!(zone = %zone, dropped = count, "{what}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Notified;
    use crate::inbox::Next;
    use crate::plan::ZoneSource;
    use std::collections::BTreeSet;
    use std::sync::mpsc;

    /// Writers whose woken writers come out of the receiver returned.
    fn writers() -> (Arc<Writers>, mpsc::Receiver<Woken>) {
        let (woken, wakes) = mpsc::channel();
        let woken = Mutex::new(woken);
        let wake: Wake = Box::new(move |w| woken.lock().unwrap().send(w).unwrap());
        (Arc::new(Writers::new(wake, 100_000)), wakes)
    }

    /// What a resting primary of `example.com.` keeps.
    fn record() -> Dormant {
        let plan = crate::testing::primary("example.com.", ZoneSource::Embedded(""));
        let zone = Arc::new(crate::testing::load("example.com.", crate::testing::ZONE_TEXT));
        Dormant {
            plan,
            current: Some(zone),
            source: None,
            loaded_at: crate::dormant::Kept::new(Some(7)),
            journal: None,
            journal_closed: false,
            frozen: false,
            journal_bytes: crate::dormant::Kept::new(Some(12)),
            rare: None,
            timed: None,
        }
    }

    /// An entry at rest, in `writers` as `example.com.`.
    fn resting(writers: &Writers) -> Arc<Entry> {
        let (inbox, receiver) = crate::inbox::inbox(4);
        let entry =
            Entry::running(example_slot(), inbox, Arc::new(Mutex::new(ZoneStatus::default())));
        assert!(entry.rest(&receiver, record));
        writers.change(|map| map.insert(Arc::clone(&entry)));
        entry
    }

    /// The slot of `example.com.`.
    fn example_slot() -> Arc<ZoneSlot> {
        Arc::new(ZoneSlot::new(&"example.com.".parse::<Name>().unwrap()))
    }

    fn notify(serial: u32) -> Event {
        let from = "192.0.2.1:53".parse().unwrap();
        Event::Notify(Box::new(Notified { serial: Some(serial), from, merged: 0 }))
    }

    #[test]
    fn a_change_is_seen_by_the_next_load_and_not_by_one_taken_before() {
        let (writers, _) = writers();
        let before = writers.load();
        let name: Name = "example.".parse().unwrap_or_else(|_| unreachable!());
        let (inbox, _receiver) = crate::inbox::inbox(4);
        let status = Arc::new(Mutex::new(ZoneStatus::default()));
        let slot = Arc::new(ZoneSlot::new(&name));
        writers.change(|map| map.insert(Entry::running(slot, inbox, status)));
        assert!(before.get(&name).is_none());
        assert!(writers.get(&name).is_some());
        assert!(writers.change(|map| map.remove(&name)).is_some());
        assert!(writers.get(&name).is_none());
    }

    /// An event, a merged NOTIFY or an update sent to a resting writer wakes it once,
    /// with what was sent in its new inbox and its status as it was; what follows goes
    /// to that inbox.
    #[tokio::test]
    async fn what_is_sent_to_a_resting_writer_wakes_it() {
        let zone = Arc::new(crate::testing::load("example.com.", crate::testing::ZONE_TEXT));
        let message = crate::testing::update("example.com.", &[], None);
        let (mut tasks, _answers) =
            crate::testing::update_tasks(&zone, &[message.clone(), message]);
        for kind in ["event", "merged", "update"] {
            let (writers, wakes) = writers();
            let entry = resting(&writers);
            assert_eq!(entry.status(), Some(record().status()));
            let sent = match kind {
                "event" => writers.send(&entry, notify(1)).is_ok(),
                "merged" => writers.send_merged(&entry, notify(1), |_, _| {}).is_ok(),
                _ => {
                    writers.submit(tasks.pop().unwrap());
                    true
                }
            };
            assert!(sent && !entry.is_resting(), "{kind}");
            let woken = wakes.try_recv().unwrap();
            assert!(Arc::ptr_eq(&woken.entry, &entry));
            assert_eq!(*woken.status.lock().unwrap(), record().status());
            assert_eq!(entry.status(), Some(record().status()));
            writers.send(&entry, notify(2)).unwrap();
            assert!(wakes.try_recv().is_err(), "{kind}: woken once");
            let (mut serials, mut updates) = (Vec::new(), 0);
            while !woken.inbox.is_empty() {
                match woken.inbox.next(8).await {
                    Next::Event(Event::Notify(n)) => serials.push(n.serial.unwrap()),
                    Next::Event(_) => unreachable!(),
                    Next::Updates(batch) => updates += batch.len(),
                }
            }
            serials.sort_unstable();
            let (want, want_updates) =
                if kind == "update" { (vec![2], 1) } else { (vec![1, 2], 0) };
            assert_eq!((serials, updates), (want, want_updates), "{kind}");
        }
    }

    /// A deadline wakes the writer resting under its generation once, with
    /// [`Event::TimerDue`]; not one woken meanwhile (even resting again, under another
    /// generation), nor one stopped.
    #[tokio::test]
    async fn a_deadline_wakes_only_the_rest_it_was_registered_for() {
        let (writers, wakes) = writers();
        let timed = |generation| {
            let timed = crate::dormant::Timed { generation, ..Default::default() };
            Dormant { timed: Some(Box::new(timed)), ..record() }
        };
        let (inbox, receiver) = crate::inbox::inbox(4);
        let entry =
            Entry::running(example_slot(), inbox, Arc::new(Mutex::new(ZoneStatus::default())));
        assert!(entry.rest(&receiver, || timed(1)));
        assert!(entry.waits_for(1) && !entry.waits_for(2));
        writers.timer_due(&entry, 2);
        assert!(entry.is_resting() && wakes.try_recv().is_err(), "not its generation");
        writers.timer_due(&entry, 1);
        let woken = wakes.try_recv().unwrap();
        assert!(matches!(woken.inbox.next(1).await, Next::Event(Event::TimerDue)));
        writers.timer_due(&entry, 1);
        assert!(wakes.try_recv().is_err(), "once");
        // Rests again under generation 3: the deadline of 1 is stale.
        assert!(entry.rest(&woken.inbox, || timed(3)));
        writers.timer_due(&entry, 1);
        assert!(entry.is_resting() && wakes.try_recv().is_err(), "stale");
        // Woken by an event, then removed: its deadline wakes nothing.
        writers.send(&entry, notify(1)).unwrap();
        let woken = wakes.try_recv().unwrap();
        writers.timer_due(&entry, 3);
        assert!(wakes.try_recv().is_err() && !entry.waits_for(3), "running");
        assert!(matches!(woken.inbox.next(1).await, Next::Event(Event::Notify(_))));
        assert!(woken.inbox.is_empty(), "no timer event in the running writer's inbox");
        assert!(entry.rest(&woken.inbox, || timed(4)));
        entry.stop();
        writers.timer_due(&entry, 4);
        assert!(wakes.try_recv().is_err() && !entry.waits_for(4), "stopped");
    }

    /// A writer does not rest while something waits for it, nor once stopped; a
    /// stopped entry, at rest or not, refuses what is sent.
    #[test]
    fn a_writer_rests_only_with_nothing_waiting() {
        let (writers, wakes) = writers();
        let (inbox, receiver) = crate::inbox::inbox(4);
        let entry =
            Entry::running(example_slot(), inbox, Arc::new(Mutex::new(ZoneStatus::default())));
        writers.send(&entry, notify(1)).unwrap();
        assert!(!entry.rest(&receiver, record));
        entry.stop();
        assert!(!entry.rest(&receiver, record), "stopped");
        assert_eq!(entry.status(), None);
        assert!(writers.send(&entry, notify(2)).is_err());
        let entry = resting(&writers);
        entry.stop();
        assert!(writers.send(&entry, notify(3)).is_err());
        assert!(wakes.try_recv().is_err(), "a stopped writer is not woken");
    }

    /// Senders on several threads while the writer rests whenever its inbox is empty:
    /// every event and update is taken once, none lost, none twice.
    #[test]
    fn nothing_is_lost_or_taken_twice_while_a_writer_rests_and_wakes() {
        const SENDERS: u32 = 4;
        const EACH: u32 = 2000;
        const UPDATES: usize = 200;
        let (writers, wakes) = writers();
        let entry = resting(&writers);
        let zone = Arc::new(crate::testing::load("example.com.", crate::testing::ZONE_TEXT));
        let messages = vec![crate::testing::update("example.com.", &[], None); UPDATES];
        let (tasks, _answers) = crate::testing::update_tasks(&zone, &messages);
        let writer = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let (mut events, mut updates, mut wakes_seen) = (Vec::new(), 0, 0);
            while let Ok(woken) = wakes.recv() {
                wakes_seen += 1;
                let mut record = Some(woken.record);
                loop {
                    while !woken.inbox.is_empty() {
                        match runtime.block_on(woken.inbox.next(16)) {
                            Next::Event(Event::Notify(n)) => events.push(n.serial.unwrap()),
                            Next::Event(_) => unreachable!(),
                            Next::Updates(batch) => updates += batch.len(),
                        }
                    }
                    if woken.entry.rest(&woken.inbox, || record.take().unwrap()) {
                        break;
                    }
                }
            }
            (events, updates, wakes_seen)
        });
        let senders: Vec<_> = (0..SENDERS)
            .map(|t| {
                let (writers, entry) = (Arc::clone(&writers), Arc::clone(&entry));
                std::thread::spawn(move || {
                    for n in 0..EACH {
                        writers.send(&entry, notify(t * EACH + n)).unwrap();
                        if n % 64 == 0 {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            writers.submit(task);
        }
        for sender in senders {
            sender.join().unwrap();
        }
        // Once it rests, one more wakes it again; then no more wakes can come.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !entry.is_resting() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        writers.send(&entry, notify(SENDERS * EACH)).unwrap();
        while !entry.is_resting() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        drop(writers);
        let (events, updates, wakes_seen) = writer.join().unwrap();
        let distinct: BTreeSet<u32> = events.iter().copied().collect();
        assert_eq!(events.len(), (SENDERS * EACH + 1) as usize, "each taken once");
        assert_eq!(distinct.len(), events.len());
        assert_eq!(updates, UPDATES);
        assert!(entry.is_resting());
        assert!(wakes_seen >= 2, "it rested and woke again ({wakes_seen} wakes)");
    }
}
