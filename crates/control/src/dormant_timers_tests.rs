//! Writers at rest with timers, wired as the control plane wires them (the writers'
//! registry, the waker, the timer queue's task) on a clock the test drives (paused tokio
//! time): a resting secondary's refreshes come on time, each once, whatever wakes it
//! meanwhile; a reload that makes it a primary, or its removal, leaves its deadline
//! stale; its persisted timers bring it back at the same time after a restart; a signed
//! zone's signatures are refreshed while it rests between the signer's wakes.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tern_sign::policy::Policy;
use tern_sign::DenialConfig;
use tern_wire::rdata::Rdata;
use tern_wire::Rtype;
use tern_zone::ZoneSlot;
use tokio::sync::oneshot;

use crate::clock::{Clock, TokioClock};
use crate::event::ZoneCommand;
use crate::peer::Network;
use crate::plan::{Role, SigningPlan, ZonePlan, ZoneSource};
use crate::registry::{Entry, Writers};
use crate::testing::{self, MemoryPrimary, ZONE_TEXT};
use crate::writer::Writer;
use crate::{Event, LoadOutcome, Shared};

const ORIGIN: &str = "example.com.";
const START: u64 = 1_800_000_000;
const DAY: u64 = 86_400;
/// `ZONE_TEXT`'s SOA refresh.
const REFRESH: u64 = 7200;

/// The writers' registry and what they share, with the waker and the timer queue's
/// task on the test's runtime, as [`crate::plane::Control::start`] has them.
fn plane(
    storage: &std::path::Path,
    network: Arc<dyn Network>,
    clock: Arc<dyn Clock>,
) -> (Arc<Writers>, Arc<Shared>) {
    let shared = Shared::with(Some(storage.to_owned()), network, clock);
    let wake = crate::plane::waker(tokio::runtime::Handle::current(), Arc::clone(&shared));
    let writers = Arc::new(Writers::new(wake, 64));
    tokio::spawn(crate::registry::run_timers(Arc::clone(&shared.timers), Arc::clone(&writers)));
    (writers, shared)
}

/// Starts `plan`'s writer (resting when idle) in `writers` and has it load: its entry,
/// its slot and how the load went.
async fn start(
    writers: &Writers,
    shared: &Arc<Shared>,
    plan: Arc<ZonePlan>,
) -> (Arc<Entry>, Arc<ZoneSlot>, LoadOutcome) {
    let slot = Arc::new(ZoneSlot::new(&plan.name));
    let (inbox, received) = crate::inbox::inbox(64);
    let writer = Writer::new(Arc::clone(&plan), Arc::clone(&slot), Arc::clone(shared));
    let entry = Entry::running(Arc::clone(&slot), inbox, Arc::clone(&writer.status));
    writers.change(|map| map.insert(Arc::clone(&entry)));
    tokio::spawn(writer.run(received, Some(Arc::clone(&entry))));
    let outcome = load(writers, &entry, plan).await;
    (entry, slot, outcome)
}

async fn load(writers: &Writers, entry: &Arc<Entry>, plan: Arc<ZonePlan>) -> LoadOutcome {
    let (done, outcome) = oneshot::channel();
    writers
        .send(entry, Event::Load { plan, done: Some(crate::event::LoadDone::to(done)) })
        .unwrap();
    outcome.await.unwrap()
}

/// Lets `secs` pass, and the tasks run after.
async fn pass(secs: u64) {
    tokio::time::sleep(Duration::from_secs(secs)).await;
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
}

/// Lets time pass until `clock` shows `at`.
async fn until(clock: &TokioClock, at: u64) {
    pass(at.saturating_sub(clock.now())).await;
}

fn served(slot: &ZoneSlot) -> Option<u32> {
    slot.contents_full().map(|z| z.serial())
}

/// The secondary's next refresh, as `zone-status` shows it.
fn next_refresh(entry: &Entry) -> u64 {
    entry.status().unwrap().next_refresh.unwrap()
}

