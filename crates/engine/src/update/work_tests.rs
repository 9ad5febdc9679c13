//! The working copy's cost and its semantics on large RRsets: comparisons counted so
//! that a change of n records to one RRset cannot silently become quadratic again
//! (issue 49: 50,000 records in one API PATCH took two minutes), and the results of
//! random edits compared with a plain model of RFC 2136 §3.4.2 (the rules at the top of
//! `work.rs`), on RRsets past the size where records are found through an index.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_wire::{rdata, Name, Rtype};
use tern_zone::records::canonical_eq;
use tern_zone::{RecordData, ZoneContents};

use crate::update::rdatas::COMPARISONS;
use crate::update::{Edit, UpdatePolicy};

const SOA: &str = "@ 300 SOA ns hostmaster 7 3600 600 86400 60\n@ 300 NS ns\nns 300 A 192.0.2.53\n";

fn zone_with(extra: &str) -> Arc<ZoneContents> {
    let text = format!("{SOA}{extra}");
    let set = crate::tests::zones(&[("example.", &text)]);
    let zone = set.slots().next().unwrap().contents_full().unwrap();
    zone
}

fn name(text: &str) -> Name {
    text.parse().unwrap()
}

fn address(n: usize) -> Vec<u8> {
    let n = n as u32;
    vec![10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// RDATA comparisons `edit` makes computing its changeset of `zone`.
fn comparisons(zone: &ZoneContents, edit: &Edit) -> u64 {
    COMPARISONS.with(|c| c.set(0));
    let change = edit.changeset(zone, &UpdatePolicy::default(), 0).unwrap();
    assert!(!change.is_empty());
    COMPARISONS.with(|c| c.get())
}

/// `n` A records added to one new RRset, every seventh deleted again.
fn big_edit(n: usize) -> Edit {
    let mut edit = Edit::default();
    let owner = name("big.example.");
    for i in 0..n {
        edit.add(owner.clone(), Rtype::A, 300, address(i));
    }
    for i in (0..n).step_by(7) {
        edit.delete_record(owner.clone(), Rtype::A, address(i));
    }
    edit
}

#[test]
fn adding_many_records_to_one_rrset_takes_n_log_n_comparisons() {
    let zone = zone_with("");
    let small = comparisons(&zone, &big_edit(2_000));
    let large = comparisons(&zone, &big_edit(8_000));
    // n log n: 4 × 13/11 ≈ 4.7 times as many for four times the records; n²: 16.
    assert!(large * 10 < small * 60, "{small} then {large} comparisons: not n log n");
    // Some 60 an edit (two searches of a B-tree; n² would be thousands).
    assert!(large < 8_000 * 100, "{large} comparisons for 8,000 records");
}

/// `n` TXT records at `big.example.`.
fn zone_with_txt(n: usize) -> Arc<ZoneContents> {
    let records: String = (0..n).map(|i| format!("big 300 TXT \"record {i}\"\n")).collect();
    zone_with(&records)
}

#[test]
fn a_small_change_to_a_large_rrset_costs_in_proportion_to_its_size() {
    let edit = |n: usize| {
        let mut edit = Edit::default();
        let txt = |text: &str| rdata::parse_str(Rtype::TXT, text, None).unwrap();
        edit.add(name("big.example."), Rtype::TXT, 300, txt("\"new\""));
        edit.delete_record(name("big.example."), Rtype::TXT, txt(&format!("\"record {}\"", n / 2)));
        edit
    };
    let small = comparisons(&zone_with_txt(1_000), &edit(1_000));
    let large = comparisons(&zone_with_txt(4_000), &edit(4_000));
    assert!(large * 10 < small * 60, "{small} then {large} comparisons: not linear");
    assert!(large < 4_000 * 8, "{large} comparisons for one change to 4,000 records");
}

/// A PATCH-sized edit (scaled down from the 100,000 records of issue 49, and in a
/// debug build): computing and applying it takes a fraction of the bound (it took
/// about ten seconds when each record was compared with every other).
#[test]
fn a_large_edit_of_one_rrset_is_computed_and_applied_quickly() {
    let zone = zone_with("");
    let edit = big_edit(20_000);
    let started = Instant::now();
    let change = edit.changeset(&zone, &UpdatePolicy::default(), 0).unwrap();
    let (next, _) = zone.apply(&change).unwrap();
    let elapsed = started.elapsed();
    let set = next.node(next.find(&name("big.example.")).unwrap()).unwrap();
    assert_eq!(set.rrset(Rtype::A).unwrap().count as usize, 20_000 - 20_000_usize.div_ceil(7));
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

/// A small deterministic generator (xorshift), for the random edits.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One random record of the types the model knows: A, MX (a name compared without
/// case, RFC 4034 §6.2) or WKS (same address and protocol: a duplicate).
fn random_record(random: &mut Random) -> (Rtype, Vec<u8>) {
    let n = random.below(40);
    match random.below(3) {
        0 => (Rtype::A, vec![192, 0, 2, n as u8]),
        1 => {
            let host = if random.below(2) == 0 { "MX" } else { "mx" };
            let text = format!("10 {host}{n}.example.");
            (Rtype::MX, rdata::parse_str(Rtype::MX, &text, None).unwrap())
        }
        _ => {
            let bits = random.below(256) as u8;
            (Rtype::WKS, vec![192, 0, 2, n as u8, 6, bits | 1])
        }
    }
}

/// RFC 2136 §3.4.2 for one owner, as plainly as it can be written (the model).
#[derive(Clone, Default)]
struct Model {
    sets: Vec<(Rtype, u32, Vec<Vec<u8>>)>,
}

impl Model {
    fn add(&mut self, rtype: Rtype, ttl: u32, rd: &[u8]) {
        let Some(set) = self.sets.iter_mut().find(|s| s.0 == rtype) else {
            self.sets.push((rtype, ttl, vec![rd.to_vec()]));
            return;
        };
        set.1 = ttl;
        let same = |x: &Vec<u8>| match rtype {
            Rtype::WKS => x.get(..5) == rd.get(..5),
            _ => canonical_eq(rtype, x, rd),
        };
        // WKS: the new bitmap; others: equal already, the first spelling stays.
        match set.2.iter_mut().find(|x| same(x)) {
            Some(x) if rtype == Rtype::WKS => *x = rd.to_vec(),
            Some(_) => {}
            None => set.2.push(rd.to_vec()),
        }
    }

    fn delete(&mut self, rtype: Rtype, rd: &[u8]) {
        if let Some(set) = self.sets.iter_mut().find(|s| s.0 == rtype) {
            if let Some(at) = set.2.iter().position(|x| canonical_eq(rtype, x, rd)) {
                set.2.remove(at);
            }
        }
        self.sets.retain(|s| !s.2.is_empty());
    }

    /// The records removed and added from `before` to `self`, in the changeset's order.
    fn diff(&self, before: &Model) -> (Vec<String>, Vec<String>) {
        let (mut removed, mut added) = (Vec::new(), Vec::new());
        let mut types: Vec<Rtype> = before.sets.iter().chain(&self.sets).map(|s| s.0).collect();
        types.sort_unstable();
        types.dedup();
        for rtype in types {
            let b = before.sets.iter().find(|s| s.0 == rtype);
            let a = self.sets.iter().find(|s| s.0 == rtype);
            let ttl_changed = matches!((b, a), (Some(b), Some(a)) if a.1 != b.1);
            let missing = |set: Option<&(Rtype, u32, Vec<Vec<u8>>)>, rd: &[u8]| {
                ttl_changed || !set.is_some_and(|s| s.2.iter().any(|x| canonical_eq(rtype, x, rd)))
            };
            for (list, from, to) in [(&mut removed, b, a), (&mut added, a, b)] {
                let Some((_, ttl, rdatas)) = from else { continue };
                for rd in rdatas.iter().filter(|rd| missing(to, rd)) {
                    list.push(line(rtype, *ttl, rd));
                }
            }
        }
        (removed, added)
    }
}

fn line(rtype: Rtype, ttl: u32, rd: &[u8]) -> String {
    format!("{ttl} {rtype} {}", rdata::to_text(rtype, rd))
}

fn lines(records: &[RecordData]) -> Vec<String> {
    records.iter().map(|r| line(r.rtype, r.ttl, &r.rdata)).collect()
}

/// Random sequences of additions, record and RRset deletions on RRsets of up to 40
/// records (past the index threshold), from a zone that has records there already:
/// the changeset is the model's, record for record and in the same order.
#[test]
fn random_edits_of_large_rrsets_agree_with_the_model() {
    let mut random = Random(0x2136_4034);
    let owner = name("r.example.");
    for round in 0..60 {
        let mut start = Model::default();
        let mut text = String::new();
        for _ in 0..random.below(60) {
            let (rtype, rd) = random_record(&mut random);
            start.add(rtype, 300, &rd);
        }
        for (rtype, ttl, rdatas) in &start.sets {
            for rd in rdatas {
                text.push_str(&format!("r {ttl} {rtype} {}\n", rdata::to_text(*rtype, rd)));
            }
        }
        let zone = zone_with(&text);
        let (mut model, mut edit) = (start.clone(), Edit::default());
        for _ in 0..random.below(200) {
            let (rtype, rd) = random_record(&mut random);
            match random.below(10) {
                0 => {
                    model.sets.retain(|s| s.0 != rtype);
                    edit.delete_rrset(owner.clone(), rtype);
                }
                1..=3 => {
                    model.delete(rtype, &rd);
                    edit.delete_record(owner.clone(), rtype, rd);
                }
                _ => {
                    let ttl = if random.below(30) == 0 { 600 } else { 300 };
                    model.add(rtype, ttl, &rd);
                    edit.add(owner.clone(), rtype, ttl, rd);
                }
            }
        }
        let change = edit.changeset(&zone, &UpdatePolicy::default(), 0).unwrap();
        let (removed, added) = model.diff(&start);
        assert_eq!(lines(&change.removed), removed, "round {round}: removed");
        assert_eq!(lines(&change.added), added, "round {round}: added");
        if !change.is_empty() {
            zone.apply(&change).unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
    }
}

/// An edit of many names, in an order that puts each before the ones already there
/// (their working copies were kept in a sorted vector: each new name moved all the
/// others: 30,000 names took 4 s in a debug build, 60,000 four times as long; and sorting
/// them once by `Dname::canonical_cmp` took half the time of the whole edit): computed
/// quickly.
#[test]
fn an_edit_of_many_names_in_any_order_is_computed_quickly() {
    let zone = zone_with("");
    let mut edit = Edit::default();
    for i in (0..60_000).rev() {
        edit.add(name(&format!("h{i:05}.example.")), Rtype::A, 300, address(i));
    }
    let started = Instant::now();
    let change = edit.changeset(&zone, &UpdatePolicy::default(), 0).unwrap();
    let elapsed = started.elapsed();
    assert_eq!(change.added.len(), 60_000);
    assert!(change.added.windows(2).all(|w| w[0].owner < w[1].owner), "in canonical order");
    assert!(elapsed < Duration::from_secs(6), "took {elapsed:?}");
}
