//! The control plane: everything that changes what is served, on its own runtime and
//! threads, never on the data plane's and never on the signal-handling thread.
//!
//! One writer per zone ([`writer`]) owns the zone's slot, its current version, its
//! history, its timers and its NOTIFY state; its task runs while the zone has something
//! to do, and an idle writer rests without one ([`crate::dormant`]), woken by whatever
//! is sent to it or by its next deadline ([`crate::registry`], [`crate::timer_queue`]).
//! Everything that changes a zone reaches it as an [`Event`] and is handled in order: a
//! (re)load of the configuration, a NOTIFY from a primary, a timer. A change is validated, built beside the served version, and
//! published with one pointer swap that checks it replaces the version it started from;
//! then secondaries are notified ([`crate::notify`]).
//!
//! [`Control::apply`] brings the set of zones in line with a configuration: the zone set
//! is published first (a new zone answers SERVFAIL until loaded), the access rules are
//! swapped in, and each zone's writer is told to load; the caller gets a [`Loading`] to
//! wait on (with a timeout, so that signals are still taken). The zones that ask to have
//! their queries counted are given their rows then ([`crate::query_stats`]).
//! [`Control::change`] does the same for a few zones added or removed (`ternctl
//! zone-add`, `zone-remove`), touching only them: the zone set and the writers' map are
//! copy-on-write ([`tern_zone::NameMap`]), so such a change costs the same beside ten
//! zones or a million.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use tern_ctl::proto::ZoneStatus;
use tern_wire::Name;
use tern_zone::{ZoneDb, ZoneSet, ZoneSlot};
use tokio::runtime::Runtime;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tracing::{info, warn};

use crate::clock::Clock;
use crate::dormant::Dormant;
use crate::error::{Error, Result};
use crate::event::{Event, LoadDone, LoadOutcome, NoticeFrom, Notified};
use crate::event::{Outcome, ZoneCommand};
use crate::listing::StartListing;
use crate::peer::{Limits, Network};
use crate::plan::ZonePlan;
use crate::query_stats::QueryStatsRows;
use crate::registry::{Entry, Wake, WriterMap, Writers};
use crate::shared::{CatalogSink, Shared};
use crate::updates::UpdateSink;
use crate::writer;

/// Threads of the control plane's runtime (timers, events; loads and transfers run on
/// its blocking threads).
const THREADS: usize = 2;
/// Zone loads at once, per CPU (see [`Shared::loads`]).
const LOADS: usize = 2;
/// Writers told to load and not done yet, per CPU ([`pace`]).
const STARTING: usize = 64;
/// NOTIFYs waiting for their zone's writer; more are dropped (a refresh is coming).
const NOTICE_QUEUE: usize = 1024;
/// Updates waiting for each writer; more are answered SERVFAIL at once (the client
/// retries later).
const UPDATE_QUEUE: usize = 4096;

/// The zones' writers as the control socket sees them: their status, and a way to send
/// them commands.
#[derive(Debug, Clone)]
pub struct Zones {
    writers: Arc<Writers>,
}

impl Zones {
    /// The names of the zones served, in canonical order.
    pub fn names(&self) -> Vec<Name> {
        let mut names: Vec<Name> = self.writers.load().iter().map(|e| e.name().clone()).collect();
        names.sort();
        names
    }

    /// The status of `zone`, as its writer last showed it; `None` when not served.
    pub fn status(&self, zone: &Name) -> Option<ZoneStatus> {
        self.writers.get(zone)?.status()
    }

    /// True while `zone`'s writer rests ([`crate::dormant`]).
    pub fn is_resting(&self, zone: &Name) -> bool {
        self.writers.get(zone).is_some_and(|entry| entry.is_resting())
    }

    /// Sends `command` to `zone`'s writer and waits for its outcome.
    pub async fn command(&self, zone: &Name, command: ZoneCommand) -> Outcome {
        let (reply, outcome) = oneshot::channel();
        let sent = self.writers.get(zone).and_then(|entry| {
            let event = Event::Command { command: Box::new(command), reply };
            self.writers.send(&entry, event).ok()
        });
        if sent.is_none() {
            return Err(Error::NotServed(zone.clone()));
        }
        outcome.await.unwrap_or(Err(Error::WriterStopped))
    }
}

