//! Tests of copy-on-write changesets: targeted cases, and a randomized check that
//! `apply` gives the same zone as building the changed records from scratch.

use std::collections::BTreeSet;

use tern_wire::{rdata, Name, Rtype};

use crate::changeset::{Changeset, RecordData};
use crate::contents::{Lookup, APEX};
use crate::hash::SuffixHashes;
use crate::node::{Flags, NO_NODE};
use crate::testutil::{self, Rng};
use crate::{Error, ZoneContents};

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

fn rec(owner: &str, rtype: Rtype, ttl: u32, text: &str) -> RecordData {
    let origin = name("example.");
    let rdata = rdata::parse_str(rtype, text, Some(&origin)).unwrap();
    RecordData { owner: name(owner), rtype, ttl, rdata }
}

fn base() -> ZoneContents {
    let extra = "a.b.example. 300 A 192.0.2.1\nmail.example. 300 MX 10 mx.example.\n";
    testutil::zone("example.", &format!("{}{extra}", testutil::APEX)).0
}

fn exists(z: &ZoneContents, n: &str) -> bool {
    let q = name(n);
    matches!(z.lookup(&q, &SuffixHashes::of(&q)), Lookup::Found(_))
}

fn soa_change(old: u32, new: u32) -> (RecordData, RecordData) {
    let soa = |s: u32| {
        rec("example.", Rtype::SOA, 3600, &format!("ns1 hostmaster {s} 7200 3600 1209600 300"))
    };
    (soa(old), soa(new))
}

#[test]
fn add_new_name_shares_the_rest() {
    let z = base();
    let (old_soa, new_soa) = soa_change(1, 2);
    let cs = Changeset {
        removed: vec![old_soa],
        added: vec![new_soa, rec("x.y.example.", Rtype::A, 60, "192.0.2.7")],
        ..Changeset::default()
    };
    let (z2, _) = z.apply(&cs).unwrap();
    assert!(exists(&z2, "x.y.example.") && exists(&z2, "y.example."));
    assert!(!exists(&z, "x.y.example.") && !exists(&z, "y.example."));
    assert_eq!((z.serial(), z2.serial()), (1, 2));
    assert_eq!(z2.record_count(), z.record_count() + 1);
    let y = z2.find(&name("y.example.")).unwrap();
    assert!(z2.node(y).unwrap().flags.contains(Flags::EMPTY));
}

/// RFC 2181 §8: a TTL with its top bit set, in a changeset (a journal written before
/// every way in applied the rule, an IXFR), counts as 0 — as the zone-file parser and
/// a transfer's builder read it.
#[test]
fn a_ttl_with_the_top_bit_set_counts_as_zero() {
    let z = base();
    let cs = Changeset {
        added: vec![rec("t.example.", Rtype::A, u32::MAX, "192.0.2.8")],
        ..Changeset::default()
    };
    let (z2, _) = z.apply(&cs).unwrap();
    let node = z2.node(z2.find(&name("t.example.")).unwrap()).unwrap();
    assert_eq!(node.rrset(Rtype::A).unwrap().ttl, 0);
    let mut builder = crate::ZoneBuilder::new(&name("example."));
    testutil::add_lines(&mut builder, "example.", testutil::APEX);
    builder.add(&name("t.example."), Rtype::A, 0x8000_0000, &[192, 0, 2, 9]); // as AXFR in
    let (built, _) = builder.finish().unwrap();
    let node = built.node(built.find(&name("t.example.")).unwrap()).unwrap();
    assert_eq!(node.rrset(Rtype::A).unwrap().ttl, 0);
}

#[test]
fn removing_the_last_record_removes_the_name_and_empty_parents() {
    let z = base();
    let cs = Changeset {
        removed: vec![rec("a.b.example.", Rtype::A, 300, "192.0.2.1")],
        added: vec![],
        ..Changeset::default()
    };
    let (z2, _) = z.apply(&cs).unwrap();
    assert!(!exists(&z2, "a.b.example."));
    assert!(!exists(&z2, "b.example."), "the empty non-terminal goes with its last child");
    assert!(exists(&z, "a.b.example."));
    assert_eq!(z2.node(APEX).unwrap().children + 1, z.node(APEX).unwrap().children);
}

