//! One zone's writer: the only code that publishes the zone. It takes [`Event`]s in
//! order and wakes for its timers; what a primary and a secondary do is in
//! [`primary`](crate::primary) and [`secondary`](crate::secondary). Nothing it awaits
//! depends on a remote: a secondary's transfers run on tasks of their own and come back
//! as events ([`refresh`](crate::refresh)), so that a load is never queued behind one.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tern_ctl::proto::ZoneStatus;
use tern_engine::Edit;
use tern_zone::{ZoneContents, ZoneSlot};
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

use crate::counters::control::{control, LoadResult};
use crate::inbox::{Next, Receiver};
use crate::plan::{Role, ZonePlan};
use crate::refresh::{Notices, Refreshing};
use crate::secondary::Schedule;
use crate::updates::UpdateTask;
use crate::{notify, Event, LoadOutcome, Shared, WriterInbox};

/// A zone's writer (see the module comment).
#[derive(Debug)]
pub struct Writer {
    /// The zone's plan, as last applied.
    pub plan: Arc<ZonePlan>,
    /// The slot the data plane reads.
    pub slot: Arc<ZoneSlot>,
    /// What all writers share.
    pub shared: Arc<Shared>,
    /// The version last published (kept by a secondary even once expired, as the base
    /// of the next IXFR).
    pub current: Option<Arc<ZoneContents>>,
    /// A primary's source as last loaded (size and modification time).
    pub source: Option<crate::primary::SourceVersion>,
    /// A secondary's timers.
    pub schedule: Schedule,
    /// NOTIFYs being sent for the current version.
    pub notifying: Vec<JoinHandle<()>>,
    /// The zone file being written (a secondary keeps what it received).
    pub storing: Option<JoinHandle<()>>,
    /// The zone's journal, once opened (`None` before the first load, or when it
    /// cannot be used).
    pub journal: Option<crate::journaled::Shared>,
    /// A primary's version that its zone file holds, while dynamic updates made the
    /// served version differ from it (`None`: the file holds what is served).
    pub file_base: Option<Arc<ZoneContents>>,
    /// When to write the zone file with the updates (seconds since the epoch).
    pub flush_at: Option<u64>,
    /// Frozen by an operator (see [`commands`](crate::commands)).
    pub frozen: bool,
    /// An operator's open transaction.
    pub txn: Option<Edit>,
    /// The last error and when, until something succeeds.
    pub last_error: Option<(u64, String)>,
    /// When the served version was published.
    pub loaded_at: Option<u64>,
    /// What `zone-status` shows, refreshed after every event.
    pub status: Arc<Mutex<ZoneStatus>>,
    /// A consumed catalog's serial whose members were last reported.
    pub catalog_reported: Option<u32>,
    /// When the last batch of updates was committed, and who sent it (see
    /// `dynamic::COMMIT_GAP`).
    pub last_commit: Option<crate::dynamic::LastCommit>,
    /// A secondary's refresh under way.
    pub refreshing: Option<Box<Refreshing>>,
    /// A secondary's NOTIFYs (kept once one came or a refresh started).
    pub notices: Option<Box<Notices>>,
    /// The writer's own inbox, where its refreshes hand back their outcome (set when it
    /// runs).
    pub inbox: Option<Arc<WriterInbox>>,
}

impl Writer {
    /// A writer for an empty slot.
    pub fn new(plan: Arc<ZonePlan>, slot: Arc<ZoneSlot>, shared: Arc<Shared>) -> Writer {
        Writer {
            plan,
            slot,
            shared,
            current: None,
            source: None,
            schedule: Schedule::default(),
            notifying: Vec::new(),
            storing: None,
            journal: None,
            file_base: None,
            flush_at: None,
            frozen: false,
            txn: None,
            last_error: None,
            loaded_at: None,
            status: Arc::new(Mutex::new(ZoneStatus::default())),
            catalog_reported: None,
            last_commit: None,
            refreshing: None,
            notices: None,
            inbox: None,
        }
    }