/// The control plane (see the module comment).
#[derive(Debug)]
pub struct Control {
    runtime: Runtime,
    shared: Arc<Shared>,
    writers: Arc<Writers>,
    notices: mpsc::Sender<NoticeFrom>,
    /// The rows of the per-zone query counters, handed to zones at each apply.
    query_stats: Mutex<QueryStatsRows>,
    /// The loads to start, in order ([`pace`]).
    starts: mpsc::UnboundedSender<Vec<Start>>,
    /// Whether [`apply`](Self::apply) was called: the first call is the start's.
    applied: AtomicBool,
}

/// Zones named in the log line about zones left uncounted; the rest are counted.
const LEFT_OUT_NAMED: usize = 10;

/// How the control plane is started ([`Control::start`]).
pub struct Options {
    /// The served zones.
    pub db: Arc<ZoneDb>,
    /// Transfers in at once (`[transfer] max-incoming`).
    pub max_incoming: usize,
    /// Timeouts and sizes for talking to remotes.
    pub limits: Limits,
    /// Where journals and kept copies are kept (`None`: nothing is kept).
    pub storage: Option<PathBuf>,
    /// The network.
    pub network: Arc<dyn Network>,
    /// The time.
    pub clock: Arc<dyn Clock>,
    /// Told what consumed catalogs list.
    pub catalogs_listed: Option<CatalogSink>,
    /// Run at the start of each of the runtime's threads (the server lowers their
    /// priority).
    pub on_thread_start: Arc<dyn Fn() + Send + Sync>,
    /// Zones whose queries may be counted at once (`query-stats-max-zones`: the rows
    /// the data plane's workers hold).
    pub query_stats_rows: usize,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options").field("storage", &self.storage).finish_non_exhaustive()
    }
}

/// What a set of loads did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// Zones configured.
    pub zones: usize,
    /// Zones whose load failed (served from their previous data, if any).
    pub failed: usize,
    /// Secondary zones with no data yet (being transferred).
    pub waiting: usize,
    /// Records served after the loads.
    pub records: u64,
}

/// The first loads of an [`Control::apply`], to wait for.
#[derive(Debug, Default)]
pub struct Loading {
    pending: Vec<(Name, oneshot::Receiver<LoadOutcome>)>,
    done: Vec<(Name, LoadOutcome)>,
    /// The loads to start, handed to [`pace`] before the caller gets this.
    starts: Vec<Start>,
    /// The start's listing of journals, let go once the loads are done.
    listing: Option<Arc<StartListing>>,
}

/// A writer to tell to load ([`pace`]).
#[derive(Debug)]
struct Start {
    entry: Arc<Entry>,
    plan: Arc<ZonePlan>,
    done: oneshot::Sender<LoadOutcome>,
}

impl Control {
    /// Starts the control plane's runtime; it takes NOTIFYs from [`notices`](Self::notices)
    /// and updates through [`update_sink`](Self::update_sink).
    pub fn start(options: Options) -> Result<Control> {
        let start = Arc::clone(&options.on_thread_start);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(THREADS)
            .thread_name("ternd-ctl")
            .on_thread_start(move || start())
            .enable_all()
            .build()
            .map_err(|source| Error::Os { doing: "starting the control plane", source })?;
        let shared = Arc::new(Shared {
            db: options.db,
            incoming: Arc::new(Semaphore::new(options.max_incoming)),
            catalogs: Arc::new(Semaphore::new(options.max_incoming)),
            loads: Semaphore::new(LOADS * cpu_count()),
            limits: ArcSwap::from_pointee(options.limits),
            storage: options.storage,
            catalogs_listed: options.catalogs_listed,
            network: options.network,
            clock: options.clock,
            timers: Arc::default(),
            listing: Arc::default(),
        });
        let wake = waker(runtime.handle().clone(), Arc::clone(&shared));
        let writers = Arc::new(Writers::new(wake, UPDATE_QUEUE));
        runtime
            .spawn(crate::registry::run_timers(Arc::clone(&shared.timers), Arc::clone(&writers)));
        let (notices, received) = mpsc::channel(NOTICE_QUEUE);
        runtime.spawn(route_notices(received, Arc::clone(&writers)));
        let (starts, to_start) = mpsc::unbounded_channel();
        runtime.spawn(pace(to_start, Arc::clone(&writers)));
        let query_stats = Mutex::new(QueryStatsRows::new(options.query_stats_rows));
        let applied = AtomicBool::new(false);
        Ok(Control { runtime, shared, writers, notices, query_stats, starts, applied })
    }