#[test]
fn new_cut_above_existing_names_marks_them_non_authoritative() {
    let z = base();
    let cs = Changeset {
        removed: vec![],
        added: vec![rec("b.example.", Rtype::NS, 300, "ns.other.")],
        ..Changeset::default()
    };
    let (z2, _) = z.apply(&cs).unwrap();
    let a = z2.find(&name("a.b.example.")).unwrap();
    assert!(z2.node(a).unwrap().flags.contains(Flags::NONAUTH));
    let b = z2.find(&name("b.example.")).unwrap();
    assert_eq!(z2.cut_above(a), Some(b));
}

#[test]
fn phantom_target_becomes_real() {
    let z = base();
    let mail = z.find(&name("mail.example.")).unwrap();
    let target = z.node(mail).unwrap().rrset(Rtype::MX).unwrap().target(0);
    assert!(z.node(target).unwrap().flags.contains(Flags::PHANTOM));
    let cs = Changeset {
        removed: vec![],
        added: vec![rec("mx.example.", Rtype::A, 300, "192.0.2.25")],
        ..Changeset::default()
    };
    let (z2, _) = z.apply(&cs).unwrap();
    let node = z2.node(target).unwrap();
    assert!(!node.flags.contains(Flags::PHANTOM));
    assert!(node.rrset(Rtype::A).is_some());
    assert_eq!(node.parent, APEX);
}

#[test]
fn wildcard_links_follow_changes() {
    let z = base();
    let add = Changeset {
        removed: vec![],
        added: vec![rec("*.b.example.", Rtype::TXT, 60, "\"w\"")],
        ..Changeset::default()
    };
    let (z2, _) = z.apply(&add).unwrap();
    let b = z2.find(&name("b.example.")).unwrap();
    let star = z2.find(&name("*.b.example.")).unwrap();
    assert_eq!(z2.node(b).unwrap().wildcard, star);
    let remove = Changeset { removed: add.added.clone(), added: vec![], ..Changeset::default() };
    let (z3, _) = z2.apply(&remove).unwrap();
    assert_eq!(z3.node(b).unwrap().wildcard, NO_NODE);
}

#[test]
fn inconsistent_changesets_are_refused() {
    let z = base();
    let missing = Changeset {
        removed: vec![rec("a.b.example.", Rtype::A, 300, "192.0.2.99")],
        added: vec![],
        ..Changeset::default()
    };
    assert!(
        matches!(z.apply(&missing), Err(Error::Changeset(m)) if m.to_string().contains("not in the zone"))
    );
    let present = Changeset {
        removed: vec![],
        added: vec![rec("a.b.example.", Rtype::A, 300, "192.0.2.1")],
        ..Changeset::default()
    };
    assert!(
        matches!(z.apply(&present), Err(Error::Changeset(m)) if m.to_string().contains("already in the zone"))
    );
    let outside = Changeset {
        removed: vec![],
        added: vec![rec("x.org.", Rtype::A, 300, "192.0.2.1")],
        ..Changeset::default()
    };
    assert!(matches!(z.apply(&outside), Err(Error::Changeset(_))));
    let cname = Changeset {
        removed: vec![],
        added: vec![rec("a.b.example.", Rtype::CNAME, 300, "x.example.")],
        ..Changeset::default()
    };
    assert!(matches!(z.apply(&cname), Err(Error::Semantic(_))));
}

const OWNERS: &[&str] = &[
    "a.example.",
    "b.example.",
    "x.a.example.",
    "y.x.a.example.",
    "*.a.example.",
    "c.b.example.",
    "*.example.",
    "d.example.",
    "e.d.example.",
    "f.e.d.example.",
];

fn random_record(rng: &mut Rng) -> RecordData {
    let owner = *rng.pick(OWNERS);
    match rng.next() % 5 {
        0 => rec(
            owner,
            Rtype::NS,
            300,
            rng.pick::<&str>(&["ns.other.", "ns.a.example.", "f.e.d.example."]),
        ),
        1 => rec(owner, Rtype::MX, 300, rng.pick::<&str>(&["1 d.example.", "2 x.a.example."])),
        2 => rec(owner, Rtype::TXT, 300, rng.pick::<&str>(&["\"1\"", "\"2\""])),
        _ => rec(owner, Rtype::A, 300, rng.pick::<&str>(&["192.0.2.1", "192.0.2.2", "192.0.2.3"])),
    }
}

