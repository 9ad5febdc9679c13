//! A deterministic driver for the cost of dynamic updates in a primary's writer: N
//! single-record UPDATEs (`add v<i>.<origin> 300 A …`, as the dnsperf stream of
//! `bench/` sends them) go through `Engine::answer` to `UpdateRequest`s, then in batches
//! through `tern_control::dynamic::compute` and `tern_control::commit::prepare` —
//! exactly what a commit runs on its blocking thread: each update judged and applied in
//! turn, the history appended, the batch journaled with one sync — each batch's version
//! becoming the next one's start.
//!
//! `update_cost ZONE_FILE ORIGIN [N=2000] [BATCH=20] [adds|mixed] [unsigned|nsec|nsec3]
//! [journal|memory]` (the journal goes to a fresh temporary directory; `memory` leaves
//! it out, so that the times are of the work in memory, without the `fdatasync`). `mixed` sends what `bench/update_rate.py`'s stream
//! does: from the 500th update on, every other one deletes the record added 500 adds
//! before, so that the zone stops growing and freed nodes are used again. Count its
//! instructions with
//! `valgrind --tool=callgrind target/release/examples/update_cost …` and
//! `callgrind_annotate --inclusive=yes`: the line of `commit_batch` divided by N is the
//! blocking thread's cost per update; `--toggle-collect='update_cost::after_commit'`
//! adds what the writer does after (answers, and freeing the replaced version).
//!
//! `nsec` or `nsec3` signs the zone as the server's online signing does (issue #51): a
//! CSK (ECDSAP256SHA256) made by `tern_control::signer::Signer` in a key store in a
//! temporary directory, the zone signed whole first (timed apart), then every batch
//! signed on commit with the signer's kit (`prepare(.., &Signing::With(kit))`: the RRsets it
//! touches and the NSEC/NSEC3 records around them). Each batch is timed from the
//! commit's start until its version is published in the zone's slot; the median and
//! 99th percentile are printed (with `BATCH` 1: a one-record change, signing included).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use std::time::{Duration, Instant};