    /// Where the data plane sends the NOTIFYs it accepted.
    pub fn notices(&self) -> mpsc::Sender<NoticeFrom> {
        self.notices.clone()
    }

    /// Where the data plane puts the updates it accepted.
    pub fn update_sink(&self) -> Arc<dyn UpdateSink> {
        Arc::clone(&self.writers) as Arc<dyn UpdateSink>
    }

    /// Brings the served zones in line with `plans` (see the module comment), with
    /// `limits` for talking to remotes. With `reload`, every zone loads again; without,
    /// only new zones and produced catalogs do, the others keep what they serve (and
    /// their plan, until the next reload). The caller swaps the engine's access rules in
    /// first.
    pub fn apply(&self, plans: &[Arc<ZonePlan>], limits: Limits, reload: bool) -> Loading {
        self.shared.limits.store(Arc::new(limits));
        let slots = self.publish_set(plans);
        self.count_queries(plans, &slots);
        let mut loading = Loading::default();
        self.list_journals(&mut loading);
        self.writers
            .change(|writers| self.start_loads(writers, plans, slots, reload, &mut loading));
        self.pace(&mut loading);
        loading
    }

    /// Adds the zones of `added` and stops serving `removed`, every other zone left as it
    /// is (`ternctl zone-add`, `zone-remove`): the zone set, the query counters' rows and
    /// the writers change by these zones only, so the cost follows the change, not the
    /// zones served. A zone of `added` already served keeps what it serves (as
    /// [`apply`](Self::apply) without `reload`). The caller changes the engine's access
    /// rules first.
    pub fn change(&self, added: &[Arc<ZonePlan>], removed: &[Name], limits: Limits) -> Loading {
        self.shared.limits.store(Arc::new(limits));
        self.shared.listing.drop_listing();
        let mut set = ZoneSet::clone(&self.shared.db.snapshot());
        for name in removed {
            set.remove(name);
        }
        let slots: Vec<Arc<ZoneSlot>> = added
            .iter()
            .map(|p| {
                set.get(&p.name)
                    .cloned()
                    .unwrap_or_else(|| Arc::new(ZoneSlot::named(p.name.clone())))
            })
            .collect();
        for slot in &slots {
            set.insert(Arc::clone(slot));
        }
        self.shared.db.publish_set(set);
        let left_out = self.query_stats().assign_change(added, &slots, removed);
        self.log_left_out(&left_out);
        let mut loading = Loading::default();
        self.writers.change(|writers| {
            for name in removed {
                if let Some(entry) = writers.remove(name) {
                    stop(&entry);
                }
            }
            self.start_each(writers, added, slots, false, &mut loading);
        });
        self.pace(&mut loading);
        loading
    }

    /// [`apply`](Self::apply)'s changes to the writers.
    fn start_loads(
        &self,
        writers: &mut WriterMap,
        plans: &[Arc<ZonePlan>],
        slots: Vec<Arc<ZoneSlot>>,
        reload: bool,
        loading: &mut Loading,
    ) {
        let keep: std::collections::HashSet<&Name> = plans.iter().map(|p| &p.name).collect();
        writers.retain(|entry| {
            let kept = keep.contains(entry.name());
            if !kept {
                stop(entry);
            }
            kept
        });
        self.start_each(writers, plans, slots, reload, loading);
    }

    /// Has the writer of each of `plans` told to load ([`to_load`](Self::to_load)).
    ///
    /// The writers' entries are all made first, then the channels that report the
    /// loads: a channel lives until its load is done, and made between two entries it
    /// left a hole among them (96 bytes a zone at the start, in glibc's heap).
    fn start_each(
        &self,
        writers: &mut WriterMap,
        plans: &[Arc<ZonePlan>],
        slots: Vec<Arc<ZoneSlot>>,
        reload: bool,
        loading: &mut Loading,
    ) {
        let entries: Vec<(&Arc<ZonePlan>, Arc<Entry>)> = plans
            .iter()
            .zip(slots)
            .filter_map(|(plan, slot)| Some((plan, Self::to_load(writers, plan, slot, reload)?)))
            .collect();
        loading.pending.reserve(entries.len());
        loading.starts.reserve(entries.len());
        for (plan, entry) in entries {
            let (done, outcome) = oneshot::channel();
            loading.pending.push((plan.name.clone(), outcome));
            loading.starts.push(Start { entry, plan: Arc::clone(plan), done });
        }
    }