/// A day of refreshes (every 7200 s) while the secondary rests between them: each comes
/// on time and once — an operator's command waking it between changes nothing — and
/// takes a new serial when the primary has one; `zone-status` shows its timers at rest.
/// A reload that makes it a primary leaves no timer.
#[tokio::test(start_paused = true)]
async fn a_resting_secondary_refreshes_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let primary = MemoryPrimary::new(ORIGIN, ZONE_TEXT);
    let clock = Arc::new(TokioClock::starting_at(START));
    let (writers, shared) =
        plane(dir.path(), Arc::clone(&primary) as Arc<dyn Network>, clock.clone());
    let plan = testing::secondary(ORIGIN, dir.path(), "127.0.0.1:53".parse().unwrap());
    let (entry, slot, outcome) = start(&writers, &shared, Arc::clone(&plan)).await;
    assert_eq!(outcome, LoadOutcome::Waiting);
    pass(5).await;
    assert_eq!((served(&slot), primary.transfers.load(Relaxed)), (Some(1), 1));
    assert!(entry.is_resting(), "transferred, its copy kept: it rests");
    let status = entry.status().unwrap();
    assert_eq!(status.role, "secondary");
    let refreshed = status.last_refresh.unwrap();
    assert!((START..START + 5).contains(&refreshed), "{status:?}");
    assert_eq!(status.next_refresh, Some(refreshed + REFRESH));
    assert_eq!(status.expires_at, Some(refreshed + 1_209_600));
    for n in 1..=12u64 {
        let (due, queries) = (next_refresh(&entry), primary.soa_queries.load(Relaxed));
        if n == 5 {
            primary.change(testing::soa_change(&primary.zone(), 2));
        }
        until(&clock, due - 1800).await;
        // Woken by a command, it rests again under the same deadline.
        let read = ZoneCommand::Read { owner: None, rtype: None };
        let (reply, answer) = oneshot::channel();
        let command = Event::Command { command: Box::new(read), reply };
        writers.send(&entry, command).unwrap();
        assert!(answer.await.unwrap().is_ok());
        until(&clock, due - 1).await;
        assert!(entry.is_resting(), "refresh {n}: resting before it");
        assert_eq!(primary.soa_queries.load(Relaxed), queries, "refresh {n}: not early");
        until(&clock, due + 3).await;
        assert_eq!(primary.soa_queries.load(Relaxed), queries + 1, "refresh {n}: once");
        assert!(entry.is_resting(), "refresh {n}: resting after it");
        let next = next_refresh(&entry);
        assert!((due + REFRESH..=due + REFRESH + 1).contains(&next), "refresh {n}: {next}");
        let serial = if n >= 5 { 2 } else { 1 };
        assert_eq!(served(&slot), Some(serial), "refresh {n}");
    }
    assert_eq!(primary.transfers.load(Relaxed), 2, "one AXFR, one IXFR");
    // A reload makes it a primary: its deadline falls due stale.
    let due = next_refresh(&entry);
    let mut primary_plan = ZonePlan::clone(&plan);
    primary_plan.source = ZoneSource::Embedded(ZONE_TEXT);
    primary_plan.role = Role::Primary;
    let queries = primary.soa_queries.load(Relaxed);
    load(&writers, &entry, Arc::new(primary_plan)).await;
    until(&clock, due + REFRESH + 10).await;
    assert_eq!(primary.soa_queries.load(Relaxed), queries, "no refresh as a primary");
    let status = entry.status().unwrap();
    assert!(entry.is_resting() && status.role == "primary" && status.next_refresh.is_none());
    assert_eq!(shared.timers.len(), 0, "nothing left in the queue");
}

