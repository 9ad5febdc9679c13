//! A signed zone's writer on a clock the test sets: set back after the zone was signed
//! (its signatures then not valid yet), the signer's timer wakes at once and the refresh
//! makes every such signature again; a BIND-style import and export go through the
//! writer's commands.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use tern_sign::policy::Policy;
use tern_sign::DenialConfig;
use tern_wire::rdata::Rdata;
use tern_wire::Rtype;
use tern_zone::{ZoneContents, ZoneSlot};
use tokio::sync::oneshot;

use crate::clock::Clock;
use crate::commands::ZoneCommand;
use crate::plan::{SigningPlan, ZonePlan, ZoneSource};
use crate::testing::{self, NoNetwork, ZONE_TEXT};
use crate::writer::Writer;
use crate::{Event, LoadOutcome, Shared};

const ORIGIN: &str = "example.com.";
const START: u64 = 1_800_000_000;
const DAY: u64 = 86_400;

/// A clock the test sets, backwards too.
#[derive(Debug)]
struct SetClock(AtomicU64);

impl Clock for SetClock {
    fn now(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A primary zone signed by the default policy (KSK and ZSK, NSEC), keys in `dir`.
async fn signed_writer(dir: &std::path::Path, clock: Arc<SetClock>) -> (Writer, Arc<ZoneSlot>) {
    let file = dir.join("example.com.zone");
    std::fs::write(&file, ZONE_TEXT).unwrap();
    let mut plan = ZonePlan::clone(&testing::primary(ORIGIN, ZoneSource::File(file)));
    plan.signing = Some(Arc::new(SigningPlan {
        id: "test".into(),
        policy: Policy::default(),
        denial: DenialConfig::Nsec,
        salt_length: 0,
        key_dir: dir.join("keys"),
        threads: 1,
        parents: vec![],
    }));
    let plan = Arc::new(plan);
    let shared = Shared::with(Some(dir.join("storage")), Arc::new(NoNetwork), clock);
    let slot = Arc::new(ZoneSlot::new(&plan.name));
    let mut writer = Writer::new(Arc::clone(&plan), Arc::clone(&slot), shared);
    let (done, outcome) = oneshot::channel();
    writer.event(Event::Load { plan, done: Some(crate::event::LoadDone::to(done)) }).await;
    assert!(matches!(outcome.await.unwrap(), LoadOutcome::Loaded { .. }));
    (writer, slot)
}

/// Every RRSIG's inception.
fn inceptions(zone: &ZoneContents) -> Vec<u32> {
    let mut out = Vec::new();
    zone.for_each_record(|_, rtype, _, rdata| {
        if let (Rtype::RRSIG, Ok(Rdata::Rrsig(sig))) = (rtype, Rdata::from_wire(rtype, rdata)) {
            out.push(sig.inception);
        }
    });
    out
}

#[tokio::test]
async fn a_clock_set_back_has_not_yet_valid_signatures_made_again_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(SetClock(AtomicU64::new(START)));
    let (mut writer, slot) = signed_writer(dir.path(), Arc::clone(&clock)).await;
    let signed = slot.contents_full().unwrap();
    let before = inceptions(&signed);
    assert!(before.len() >= 6 && before.iter().all(|&i| u64::from(i) <= START), "{before:?}");
    writer.sign_due().await;
    let wake = writer.sign_wake().unwrap();
    assert!(wake > START, "nothing due right after signing");
    // Set back two days: every signature's inception is after now.
    let now = START - 2 * DAY;
    clock.0.store(now, Relaxed);
    assert!(before.iter().all(|&i| u64::from(i) > now));
    assert_eq!(writer.sign_wake(), Some(now), "the timer notices the clock went back");
    writer.sign_due().await;
    let served = slot.contents_full().unwrap();
    assert!(served.serial() != signed.serial(), "a change was committed");
    let after = inceptions(&served);
    assert_eq!(after.len(), before.len());
    assert!(after.iter().all(|&i| u64::from(i) <= now), "none not yet valid: {after:?}");
    assert!(writer.sign_wake().unwrap() > now, "and the timer is quiet again");
    // The keys are those of before: a clock set back undoes no policy step.
    assert_eq!(writer.signer.as_ref().unwrap().store().keys().len(), 2);
    let keys = writer.command(ZoneCommand::KeyExport(None)).await.unwrap();
    assert_eq!(keys.lines().count(), 2, "the KSK's DNSKEY and DS: {keys}");
    assert!(keys.contains(" DNSKEY 257 3 13 ") && keys.contains(" DS "), "{keys}");
}