    /// The entry of `plan`'s writer (at rest until told to load, if the zone is new),
    /// unless the zone is known and neither `reload` nor a produced catalog asks it to
    /// load.
    fn to_load(
        writers: &mut WriterMap,
        plan: &Arc<ZonePlan>,
        slot: Arc<ZoneSlot>,
        reload: bool,
    ) -> Option<Arc<Entry>> {
        let known = writers.get(&plan.name).map(Arc::clone);
        if known.is_some() && !reload && plan.catalog != crate::plan::CatalogRole::Producer {
            return None;
        }
        Some(known.unwrap_or_else(|| {
            let entry = Entry::dormant(slot, Dormant::unloaded(Arc::clone(plan)));
            writers.insert(Arc::clone(&entry));
            entry
        }))
    }

    /// At the start (the first [`apply`](Self::apply)), lists the journals in storage
    /// once for the first loads, until `loading` is done; at any later change of the
    /// zone set, lets that listing go ([`crate::listing`]).
    fn list_journals(&self, loading: &mut Loading) {
        let listing = &self.shared.listing;
        match (self.applied.swap(true, Ordering::AcqRel), &self.shared.storage) {
            (false, Some(storage)) => {
                listing.take(storage);
                loading.listing = Some(Arc::clone(listing));
            }
            _ => listing.drop_listing(),
        }
    }

    /// Hands `loading`'s starts to [`pace`], after those of earlier calls.
    fn pace(&self, loading: &mut Loading) {
        let starts = std::mem::take(&mut loading.starts);
        if !starts.is_empty() {
            // Taken until the runtime stops: then no load is waited for.
            let _ = self.starts.send(starts);
        }
    }

    /// Publishes the set of zones `plans` names: current slots kept, new ones empty.
    fn publish_set(&self, plans: &[Arc<ZonePlan>]) -> Vec<Arc<ZoneSlot>> {
        let current = self.shared.db.snapshot();
        let slots: Vec<Arc<ZoneSlot>> = plans
            .iter()
            .map(|p| {
                current
                    .get(&p.name)
                    .cloned()
                    .unwrap_or_else(|| Arc::new(ZoneSlot::named(p.name.clone())))
            })
            .collect();
        self.shared.db.publish_set(ZoneSet::new(slots.clone()));
        slots
    }

    /// Hands the rows of the per-zone query counters to the zones that ask for them
    /// ([`QueryStatsRows::assign`]); one line names those left out, if any.
    fn count_queries(&self, plans: &[Arc<ZonePlan>], slots: &[Arc<ZoneSlot>]) {
        let left_out = self.query_stats().assign(plans, slots);
        self.log_left_out(&left_out);
    }

    fn query_stats(&self) -> std::sync::MutexGuard<'_, QueryStatsRows> {
        self.query_stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One line naming the zones left uncounted, if any.
    fn log_left_out(&self, left_out: &[Name]) {
        if left_out.is_empty() {
            return;
        }
        let counted = self.query_stats().counted().count();
        let named: Vec<String> =
            left_out.iter().take(LEFT_OUT_NAMED).map(Name::to_string).collect();
        let more = left_out.len().saturating_sub(LEFT_OUT_NAMED);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        warn!(
            zones = left_out.len(),
            "query-stats: {} zones are not counted, as {} are already (query-stats-max-zones): {}{more}",
            left_out.len(),
            counted,
            named.join(" "),
        );
    }

    /// The zones' writers, for the control socket.
    pub fn zones(&self) -> Zones {
        Zones { writers: Arc::clone(&self.writers) }
    }

    /// Sets `[transfer] max-incoming` from `from` to `to` (a reload).
    pub fn resize_incoming(&self, from: usize, to: usize) {
        self.shared.resize_incoming(from, to, &self.handle());
    }

    /// Runs `f` on the control plane's runtime (tests, and work that must not block the
    /// caller).
    pub fn handle(&self) -> tokio::runtime::Handle {
        self.runtime.handle().clone()
    }

    /// Stops every writer and the runtime without waiting for loads or transfers under
    /// way (they are cut off; what they would have published is not needed any more).
    pub fn shutdown(self) {
        self.writers.change(|writers| {
            for entry in writers.iter() {
                entry.stop();
            }
            *writers = WriterMap::new();
        });
        self.runtime.shutdown_timeout(Duration::from_millis(100));
    }
}