fn records_of(z: &ZoneContents) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    z.for_each_record(|o, t, ttl, rd| {
        out.insert(format!("{} {ttl} {t} {}", o.to_string().to_lowercase(), rdata::to_text(t, rd)));
    });
    out
}

/// What a query sees at a name: found or not, the relevant flags, the wildcard child.
fn view(z: &ZoneContents, n: &str) -> String {
    let q = name(n);
    let mask = Flags::APEX | Flags::DELEGATION | Flags::NONAUTH | Flags::EMPTY | Flags::WILDCARD;
    let show = |id: u32| {
        let node = z.node(id).unwrap();
        let wild = z.node(node.wildcard).map(|w| w.owner().to_string()).unwrap_or_default();
        let flags = Flags::from_bits(node.flags.bits() & mask.bits());
        format!(
            "{} {flags:?} wild={wild} cut={:?}",
            node.owner(),
            z.cut_above(id).map(|c| z.node(c).unwrap().owner().to_string())
        )
    };
    match z.lookup(&q, &SuffixHashes::of(&q)) {
        Lookup::Found(id) => format!("found {}", show(id)),
        Lookup::NotFound { encloser, .. } => format!("missing, encloser {}", show(encloser)),
    }
}

/// Every index entry hints at its node's current data (built or changed alike).
fn assert_hints_current(z: &ZoneContents) {
    for id in z.index.ids() {
        let node = z.node(id).unwrap();
        let hint = z.index.hint(crate::hash::name_hash(node.owner()), id);
        assert_eq!(hint, Some(node.data_address()), "{}", node.owner());
    }
}

#[test]
fn apply_equals_rebuild_on_random_changes() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut compared = 0;
    for round in 0..300 {
        let mut current: Vec<RecordData> = (0..6).map(|_| random_record(&mut rng)).collect();
        current.sort_by_key(|r| format!("{:?}", r));
        current.dedup();
        let Some(zone) = build(&current) else { continue };
        let mut cs = Changeset::default();
        for r in &current {
            if rng.next() % 3 == 0 {
                cs.removed.push(r.clone());
            }
        }
        let mut next: Vec<RecordData> =
            current.iter().filter(|r| !cs.removed.contains(r)).cloned().collect();
        for _ in 0..3 {
            let r = random_record(&mut rng);
            if !next.contains(&r) {
                next.push(r.clone());
                cs.added.push(r);
            }
        }
        let rebuilt = build(&next);
        let applied = zone.apply(&cs).ok().map(|(z, _)| z);
        let (Some(rebuilt), Some(applied)) = (rebuilt, applied) else {
            continue; // one side refused (e.g. CNAME conflicts are not generated; NS at apex is)
        };
        assert_eq!(records_of(&applied), records_of(&rebuilt), "round {round}: {cs:?}");
        assert_hints_current(&rebuilt);
        assert_hints_current(&applied);
        for owner in OWNERS.iter().chain(&["zz.example.", "q.c.b.example.", "q.y.x.a.example."]) {
            assert_eq!(
                view(&applied, owner),
                view(&rebuilt, owner),
                "round {round} {owner}: {cs:?}"
            );
        }
        compared += 1;
    }
    assert!(compared > 200, "only {compared} rounds compared");
}

fn build(records: &[RecordData]) -> Option<ZoneContents> {
    let mut b = testutil::builder("example.", testutil::APEX);
    for r in records {
        b.add(&r.owner, r.rtype, r.ttl, &r.rdata);
    }
    b.finish().ok().map(|(z, _)| z)
}

#[test]
fn an_rrset_cannot_grow_past_what_a_node_counts() {
    let z = base();
    let added: Vec<RecordData> = (0..65_536u32)
        .map(|i| RecordData {
            owner: name("big.example."),
            rtype: Rtype::A,
            ttl: 300,
            rdata: vec![10, (i >> 16) as u8, (i >> 8) as u8, i as u8],
        })
        .collect();
    let cs = Changeset { added, ..Changeset::default() };
    let refused = z.apply(&cs);
    assert!(
        matches!(&refused, Err(Error::Changeset(m)) if m.to_string().contains("more than 65535")),
        "{refused:?}"
    );
}