/// A secondary removed while it rests is not refreshed by the deadline it left; started
/// again (as after a restart) it takes its timers from disk and refreshes when they
/// say, resting until then: one refresh in all.
#[tokio::test(start_paused = true)]
async fn a_removed_secondary_leaves_no_timer_and_a_restart_keeps_its_timers() {
    let dir = tempfile::tempdir().unwrap();
    let primary = MemoryPrimary::new(ORIGIN, ZONE_TEXT);
    let clock = Arc::new(TokioClock::starting_at(START));
    let network = Arc::clone(&primary) as Arc<dyn Network>;
    let (writers, shared) = plane(dir.path(), Arc::clone(&network), clock.clone());
    let plan = testing::secondary(ORIGIN, dir.path(), "127.0.0.1:53".parse().unwrap());
    let (removed, _, _) = start(&writers, &shared, Arc::clone(&plan)).await;
    pass(5).await;
    assert!(removed.is_resting());
    let due = next_refresh(&removed);
    let queries = primary.soa_queries.load(Relaxed);
    until(&clock, due - 3600).await;
    writers.change(|map| map.remove(&plan.name)).unwrap().stop(); // as the plane removes it
                                                                  // Started again: the timers kept with its copy say when.
    let (writers, shared) = plane(dir.path(), network, clock.clone());
    let (entry, slot, outcome) = start(&writers, &shared, plan).await;
    assert!(matches!(outcome, LoadOutcome::Loaded { serial: 1, .. }), "{outcome:?}");
    pass(2).await;
    assert!(entry.is_resting() && served(&slot) == Some(1));
    assert_eq!(next_refresh(&entry), due, "the kept timers");
    until(&clock, due - 1).await;
    assert_eq!(primary.soa_queries.load(Relaxed), queries, "not before");
    until(&clock, due + 3).await;
    assert_eq!(primary.soa_queries.load(Relaxed), queries + 1, "once, on time");
    assert!(entry.is_resting() && next_refresh(&entry) >= due + REFRESH);
    assert_eq!(removed.status(), None);
}

/// A primary signed with signatures valid two days, refreshed a day before they expire:
/// it rests between the signer's wakes (each hour) and its signatures are made again
/// in time, three days running.
#[tokio::test(start_paused = true)]
async fn a_resting_signed_zone_refreshes_its_signatures() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(TokioClock::starting_at(START));
    let network = Arc::new(testing::NoNetwork) as Arc<dyn Network>;
    let (writers, shared) = plane(&dir.path().join("storage"), network, clock.clone());
    let file = dir.path().join("example.com.zone");
    std::fs::write(&file, ZONE_TEXT).unwrap();
    let mut plan = ZonePlan::clone(&testing::primary(ORIGIN, ZoneSource::File(file)));
    let policy =
        Policy { signature_validity: 2 * DAY, signature_refresh: DAY, ..Policy::default() };
    plan.signing = Some(Arc::new(SigningPlan {
        id: "test".into(),
        policy,
        denial: DenialConfig::Nsec,
        salt_length: 0,
        key_dir: dir.path().join("keys"),
        threads: 1,
        parents: vec![],
    }));
    let (entry, slot, outcome) = start(&writers, &shared, Arc::new(plan)).await;
    assert!(matches!(outcome, LoadOutcome::Loaded { .. }), "{outcome:?}");
    let first = served(&slot).unwrap();
    pass(900).await; // looked at between the signer's wakes
    let mut rested = 0;
    for _ in 0..(3 * DAY / 1800) {
        pass(1800).await;
        rested += usize::from(entry.is_resting());
        let now = clock.now();
        let soonest = expirations(&slot).into_iter().min().unwrap();
        assert!(soonest > now + DAY / 2, "a signature expires at {soonest}, now {now}");
    }
    assert!(served(&slot).unwrap() > first, "signatures were made again");
    assert_eq!(rested, 3 * 48, "resting between the signer's wakes");
}

/// Every RRSIG's expiration in what `slot` serves.
fn expirations(slot: &ZoneSlot) -> Vec<u64> {
    let mut out = Vec::new();
    slot.contents_full().unwrap().for_each_record(|_, rtype, _, rdata| {
        if let (Rtype::RRSIG, Ok(Rdata::Rrsig(sig))) = (rtype, Rdata::from_wire(rtype, rdata)) {
            out.push(u64::from(sig.expiration));
        }
    });
    out
}