use tern_control::commit::{prepare, Change};
use tern_control::dynamic::{compute, Judged};
use tern_control::signer::{SignKit, Signer, Signing, SigningPlan};
use tern_control::updates::UpdateTask;
use tern_engine::{
    Access, Action, Config, Engine, Outcome, Request, Rule, SerialPolicy, Transport, UpdatePolicy,
    ZoneAccess,
};
use tern_journal::Journal;
use tern_server::handler::AnswerStream;
use tern_sign::policy::{Policy, Scheme};
use tern_sign::{DenialConfig, Nsec3Config};
use tern_wire::message::{CompressionTable, Flags, MessageWriter, Section};
use tern_wire::{rdata, Class, Name, Opcode, Rcode, Rtype};
use tern_zone::{History, HistoryLimits, Options, ZoneContents, ZoneSet, ZoneSlot};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, origin, rest @ ..] = args.as_slice() else {
        panic!("usage: update_cost ZONE_FILE ORIGIN [N] [BATCH]");
    };
    let count: usize = rest.first().map_or(2000, |n| n.parse().unwrap());
    let batch: usize = rest.get(1).map_or(20, |n| n.parse().unwrap());
    let mixed = match rest.get(2).map(String::as_str) {
        None | Some("adds") => false,
        Some("mixed") => true,
        Some(other) => panic!("the stream is adds or mixed, not {other}"),
    };
    let denial = rest.get(3).map_or("unsigned", String::as_str);
    let journaled = match rest.get(4).map(String::as_str) {
        None | Some("journal") => true,
        Some("memory") => false,
        Some(other) => panic!("journal or memory, not {other}"),
    };
    let origin: Name = origin.parse().unwrap();
    let loaded =
        tern_zone::load_file(Path::new(file), &origin, &Options::default(), &mut |_| {}).unwrap();
    let keys = tempfile::tempdir().unwrap();
    let kit = signing_kit(denial, keys.path(), &origin, &loaded.contents);
    let first = match &kit {
        Some(kit) => signed_whole(loaded.contents, kit, &origin),
        None => loaded.contents,
    };
    let slot = Arc::new(ZoneSlot::new(&origin));
    slot.publish(Arc::new(first));
    let zones = ZoneSet::new(vec![Arc::clone(&slot)]);
    let engine = Engine::new(Config::default());
    let mut access = Access::default();
    let rule = Rule { actions: vec![Action::Update], ..Rule::default() };
    access.zones.insert((origin.clone(), ZoneAccess { rules: vec![rule].into() }));
    engine.set_access(access);
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(&dir.path().join("journal")).unwrap().journal;
    let journal = Arc::new(Mutex::new(journal));
    let journal = journaled.then_some(&journal);
    let policy = UpdatePolicy { signed_here: kit.is_some(), ..UpdatePolicy::default() };
    let mut current = slot.contents_full().unwrap();
    let (mut applied, mut streams, mut times) = (0, Vec::new(), Vec::new());
    for start in (0..count).step_by(batch.max(1)) {
        let tasks: Vec<UpdateTask> = (start..count.min(start + batch))
            .map(|i| task(&engine, &zones, &origin, operation(i, mixed), &mut streams))
            .collect();
        let began = Instant::now();
        let (next, judged) =
            commit_batch(&current, tasks, (journal, policy), &origin.to_string(), kit.as_ref());
        let next = Arc::new(next);
        slot.publish(Arc::clone(&next));
        times.push(began.elapsed());
        applied += judged.iter().filter(|j| j.changed).count();
        assert!(judged.iter().all(|j| j.rcode == Rcode::NOERROR));
        let old = std::mem::replace(&mut current, next);
        after_commit(old, judged);
        streams.clear();
    }
    summary(&current, applied);
    print_times(
        &mut times,
        &format!("{denial}, {}", rest.get(4).map_or("journal", String::as_str)),
    );
}

/// The kit of a CSK policy (ECDSAP256SHA256, RFC 9276's NSEC3 defaults: no salt, no
/// extra iterations, no opt-out) signing `zone` with `denial`, its key made in `dir`;
/// none for `unsigned`.
fn signing_kit(
    denial: &str,
    dir: &Path,
    origin: &Name,
    zone: &ZoneContents,
) -> Option<Arc<SignKit>> {
    let denial = match denial {
        "unsigned" => return None,
        "nsec" => DenialConfig::Nsec,
        "nsec3" => DenialConfig::Nsec3(Nsec3Config { iterations: 0, salt: vec![], opt_out: false }),
        other => panic!("the zone is unsigned, nsec or nsec3, not {other}"),
    };
    let policy = Policy { scheme: Scheme::Csk, ..Policy::default() };
    let plan = SigningPlan {
        id: "bench".into(),
        policy,
        denial,
        salt_length: 0,
        key_dir: dir.to_path_buf(),
        threads: 2,
        parents: vec![],
    };
    let now = tern_control::clock::unix_now();
    let mut signer = Signer::open(Arc::new(plan), origin, now).unwrap();
    Some(signer.kit(Some(zone), SerialPolicy::Increment, now).unwrap())
}

/// `zone` signed whole by `kit`, as the server signs a zone's first version; the time
/// it took printed.
fn signed_whole(zone: ZoneContents, kit: &Arc<SignKit>, origin: &Name) -> ZoneContents {
    let began = Instant::now();
    let change = Change::Whole { zone, history: History::default(), journal: vec![] };
    let name = origin.to_string();
    let signing = Signing::With(Arc::clone(kit));
    let signed = prepare(None, change, HistoryLimits::default(), None, &name, &signing).unwrap();
    let records = signed.record_count();
    println!("signed whole in {:.2} s: {records} records", began.elapsed().as_secs_f64());
    signed
}