/// Big RRsets change in linear time: 20,000 records added, then all but one removed,
/// then a removal of a record that is not there refused.
#[test]
fn big_rrsets_change_record_by_record_in_linear_time() {
    let z = base();
    let a = |i: u32| RecordData {
        owner: name("big.example."),
        rtype: Rtype::A,
        ttl: 300,
        rdata: vec![10, (i >> 16) as u8, (i >> 8) as u8, i as u8],
    };
    let add = Changeset { added: (0..20_000).map(a).collect(), ..Changeset::default() };
    let (z, _) = z.apply(&add).unwrap();
    let remove = Changeset { removed: (1..20_000).map(a).collect(), ..Changeset::default() };
    let (z, _) = z.apply(&remove).unwrap();
    let big = z.find(&name("big.example.")).unwrap();
    assert_eq!(z.node(big).unwrap().rrset(Rtype::A).unwrap().count, 1);
    let again = Changeset { removed: (0..20).map(a).collect(), ..Changeset::default() };
    assert!(
        matches!(z.apply(&again), Err(Error::Changeset(m)) if m.to_string().contains("not in the zone"))
    );
    let dup = Changeset { added: (0..20).map(|_| a(7)).collect(), ..Changeset::default() };
    assert!(matches!(z.apply(&dup), Err(Error::Changeset(m)) if m.to_string().contains("already")));
}

#[test]
fn changes_applied_in_place_equal_changes_applied_to_copies() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut records: Vec<RecordData> = (0..8).map(|_| random_record(&mut rng)).collect();
    records.sort_by_key(|r| format!("{:?}", r));
    records.dedup();
    let first = build(&records).expect("the first zone builds");
    let (mut copied, mut in_place) = (first.clone(), first.clone());
    let mut applied = 0;
    for step in 0..200 {
        let held = held_records(&copied);
        let mut cs = Changeset::default();
        cs.removed.extend(held.iter().filter(|_| rng.next() % 5 == 0).cloned());
        let r = random_record(&mut rng);
        if !held.contains(&r) {
            cs.added.push(r);
        }
        match (copied.apply(&cs), in_place.apply_in_place(&cs)) {
            (Ok((next, _)), Ok(_)) => {
                copied = next;
                applied += 1;
            }
            (Err(_), Err(_)) => in_place = copied.clone(), // half changed: dropped
            (a, b) => panic!("step {step}: copy {:?}, in place {:?}: {cs:?}", a.err(), b.err()),
        }
        assert_eq!(records_of(&in_place), records_of(&copied), "step {step}: {cs:?}");
        assert_hints_current(&in_place);
        for owner in OWNERS.iter().chain(&["zz.example.", "q.c.b.example."]) {
            assert_eq!(view(&in_place, owner), view(&copied, owner), "step {step} {owner}");
        }
    }
    assert!(applied > 100, "only {applied} changes applied");
    assert_eq!(records_of(&first), records_of(&build(&records).unwrap()), "the first is untouched");
}

/// The zone's records but its SOA, as changeset records.
fn held_records(z: &ZoneContents) -> Vec<RecordData> {
    let mut out = Vec::new();
    z.for_each_record(|o, rtype, ttl, rdata| {
        if rtype != Rtype::SOA {
            let owner = o.to_string().parse().unwrap();
            out.push(RecordData { owner, rtype, ttl, rdata: rdata.to_vec() });
        }
    });
    out
}

/// What makes node ids safe to reuse, checked over the whole zone: the vacant nodes are
/// exactly the free list, unindexed and named by nothing; every other node is indexed
/// under its owner; each node's reference count is the number of records naming it; and
/// no phantom that nothing names is left behind.
pub(crate) fn assert_ids_sound(z: &ZoneContents) {
    use crate::node::{NodeId, REFS_UNCOUNTED};
    let mut free: Vec<NodeId> = z.free.iter().flat_map(|f| f.iter()).copied().collect();
    free.sort_unstable();
    let before = free.len();
    free.dedup();
    assert_eq!(free.len(), before, "an id is free twice");
    let mut refs = vec![0usize; z.node_count()];
    let live = || (0..z.node_count() as NodeId).filter(|&id| !z.node(id).unwrap().is_vacant());
    for id in live() {
        let node = z.node(id).unwrap();
        assert_eq!(z.find_hashed(node.owner(), crate::hash::name_hash(node.owner())), Some(id));
        for target in node.targets() {
            refs[target as usize] += 1;
        }
        for link in [node.parent, node.wildcard, node.prev].into_iter().chain(node.targets()) {
            let linked = z.node(link);
            assert!(link == NO_NODE || linked.is_some_and(|n| !n.is_vacant()), "{node:?}");
        }
    }
    let vacant: Vec<NodeId> =
        (0..z.node_count() as NodeId).filter(|&id| z.node(id).unwrap().is_vacant()).collect();
    assert_eq!(vacant, free, "the vacant nodes are the free list");
    assert_eq!(z.index.len(), live().count(), "one index entry per node in use");
    for id in live() {
        let node = z.node(id).unwrap();
        let counted = refs[id as usize];
        assert!(node.refs == REFS_UNCOUNTED || usize::from(node.refs) == counted, "{node:?}");
        let garbage = node.flags.contains(Flags::PHANTOM) && counted == 0;
        assert!(!garbage, "{node:?} is a phantom nothing names, left in the table");
    }
    if let Some(order) = &z.order {
        let ids: Vec<NodeId> = order.iter().collect();
        assert!(ids.iter().all(|&id| !z.node(id).unwrap().is_vacant()), "the order holds {ids:?}");
    }
}