impl Loading {
    /// Waits up to `timeout` for the loads still pending; true when all are done. The
    /// wait ends as soon as the last of them is (`blocking::receive_by`).
    pub fn wait(&mut self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        while let Some((name, mut receiver)) = self.pending.pop() {
            match crate::blocking::receive_by(&mut receiver, deadline) {
                Some(Ok(outcome)) => self.done.push((name, outcome)),
                Some(Err(_)) => {
                    self.done.push((name, LoadOutcome::Failed("the zone's writer stopped".into())))
                }
                None => {
                    self.pending.push((name, receiver));
                    return false;
                }
            }
        }
        if let Some(listing) = self.listing.take() {
            listing.drop_listing();
        }
        true
    }

    /// What the loads did, once [`wait`](Self::wait) returned true.
    pub fn report(&self) -> ReloadReport {
        let mut report =
            ReloadReport { zones: self.done.len() + self.pending.len(), ..ReloadReport::default() };
        for (_, outcome) in &self.done {
            match outcome {
                LoadOutcome::Loaded { records, .. } | LoadOutcome::Unchanged { records } => {
                    report.records += records
                }
                LoadOutcome::Waiting => report.waiting += 1,
                LoadOutcome::Failed(_) => report.failed += 1,
            }
        }
        report
    }

    /// The zones whose load failed, with why.
    pub fn failures(&self) -> Vec<(&Name, &str)> {
        self.done
            .iter()
            .filter_map(|(name, outcome)| match outcome {
                LoadOutcome::Failed(why) => Some((name, why.as_str())),
                _ => None,
            })
            .collect()
    }
}

/// Stops `name`'s writer: the zone is no longer served.
fn stop(entry: &Entry) {
    let name = entry.name();
    entry.stop();
    crate::counters::control::control().forget_journal(&name.to_string());
    crate::counters::control::control().forget_signatures(&name.to_string());
    info!(zone = %name, "zone removed");
}

/// Starts a woken writer ([`crate::dormant`]) on `runtime`, from what it kept.
pub(crate) fn waker(runtime: tokio::runtime::Handle, shared: Arc<Shared>) -> Wake {
    Box::new(move |woken| {
        let slot = Arc::clone(woken.entry.slot());
        let writer =
            writer::Writer::from_dormant(woken.record, slot, woken.status, Arc::clone(&shared));
        runtime.spawn(writer.run(woken.inbox, Some(woken.entry)));
    })
}