    /// Takes events and updates until stopped; updates waiting together are committed
    /// together.
    #[allow(clippy::manual_async_fn)] // on purpose: see the first comment
    pub fn run(mut self, inbox: Receiver<Event, UpdateTask>) -> impl Future<Output = ()> + Send {
        // An async block, not an `async fn`: the writer is kept once in the task, not
        // also as the function's argument (about 300 bytes a zone). What each event
        // does is awaited boxed: the task then stays small while it waits, which is
        // most of the time for most of 100,000 zones.
        async move {
            self.inbox = Some(inbox.inbox());
            loop {
                if inbox.is_empty() {
                    self.release_journal();
                }
                self.show_status();
                Box::pin(self.report_catalog()).await;
                // A timer is allocated only when there is one to wait for: most primaries
                // have none.
                let wake = self.next_wake().map(|at| {
                    Box::pin(tokio::time::sleep(Duration::from_secs(at.saturating_sub(self.now()))))
                });
                let sleep = async {
                    match wake {
                        Some(sleep) => sleep.await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    next = inbox.next(crate::dynamic::BATCH) => match next {
                        Next::Event(Event::Stop) => break,
                        Next::Event(event) => Box::pin(self.event(event)).await,
                        Next::Updates(batch) => {
                            let batch = Box::pin(self.paced(batch, &inbox)).await;
                            Box::pin(self.updates(batch)).await
                        }
                    },
                    () = sleep => Box::pin(self.on_time()).await,
                }
            }
            for task in self.notifying.drain(..) {
                task.abort();
            }
            self.stop_refresh();
        }
    }

    /// Carries out one event (not [`Event::Stop`]).
    pub(crate) async fn event(&mut self, event: Event) {
        match event {
            Event::Load { plan, done } => {
                let shared = Arc::clone(&self.shared);
                let _turn = shared.loads.acquire().await;
                let outcome = Box::pin(self.load(plan)).await;
                if let Some(done) = done {
                    let _ = done.send(outcome);
                }
            }
            Event::Notify(notified) => self.notified(*notified),
            Event::Refreshed(fetch) => Box::pin(self.refreshed(*fetch)).await,
            Event::Command { command, reply } => match self.refresh_asked(&command) {
                Some(full) => self.refresh_with(full, Some(reply)),
                None => {
                    let outcome = Box::pin(self.command(*command)).await;
                    let _ = reply.send(outcome);
                }
            },
            Event::Stop => {}
        }
    }

    /// When something is due: a refresh or expiry, or writing the zone file. A frozen
    /// zone waits only for its expiry.
    pub(super) fn next_wake(&self) -> Option<u64> {
        let expiry = self.schedule.expire_at.filter(|_| !self.schedule.expired);
        if self.frozen {
            return expiry;
        }
        // While a refresh is under way its outcome wakes the writer, not the timer.
        let schedule = if self.refreshing.is_some() { expiry } else { self.schedule.next_wake() };
        match (schedule, self.flush_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Refreshes what `zone-status` shows (never waiting for the journal's lock).
    fn show_status(&self) {
        let zone = self.current.as_ref();
        let journal_bytes = self.journal.as_ref().and_then(|j| j.try_lock().ok().map(|j| j.len()));
        let secondary = matches!(self.plan.role, Role::Secondary(_));
        let Ok(mut status) = self.status.lock() else { return };
        let kept_journal = status.journal_bytes;
        *status = ZoneStatus {
            zone: self.plan.name.to_string(),
            role: if secondary { "secondary" } else { "primary" }.into(),
            serial: zone.map(|z| z.serial()),
            records: zone.map_or(0, |z| z.record_count() as u64),
            loaded_at: self.loaded_at,
            last_refresh: Some(self.schedule.last_refresh).filter(|&t| secondary && t > 0),
            next_refresh: self.schedule.refresh_at.filter(|_| secondary),
            expires_at: self.schedule.expire_at.filter(|_| secondary),
            expired: self.schedule.expired,
            journal_bytes: journal_bytes.or(kept_journal),
            unflushed: self.file_base.is_some(),
            frozen: self.frozen,
            transaction: self.txn.is_some(),
            last_error: self.last_error.clone().or_else(|| {
                let journal = self.journal.as_ref()?.try_lock().ok()?;
                journal.refused().map(|why| (self.loaded_at.unwrap_or(0), why.to_owned()))
            }),
        };
    }

    /// Whatever is due: a secondary's refresh or expiry, a primary's zone file.
    pub(crate) async fn on_time(&mut self) {
        if self.flush_at.is_some_and(|at| at <= self.now()) {
            self.flush_and_compact().await;
        }
        if self.schedule.next_wake().is_some_and(|at| at <= self.now()) {
            self.on_refresh_time();
        }
    }

    /// Takes the plan and loads (primary) or starts (secondary). A zone that became a
    /// primary drops the timers it had as a secondary.
    /// Counted in the load counters.
    async fn load(&mut self, plan: Arc<ZonePlan>) -> LoadOutcome {
        if plan.catalog != self.plan.catalog {
            self.catalog_reported = None; // read again under the new settings
        }
        self.plan = plan;
        if self.frozen && self.current.is_some() {
            info!(zone = %self.plan.name, "not reloaded: the zone is frozen");
            let records = self.current.as_ref().map_or(0, |z| z.record_count() as u64);
            return LoadOutcome::Unchanged { records };
        }
        let started = std::time::Instant::now();
        let outcome = match self.plan.role {
            Role::Primary => {
                self.schedule = Schedule::default();
                self.load_primary().await
            }
            Role::Secondary(_) => self.start_secondary().await,
        };
        let result = match outcome {
            LoadOutcome::Loaded { .. } => Some(LoadResult::Loaded),
            LoadOutcome::Unchanged { .. } => Some(LoadResult::Unchanged),
            LoadOutcome::Failed(_) => Some(LoadResult::Failed),
            LoadOutcome::Waiting => None,
        };
        if let Some(result) = result {
            control().load(result, started.elapsed());
        }
        outcome
    }

    /// Publishes `zone` in place of the version this writer last published (nothing,
    /// while expired); false (and an error logged) if something else replaced it
    /// meanwhile, which would be a bug. Only [`commit`](crate::commit) publishes a new
    /// version; [`serve_again`](Self::serve_again) the same one after an expiry.
    pub(crate) fn publish(&mut self, zone: Arc<ZoneContents>) -> bool {
        let served = if self.schedule.expired { None } else { self.current.as_ref() };
        if !self.slot.replace(served, Some(Arc::clone(&zone))) {
            error!(zone = %self.plan.name, "the zone changed under its writer: not published");
            return false;
        }
        if let Some(old) = self.current.replace(zone) {
            retire(old);
        }
        self.schedule.expired = false;
        self.loaded_at = Some(self.now());
        self.last_error = None;
        true
    }

    /// Serves the writer's version again after it expired (its primary confirmed its
    /// serial): the same version, no change.
    pub(crate) fn serve_again(&mut self) -> bool {
        let Some(zone) = self.current.clone().filter(|_| self.schedule.expired) else {
            return false;
        };
        if !self.slot.replace(None, Some(zone)) {
            error!(zone = %self.plan.name, "the zone changed under its writer: not served again");
            return false;
        }
        self.schedule.expired = false;
        true
    }

    /// Now, by the control plane's clock (seconds since the epoch).
    pub fn now(&self) -> u64 {
        self.shared.now()
    }

    /// Sends NOTIFY for the current version to the plan's targets, replacing any still
    /// being sent for an older one.
    pub fn notify_secondaries(&mut self) {
        for task in self.notifying.drain(..) {
            task.abort();
        }
        let Some(zone) = self.current.clone() else { return };
        let Some(soa) = zone.soa_record() else { return };
        let timeout = self.shared.limits.load().timeout;
        self.notifying = notify::send(&self.shared.network, &self.plan, &zone, &soa, timeout);
    }

    /// Logs what a load found and what is served now.
    pub fn log_served(&self, what: &str, elapsed: Duration) {
        if let Some(zone) = &self.current {
            let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
            info!(zone = %self.plan.name, serial = zone.serial(), records = zone.record_count(), elapsed_ms, "{what}");
        }
    }
}

/// Lets go of a replaced version so that it is freed here, in the control plane, and
/// never by a query worker:
/// * A query worker that was reading it when it was replaced may hold it a little
///   longer (its `arc_swap` guard is turned into a reference by the replacing store),
///   and a transfer out may hold it for its duration. Whoever lets go last frees it, so
///   until they have, a task holds it and looks again (1 ms, doubling up to 100 ms).
/// * When this is the last reference, a big zone (a reload builds a whole new one) is
///   freed on a thread of its own at the lowest priority: that takes tens of
///   milliseconds (60–75 ms for a 1M-delegation zone), which must delay neither the
///   NOTIFYs that follow a publish nor the SOA queries and IXFRs of the secondaries
///   they wake. A small one is freed at once (the trip to another thread would cost
///   more).
pub fn retire(old: Arc<ZoneContents>) {
    let large = old.record_count() > FREED_IN_PLACE;
    let_go(old, large);
}

/// [`retire`] for any shared value: `large` ones are freed on a thread at nice 19.
fn let_go<T: Send + Sync + 'static>(old: Arc<T>, large: bool) {
    let free = move |old: Arc<T>| {
        if large {
            free_apart(old);
        }
    };
    if Arc::strong_count(&old) == 1 {
        return free(old);
    }
    tokio::spawn(async move {
        let mut wait = Duration::from_millis(1);
        while Arc::strong_count(&old) > 1 {
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_millis(100));
        }
        free(old);
    });
}

/// Frees `old` on a new thread at the lowest priority (a pooled thread would keep that
/// priority for the transfers it runs next). If no thread starts, `old` is freed here.
fn free_apart<T: Send + Sync + 'static>(old: Arc<T>) {
    let started = std::thread::Builder::new().name("ternd-free".into()).spawn(move || {
        let _ = crate::priority::set_thread_nice(crate::priority::LOWEST_NICE);
        drop(old);
    });
    if let Err(e) = started {
        warn!("no thread to free a replaced zone version ({e}): freed by the control plane");
    }
}

/// Records of the largest zone [`retire`] frees where it is.
const FREED_IN_PLACE: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ZoneSource;