/// Names that come and go: unique hosts (`u<n>`), some naming others as MX or CNAME
/// targets, some being NS targets of a delegation with glue, some wildcards and some
/// below empty non-terminals.
fn churn_record(rng: &mut Rng, step: u32) -> RecordData {
    let n = step.saturating_sub((rng.next() % 6) as u32);
    let other = step.saturating_sub((rng.next() % 12) as u32);
    match rng.next() % 9 {
        0 => rec(&format!("u{n}.example."), Rtype::MX, 300, &format!("10 u{other}.example.")),
        1 => rec(&format!("c{n}.example."), Rtype::CNAME, 300, &format!("u{other}.example.")),
        2 => rec("d.example.", Rtype::NS, 300, &format!("ns{other}.d.example.")),
        3 => rec(&format!("ns{n}.d.example."), Rtype::A, 300, "192.0.2.53"),
        4 => rec(&format!("*.w{n}.example."), Rtype::TXT, 300, "\"w\""),
        5 => rec(&format!("h.e{n}.f.example."), Rtype::A, 300, "192.0.2.8"),
        6 => random_record(rng),
        _ => rec(&format!("u{n}.example."), Rtype::A, 300, "192.0.2.9"),
    }
}

/// Names a churn step may have touched, looked up in the comparisons.
fn churn_probes(step: u32) -> Vec<String> {
    let mut out: Vec<String> = OWNERS.iter().map(|o| o.to_string()).collect();
    for n in step.saturating_sub(14)..=step {
        for form in ["u{}", "c{}", "ns{}.d", "x.w{}", "w{}", "h.e{}.f", "e{}.f", "q.u{}"] {
            out.push(format!("{}.example.", form.replace("{}", &n.to_string())));
        }
    }
    out
}

/// A long run of changes whose names keep coming and going, so that node ids are
/// reclaimed and reused: after every change, applied to copies and in place in turn,
/// the zone answers as the zone built from its records does, and its ids stay sound.
#[test]
fn churned_names_are_reclaimed_and_the_zone_equals_a_rebuild() {
    let mut rng = Rng(0xA076_1D64_78BD_642F);
    let mut records: Vec<RecordData> = Vec::new();
    let mut zone = build(&records).unwrap();
    let (mut applied, mut reused, mut peak) = (0, 0, 0);
    for step in 0..600u32 {
        let mut cs = Changeset::default();
        cs.removed.extend(records.iter().filter(|_| rng.next() % 4 == 0).cloned());
        let mut next: Vec<RecordData> =
            records.iter().filter(|r| !cs.removed.contains(r)).cloned().collect();
        for _ in 0..1 + rng.next() % 3 {
            let r = churn_record(&mut rng, step);
            if !next.contains(&r) {
                next.push(r.clone());
                cs.added.push(r);
            }
        }
        let (Some(rebuilt), nodes_before) = (build(&next), zone.node_count()) else { continue };
        let free_before = zone.vacant_count();
        let result = if step % 2 == 0 {
            zone.apply(&cs).map(|(z, _)| zone = z)
        } else {
            let mut copy = zone.clone();
            copy.apply_in_place(&cs).map(|_| zone = copy)
        };
        if result.is_err() {
            continue; // refused (a CNAME beside other data): the zone stays as it was
        }
        records = next;
        applied += 1;
        reused += usize::from(zone.vacant_count() < free_before);
        assert!(zone.node_count() >= nodes_before);
        assert_eq!(records_of(&zone), records_of(&rebuilt), "step {step}: {cs:?}");
        assert_hints_current(&zone);
        assert_ids_sound(&zone);
        assert_ids_sound(&rebuilt);
        for owner in churn_probes(step) {
            assert_eq!(view(&zone, &owner), view(&rebuilt, &owner), "step {step} {owner}: {cs:?}");
        }
        // The table grows only when no place is free: past the most names held at once
        // by what one change adds.
        peak = peak.max(rebuilt.node_count());
        assert!(zone.node_count() <= peak + 16, "step {step}: {} nodes", zone.node_count());
    }
    assert!(applied > 400 && reused > 100, "{applied} changes applied, {reused} reused ids");
}