/// CPUs this process may run on (1 when unknown).
fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Tells the writers of each batch of `starts` to load, batches in the order given (a
/// later configuration's loads come after an earlier one's), at most [`STARTING`] per
/// CPU at once. A writer runs while it loads (its task, its inbox, a kilobyte or two) and
/// rests once done ([`Writer::rest_now`]), so that a million zones load with a few
/// hundred writers running, not a million.
///
/// [`Writer::rest_now`]: crate::writer::Writer::rest_now
async fn pace(mut starts: mpsc::UnboundedReceiver<Vec<Start>>, writers: Arc<Writers>) {
    let room = Arc::new(Semaphore::new(STARTING * cpu_count()));
    while let Some(batch) = starts.recv().await {
        for Start { entry, plan, done } in batch {
            let Ok(turn) = Arc::clone(&room).acquire_owned().await else { return };
            let event = Event::Load { plan, done: Some(LoadDone::holding(done, turn)) };
            // A writer stopped meanwhile (its zone removed) drops `done`: its load is
            // then reported as stopped.
            let _ = writers.send(&entry, event);
        }
    }
}

/// Sends each accepted NOTIFY to its zone's writer, merged into the one still waiting
/// there if any: a flood of them (spoofed from a primary's address, or a primary in a
/// loop) costs the writer one event at a time, not one each.
async fn route_notices(mut received: mpsc::Receiver<NoticeFrom>, writers: Arc<Writers>) {
    while let Some((notice, from)) = received.recv().await {
        let sent = writers.get(&notice.zone).and_then(|entry| {
            let notified = Notified { serial: notice.serial, from, merged: 0 };
            writers.send_merged(&entry, Event::Notify(Box::new(notified)), merge_notices).ok()
        });
        if sent.is_none() {
            warn!(zone = %notice.zone, from = %from, "NOTIFY for a zone without a writer: ignored");
        }
    }
}

/// Folds the NOTIFY `new` into the one `waiting`: counted, the latest sender and serial
/// kept.
fn merge_notices(waiting: &mut Event, new: Event) {
    if let (Event::Notify(waiting), Event::Notify(new)) = (waiting, new) {
        let merged = waiting.merged.saturating_add(new.merged).saturating_add(1);
        **waiting = Notified { serial: new.serial.or(waiting.serial), from: new.from, merged };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    use crate::plan::{Role, ZoneSource};
    use tern_zone::hash::SuffixHashes;

    const ZONE: &str =
        "$TTL 300\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\nns1 A 192.0.2.53\n";

    fn limits() -> Limits {
        let second = Duration::from_secs(1);
        Limits { timeout: second, max_size: 1 << 20, max_time: second, idle: second }
    }

    fn plan(name: &str) -> Arc<ZonePlan> {
        let name = name.parse().unwrap_or_else(|_| unreachable!());
        Arc::new(ZonePlan::new(name, ZoneSource::Embedded(ZONE), Role::Primary))
    }

    fn name(text: &str) -> Name {
        text.parse().unwrap_or_else(|_| unreachable!())
    }

    /// The zone `qname` is answered from, in `set`, and whether it has contents.
    fn answered_by(set: &ZoneSet, qname: &str) -> Option<(String, bool)> {
        let qname = name(qname);
        let slot = set.find(&qname, &SuffixHashes::of(&qname))?;
        Some((slot.origin().to_string(), slot.contents_full().is_some()))
    }

    /// `change` adds and removes zones beside the others, which keep their slot, their
    /// contents (not loaded again) and their writer; snapshots taken before stay as
    /// they were.
    #[test]
    fn a_change_adds_and_removes_zones_and_leaves_the_others_as_they_are() {
        let db = Arc::new(ZoneDb::new());
        let control = started(&db);
        let plans: Vec<Arc<ZonePlan>> = (0..40).map(|i| plan(&format!("z{i}.example."))).collect();
        let mut loading = control.apply(&plans, limits(), true);
        assert!(loading.wait(Duration::from_secs(20)));
        assert_eq!(loading.report().failed, 0);
        let before = db.snapshot();
        let mut loading = control.change(&[plan("new.example.")], &[name("z7.example.")], limits());
        assert!(loading.wait(Duration::from_secs(20)));
        assert_eq!((loading.report().zones, loading.report().failed), (1, 0));
        let after = db.snapshot();
        assert_eq!(after.len(), 40);
        assert_eq!(answered_by(&after, "www.new.example."), Some(("new.example.".into(), true)));
        assert_eq!(answered_by(&after, "www.z7.example."), None, "removed");
        assert_eq!(answered_by(&before, "www.z7.example."), Some(("z7.example.".into(), true)));
        assert_eq!(answered_by(&before, "www.new.example."), None);
        for i in (0..40).filter(|&i| i != 7) {
            let origin = name(&format!("z{i}.example."));
            let (old, new) = (before.get(&origin).unwrap(), after.get(&origin).unwrap());
            assert!(Arc::ptr_eq(old, new), "{origin}: the same slot");
            let (old, new) = (old.contents_full().unwrap(), new.contents_full().unwrap());
            assert!(Arc::ptr_eq(&old, &new), "{origin}: not loaded again");
        }
        let names = control.zones().names();
        assert_eq!(names.len(), 40);
        assert!(names.contains(&name("new.example.")) && !names.contains(&name("z7.example.")));
        control.shutdown();
    }

    fn started(db: &Arc<ZoneDb>) -> Control {
        started_with(db, None)
    }

    fn started_with(db: &Arc<ZoneDb>, storage: Option<PathBuf>) -> Control {
        Control::start(Options {
            db: Arc::clone(db),
            max_incoming: 2,
            limits: limits(),
            storage,
            network: Arc::new(crate::testing::NoNetwork),
            clock: Arc::new(crate::clock::SystemClock),
            catalogs_listed: None,
            on_thread_start: Arc::new(|| {}),
            query_stats_rows: 0,
        })
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The journals in storage are listed once for the start's first loads, and the
    /// listing is let go when they are done; a later change never takes one.
    #[test]
    fn the_starts_listing_of_journals_lasts_as_long_as_its_loads() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let journal = dir.path().join("z.example.journal");
        let db = Arc::new(ZoneDb::new());
        let control = started_with(&db, Some(dir.path().to_path_buf()));
        let plans = [plan("z.example.")];
        let mut loading = control.apply(&plans, limits(), true);
        assert_eq!(control.shared.listing.found(&journal), crate::listing::Found::Nothing);
        assert!(loading.wait(Duration::from_secs(20)));
        assert_eq!(control.shared.listing.found(&journal), crate::listing::Found::Unknown);
        let mut loading = control.apply(&plans, limits(), true);
        assert_eq!(control.shared.listing.found(&journal), crate::listing::Found::Unknown);
        assert!(loading.wait(Duration::from_secs(20)));
        control.shutdown();
    }

    /// Many zones load with at most [`STARTING`] per CPU running at once, each at rest
    /// as soon as loaded (not [`crate::dormant::REST_AFTER`] later).
    #[test]
    fn many_zones_load_few_writers_at_a_time_and_rest_once_loaded() {
        let db = Arc::new(ZoneDb::new());
        let control = started(&db);
        let plans: Vec<Arc<ZonePlan>> =
            (0..3000).map(|i| plan(&format!("z{i}.example."))).collect();
        let started = std::time::Instant::now();
        let mut loading = control.apply(&plans, limits(), true);
        let (zones, mut most) = (control.zones(), 0);
        while !loading.wait(Duration::from_millis(1)) {
            let running = plans.iter().filter(|p| !zones.is_resting(&p.name)).count();
            most = most.max(running);
            assert!(started.elapsed() < Duration::from_secs(60), "loads never ended");
        }
        assert_eq!(loading.report().failed, 0);
        // A writer gives its turn back once loaded, and rests right after.
        assert!(most <= 2 * STARTING * cpu_count(), "{most} writers ran at once");
        let loaded_by = started.elapsed();
        std::thread::sleep(Duration::from_millis(100));
        let running = plans.iter().filter(|p| !zones.is_resting(&p.name)).count();
        assert_eq!(running, 0, "all at rest {:?} after the last load", loaded_by);
        let set = db.snapshot();
        assert!(plans
            .iter()
            .all(|p| set.get(&p.name).is_some_and(|s| s.contents_full().is_some())));
        control.shutdown();
    }

    /// Two configurations applied one after the other load in that order: the zones
    /// end with the later one's plan, whatever is still being loaded of the first.
    #[test]
    fn loads_of_a_later_configuration_come_after_an_earlier_ones() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("second.zone");
        std::fs::write(&file, ZONE.replace("hostmaster 1 ", "hostmaster 2 "))
            .unwrap_or_else(|e| panic!("{e}"));
        let db = Arc::new(ZoneDb::new());
        let control = started(&db);
        let names: Vec<String> = (0..1000).map(|i| format!("z{i}.example.")).collect();
        let first: Vec<Arc<ZonePlan>> = names.iter().map(|n| plan(n)).collect();
        let second: Vec<Arc<ZonePlan>> = names
            .iter()
            .map(|n| {
                let source = ZoneSource::File(file.clone());
                Arc::new(ZonePlan::new(name(n), source, Role::Primary))
            })
            .collect();
        let mut one = control.apply(&first, limits(), true);
        let mut two = control.apply(&second, limits(), true);
        assert!(one.wait(Duration::from_secs(60)) && two.wait(Duration::from_secs(60)));
        let set = db.snapshot();
        for n in &names {
            let serial = set.get(&name(n)).and_then(|s| s.contents_full()).map(|z| z.serial());
            assert_eq!(serial, Some(2), "{n}");
        }
        control.shutdown();
    }

    /// NOTIFYs merged keep the latest sender and serial, and count all but the first.
    #[test]
    fn notifies_merge_into_the_one_waiting() {
        let notice = |port: u16, serial: Option<u32>, merged: u32| {
            let from = SocketAddr::from(([127, 0, 0, 1], port));
            Event::Notify(Box::new(Notified { serial, from, merged }))
        };
        let mut waiting = notice(1, Some(5), 0);
        merge_notices(&mut waiting, notice(2, Some(6), 0));
        merge_notices(&mut waiting, notice(3, None, 4));
        let Event::Notify(merged) = waiting else { unreachable!() };
        let from = SocketAddr::from(([127, 0, 0, 1], 3));
        assert_eq!(*merged, Notified { serial: Some(6), from, merged: 6 });
        assert!(std::mem::size_of::<Event>() <= 24, "{}", std::mem::size_of::<Event>());
    }
}