/// The median, 99th percentile and largest of the batches' times, commit to publish.
fn print_times(times: &mut [Duration], what: &str) {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    println!(
        "{what}: {} commits, commit to published: median {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        times.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

/// What a commit of `tasks` does on its blocking thread (`tern_control::commit`): the
/// batch judged and applied, signed by `kit` when the zone is signed, its history, the
/// journal appended and synced. Never
/// inlined, so that callgrind can count it.
#[inline(never)]
fn commit_batch(
    current: &Arc<ZoneContents>,
    tasks: Vec<UpdateTask>,
    (journal, policy): (Option<&tern_control::journaled::Shared>, UpdatePolicy),
    name: &str,
    kit: Option<&Arc<SignKit>>,
) -> (ZoneContents, Vec<Judged>) {
    let computed = compute(current, tasks, policy, tern_control::clock::unix_now());
    let change = Change::Built { zone: computed.zone.unwrap(), changes: computed.changes };
    let limits = HistoryLimits::default();
    let signing = kit.map_or(Signing::Off, |kit| Signing::With(Arc::clone(kit)));
    let zone = prepare(Some(current), change, limits, journal, name, &signing).unwrap();
    (zone, computed.judged)
}

/// What the writer does after a commit: answers the batch's updates and lets go of the
/// version it replaced (freed there, as `control::writer::retire` frees a small zone).
/// Never inlined, so that callgrind can count it too (`--toggle-collect=…after_commit`).
#[inline(never)]
fn after_commit(old: Arc<ZoneContents>, judged: Vec<Judged>) {
    judged.into_iter().for_each(|j| j.task.answer(j.rcode));
    drop(old);
}

/// Adds and deletes of the `mixed` stream lag this many adds behind.
const LAG: usize = 500;

/// What update `i` does: add name `j` (`true`) or delete it.
fn operation(i: usize, mixed: bool) -> (usize, bool) {
    match i.checked_sub(LAG) {
        Some(k) if mixed && k % 2 == 1 => (k / 2, false),
        Some(k) if mixed => (LAG + k / 2, true),
        _ => (i, true),
    }
}

/// Update `(j, add)` through the engine, as a task whose answer goes to a kept stream.
fn task(
    engine: &Engine,
    zones: &ZoneSet,
    origin: &Name,
    (j, add): (usize, bool),
    streams: &mut Vec<AnswerStream>,
) -> UpdateTask {
    let message = update(origin, j, add);
    let client: IpAddr = "127.0.0.1".parse().unwrap();
    let request = Request { client, ..Request::new(&message, Transport::Tcp) };
    let (mut out, mut table) = (vec![0u8; 65535], CompressionTable::new());
    let Outcome::Update(update) = engine.answer(zones, &request, &mut out, &mut table) else {
        panic!("update of name {j} not handed over");
    };
    let (stream, reply) = AnswerStream::pair();
    streams.push(stream);
    UpdateTask::new(update, reply)
}

/// An UPDATE of `origin` adding `v<i>.<origin> 300 A 10.x.y.z`, or deleting it (class
/// NONE, TTL 0: RFC 2136 §2.5.4).
fn update(origin: &Name, i: usize, add: bool) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(i as u16);
    let mut flags = Flags(0);
    flags.set_opcode(Opcode::UPDATE);
    w.set_flags(flags);
    w.push_question(origin, Rtype::SOA, Class::IN).unwrap();
    let owner: Name = format!("v{i}.{origin}").parse().unwrap();
    let address = format!("10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255);
    let data = rdata::parse_str(Rtype::A, &address, None).unwrap();
    let (class, ttl) = if add { (Class::IN, 300) } else { (Class::NONE, 0) };
    w.push_record(Section::Authority, &owner, Rtype::A, class, ttl, &data).unwrap();
    w.finish().to_vec()
}

fn summary(zone: &ZoneContents, applied: usize) {
    println!(
        "{applied} updates applied; serial {}, {} records, history {} changes",
        zone.serial(),
        zone.record_count(),
        zone.history().len()
    );
}