    /// Records the thread that drops it, and that thread's nice value.
    struct Dropped(Arc<std::sync::Mutex<Option<(String, i32)>>>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            let name = std::thread::current().name().unwrap_or("?").to_owned();
            let nice = crate::priority::thread_nice().unwrap();
            *self.0.lock().unwrap() = Some((name, nice));
        }
    }

    /// A version a reader still holds when it is replaced is freed by the control plane
    /// once the reader lets go, not by the reader (a query worker); a large one on a
    /// thread at the lowest priority.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_version_still_read_is_freed_by_the_control_plane() {
        for large in [false, true] {
            let by = Arc::new(std::sync::Mutex::new(None));
            let version = Arc::new(Dropped(Arc::clone(&by)));
            let reader = Arc::clone(&version);
            let_go(version, large);
            std::thread::Builder::new()
                .name("query-worker".into())
                .spawn(move || drop(reader))
                .unwrap()
                .join()
                .unwrap();
            let freed = tokio::time::timeout(Duration::from_secs(5), async {
                while by.lock().unwrap().is_none() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
            .await;
            assert!(freed.is_ok(), "never freed (large: {large})");
            let (thread, nice) = by.lock().unwrap().clone().unwrap();
            assert_ne!(thread, "query-worker", "large: {large}");
            if large {
                assert_eq!((thread.as_str(), nice), ("ternd-free", crate::priority::LOWEST_NICE));
            }
        }
    }

    /// A secondary that becomes a primary on reload keeps no refresh timer (it would
    /// wake its writer at once, again and again).
    #[tokio::test]
    async fn a_secondary_turned_primary_drops_its_timers() {
        let storage = tempfile::tempdir().unwrap();
        let primary = "127.0.0.1:9".parse().unwrap();
        let secondary = crate::testing::secondary("example.com.", storage.path(), primary);
        let shared = Shared::for_tests(Some(storage.path().to_owned()));
        let slot = Arc::new(ZoneSlot::new(&secondary.name));
        let mut writer = Writer::new(Arc::clone(&secondary), Arc::clone(&slot), shared);
        assert_eq!(writer.load(secondary).await, LoadOutcome::Waiting);
        assert!(writer.schedule.next_wake().is_some(), "a secondary refreshes");
        let mut primary = (*writer.plan).clone();
        primary.source = ZoneSource::Embedded(crate::testing::ZONE_TEXT);
        primary.role = Role::Primary;
        let outcome = writer.load(Arc::new(primary)).await;
        assert!(matches!(outcome, LoadOutcome::Loaded { .. }), "{outcome:?}");
        assert_eq!(writer.schedule.next_wake(), None);
        assert!(slot.contents_full().is_some());
    }
}