/// 100,000 unique names each added and removed 50 changes later, one change each, in
/// batches applied in place: the node table and the index stay the size of the names
/// alive at once, and ids are reused. Every third name is the MX target of the next
/// one, and so outlives its own records until that one goes.
#[test]
fn a_zone_whose_names_churn_stays_the_size_of_its_live_names() {
    const NAMES: u32 = 100_000;
    const LIFE: u32 = 50;
    let mut zone = base();
    let base_nodes = zone.node_count();
    let record = |n: u32| {
        if n % 3 == 1 {
            rec(&format!("u{n}.example."), Rtype::MX, 300, &format!("10 u{}.example.", n - 1))
        } else {
            rec(&format!("u{n}.example."), Rtype::A, 300, "192.0.2.9")
        }
    };
    let mut version = zone.clone();
    for n in 0..NAMES + LIFE {
        let mut cs = Changeset::default();
        if n < NAMES {
            cs.added.push(record(n));
        }
        if n >= LIFE {
            cs.removed.push(record(n - LIFE));
        }
        zone.apply_in_place(&cs).unwrap();
        if n % 64 == 0 {
            version = zone.clone(); // published: the next changes copy what they touch
        }
        assert!(zone.node_count() <= base_nodes + 2 * LIFE as usize + 8, "{n}");
    }
    drop(version);
    assert_eq!(zone.node_count() - zone.vacant_count(), base_nodes);
    assert!(zone.index.slot_count() <= 64, "{} index slots", zone.index.slot_count());
    assert_ids_sound(&zone);
    assert_eq!(records_of(&zone), records_of(&base()));
}

/// A name that is some record's target stays, as a phantom, while it is named, and is
/// reclaimed with the last record naming it; a name added then takes its place.
#[test]
fn a_target_is_reclaimed_with_the_last_record_naming_it() {
    let z = base();
    let mx_target =
        z.find_hashed(&name("mx.example."), crate::hash::name_hash(&name("mx.example.")));
    let target = mx_target.unwrap();
    assert_eq!(z.node(target).unwrap().refs, 1);
    let second = Changeset {
        added: vec![rec("web.example.", Rtype::CNAME, 300, "mx.example.")],
        ..Changeset::default()
    };
    let (z, _) = z.apply(&second).unwrap();
    assert_eq!(z.node(target).unwrap().refs, 2);
    let first_gone = Changeset {
        removed: vec![rec("mail.example.", Rtype::MX, 300, "10 mx.example.")],
        ..Changeset::default()
    };
    let (z, _) = z.apply(&first_gone).unwrap();
    assert_eq!(z.node(target).unwrap().owner().to_string(), "mx.example.");
    assert_eq!(z.vacant_count(), 1, "mail.example. went, its target stays");
    let (z, _) =
        z.apply(&Changeset { removed: second.added.clone(), ..Changeset::default() }).unwrap();
    assert_eq!(z.vacant_count(), 3, "mail, web and now mx");
    assert!(z.node(target).unwrap().is_vacant());
    assert_ids_sound(&z);
    let nodes = z.node_count();
    let add = Changeset {
        added: vec![rec("new.example.", Rtype::A, 300, "192.0.2.1")],
        ..Changeset::default()
    };
    let (z, _) = z.apply(&add).unwrap();
    assert_eq!((z.node_count(), z.vacant_count()), (nodes, 2), "a free place is taken");
    assert!(exists(&z, "new.example.") && !exists(&z, "mx.example."));
    assert_ids_sound(&z);
}
