//! Incremental signing against whole-zone signing: after every change of random and
//! hand-picked sequences (names, types, delegations with glue and DS, wildcards, empty
//! non-terminals, TTLs, apex records, keys), the zone kept up to date by `sign_change`
//! holds the records `sign_zone` makes from the same unsigned data (signature bytes
//! aside), and every signature in it verifies.

use std::collections::BTreeSet;

use tern_wire::rdata::{parse_str, Rdata};
use tern_wire::{Name, Rtype};
use tern_zone::{Changeset, RecordData, ZoneBuilder, ZoneContents};

use crate::algorithm::Algorithm;
use crate::key::{verify, KeyRole, SigningKey};
use crate::nsec3::Nsec3Config;
use crate::rrsig::{signed_data, RrsetRef, Scratch};
use crate::validity::Validity;
use crate::zone::{sign_zone, CdsRecords, DenialConfig, SignOptions};

use super::{sign_change, sign_change_applied};

/// An unsigned record: owner, type, TTL, RDATA.
pub(crate) type Rec = (Name, Rtype, u32, Vec<u8>);

pub(crate) fn name(text: &str) -> Name {
    text.parse().unwrap()
}

pub(crate) fn rec(owner: &str, rtype: Rtype, ttl: u32, text: &str) -> Rec {
    let rdata = parse_str(rtype, text, Some(&name("example."))).unwrap();
    (name(owner), rtype, ttl, rdata)
}

fn soa(serial: u32, ttl: u32, minimum: u32) -> Rec {
    rec("example.", Rtype::SOA, ttl, &format!("ns h {serial} 7200 3600 1209600 {minimum}"))
}

/// The records every version holds besides its SOA.
pub(crate) fn apex_records() -> BTreeSet<Rec> {
    [rec("example.", Rtype::NS, 3600, "ns"), rec("ns.example.", Rtype::A, 3600, "192.0.2.53")]
        .into()
}

pub(crate) fn build(records: &BTreeSet<Rec>) -> ZoneContents {
    let mut builder = ZoneBuilder::new(&name("example."));
    for (owner, rtype, ttl, rdata) in records {
        builder.add(owner, *rtype, *ttl, rdata);
    }
    builder.finish().unwrap().0
}

fn record(r: &Rec) -> RecordData {
    RecordData { owner: r.0.clone(), rtype: r.1, ttl: r.2, rdata: r.3.clone() }
}

/// The unsigned change from `old` to `new` (each with one SOA).
pub(crate) fn unsigned_change(old: &BTreeSet<Rec>, new: &BTreeSet<Rec>) -> Changeset {
    let soa_of = |s: &BTreeSet<Rec>| record(s.iter().find(|r| r.1 == Rtype::SOA).unwrap());
    let mut change = Changeset::between(soa_of(old), soa_of(new));
    change.removed = old.difference(new).filter(|r| r.1 != Rtype::SOA).map(record).collect();
    change.added = new.difference(old).filter(|r| r.1 != Rtype::SOA).map(record).collect();
    change
}

/// Every record of `zone` as text, RRSIGs without their signature field.
pub(crate) fn records_of(zone: &ZoneContents) -> Vec<String> {
    let mut out = Vec::new();
    zone.for_each_record(|owner, rtype, ttl, rdata| {
        let mut text = tern_wire::rdata::to_text(rtype, rdata);
        if rtype == Rtype::RRSIG {
            text = text.rsplit_once(' ').unwrap().0.to_string();
        }
        out.push(format!("{} {ttl} {rtype} {text}", owner.to_string().to_lowercase()));
    });
    out.sort();
    out
}

/// Every record of `zone`, as it is, sorted.
fn all_records(zone: &ZoneContents) -> Vec<(String, Rtype, u32, Vec<u8>)> {
    let mut out = Vec::new();
    zone.for_each_record(|owner, rtype, ttl, rdata| {
        out.push((owner.to_string(), rtype, ttl, rdata.to_vec()));
    });
    out.sort();
    out
}

/// Verifies every signature of `zone` (each with the key its tag names); returns how
/// many there are.
pub(crate) fn verify_zone(zone: &ZoneContents, keys: &[SigningKey]) -> usize {
    let mut scratch = Scratch::default();
    let mut count = 0;
    let chain = zone.nsec3().into_iter().flat_map(|c| c.nodes());
    for node in zone.data_nodes().map(|(_, n)| n).chain(chain) {
        for rrset in node.rrsets().filter(|r| r.has_records()) {
            let rdatas: crate::names::Rdatas = rrset.rdatas().collect();
            let view = RrsetRef {
                owner: node.owner(),
                rtype: rrset.rtype,
                ttl: rrset.ttl,
                rdatas: &rdatas,
            };
            for sig in rrset.sigs() {
                let Ok(Rdata::Rrsig(fields)) = Rdata::from_wire(Rtype::RRSIG, sig) else {
                    panic!()
                };
                let key = keys.iter().find(|k| k.key_tag() == fields.key_tag).unwrap();
                let times = (fields.inception, fields.expiration);
                let data = signed_data(&view, key, zone.origin(), times, &mut scratch).unwrap();
                let what = format!("{} {}", node.owner(), rrset.rtype);
                verify(key.dnskey(), data, &fields.signature)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                count += 1;
            }
        }
    }
    count
}

pub(crate) fn validity() -> Validity {
    Validity::new(1_700_000_000, 1_700_000_000 + 30 * 86400).unwrap().with_jitter(86400, 3).unwrap()
}

pub(crate) fn keys(algorithm: Algorithm, csk: bool) -> Vec<SigningKey> {
    let roles: &[KeyRole] = if csk { &[KeyRole::Csk] } else { &[KeyRole::Ksk, KeyRole::Zsk] };
    roles.iter().map(|&role| SigningKey::generate(algorithm, role).unwrap()).collect()
}

pub(crate) fn denials() -> [DenialConfig; 3] {
    let nsec3 = Nsec3Config { iterations: 1, salt: vec![0xAB], opt_out: false };
    [
        DenialConfig::Nsec,
        DenialConfig::Nsec3(nsec3.clone()),
        DenialConfig::Nsec3(Nsec3Config { opt_out: true, ..nsec3 }),
    ]
}

/// A zone kept signed by incremental changes, checked against whole signing.
pub(crate) struct Signed {
    pub data: BTreeSet<Rec>,
    pub zone: ZoneContents,
    pub keys: Vec<SigningKey>,
    pub options: SignOptions,
    pub serial: u32,
    pub soa: (u32, u32),
}

impl Signed {
    pub fn new(data: BTreeSet<Rec>, keys: Vec<SigningKey>, options: SignOptions) -> Signed {
        let mut all = data.clone();
        all.insert(soa(1, 3600, 300));
        let zone = sign_zone(&build(&all), &keys, &options).unwrap().to_contents().unwrap();
        Signed { data, zone, keys, options, serial: 1, soa: (3600, 300) }
    }

    pub fn with_soa(&self, data: &BTreeSet<Rec>, serial: u32) -> BTreeSet<Rec> {
        let mut all = data.clone();
        all.insert(soa(serial, self.soa.0, self.soa.1));
        all
    }

    /// Moves to `new` data (the SOA's TTL and MINIMUM `soa`) by `sign_change`; checks
    /// the outcome; returns the signed change.
    pub fn step(&mut self, new: BTreeSet<Rec>, soa: (u32, u32), context: &str) -> Changeset {
        let old = self.with_soa(&self.data, self.serial);
        self.serial += 1;
        self.soa = soa;
        let new_all = self.with_soa(&new, self.serial);
        let change = unsigned_change(&old, &new_all);
        // In turn by `sign_change` and by `sign_change_applied`, whose version must be
        // the base with its signed change applied, to the byte.
        let signed = if self.serial % 2 == 0 {
            let signed = sign_change(&self.zone, &change, &self.keys, &self.options);
            let signed = signed.unwrap_or_else(|e| panic!("{context}: {e}"));
            self.zone = self.zone.apply(&signed).unwrap_or_else(|e| panic!("{context}: {e}")).0;
            signed
        } else {
            let applied = self.zone.apply(&change).unwrap_or_else(|e| panic!("{context}: {e}")).0;
            let made = sign_change_applied(&self.zone, applied, &change, &self.keys, &self.options);
            let (signed, zone) = made.unwrap_or_else(|e| panic!("{context}: {e}"));
            let (want, _) = self.zone.apply(&signed).unwrap_or_else(|e| panic!("{context}: {e}"));
            assert_eq!(all_records(&zone), all_records(&want), "{context}");
            assert_eq!(zone.record_count(), want.record_count(), "{context}");
            self.zone = zone;
            signed
        };
        self.data = new;
        self.check(&new_all, context);
        signed
    }

    /// The zone holds what whole signing makes of `all`, and its signatures verify.
    pub fn check(&self, all: &BTreeSet<Rec>, context: &str) {
        let whole =
            sign_zone(&build(all), &self.keys, &self.options).unwrap().to_contents().unwrap();
        same_records(&self.zone, &whole, context);
        verify_zone(&self.zone, &self.keys);
    }
}

/// Asserts that two zones hold the same records (signature bytes aside), naming those
/// that differ.
pub(crate) fn same_records(got: &ZoneContents, want: &ZoneContents, context: &str) {
    let (got, want) = (records_of(got), records_of(want));
    if got != want {
        let extra: Vec<&String> = got.iter().filter(|r| !want.contains(r)).collect();
        let missing: Vec<&String> = want.iter().filter(|r| !got.contains(r)).collect();
        panic!("{context}: extra {extra:#?}\nmissing {missing:#?}");
    }
}

/// A small random number generator (xorshift), seeded.
pub(crate) struct Rng(u64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A random name below the apex: one to three labels from a few (a wildcard among them).
fn random_name(rng: &mut Rng, delegation: bool) -> String {
    const LABELS: [&str; 5] = ["a", "b", "c", "*", "d"];
    let depth = 1 + rng.below(3);
    let mut labels: Vec<&str> =
        (0..depth).map(|_| LABELS[rng.below(if delegation { 3 } else { 5 })]).collect();
    if let Some(first) = labels.first_mut().filter(|_| rng.below(4) == 0 && !delegation) {
        *first = "*";
    }
    labels.push("example.");
    labels.join(".")
}

/// One random edit of `data`.
fn mutate(data: &mut BTreeSet<Rec>, rng: &mut Rng) {
    match rng.below(9) {
        0 | 1 => add_data(data, rng),
        2 => {
            if let Some(r) = pick(data, rng) {
                data.remove(&r);
            }
        }
        3 => {
            if let Some(r) = pick(data, rng) {
                data.retain(|x| x.0 != r.0);
            }
        }
        4 => add_delegation(data, rng),
        5 => toggle_ds(data, rng),
        6 => flip_ttl(data, rng),
        7 => {
            let cds = rec("example.", Rtype::CDS, 3600, &format!("1 13 2 {}", "CD".repeat(32)));
            if !data.remove(&cds) {
                data.insert(cds);
            }
        }
        _ => {
            let owner = format!("{}.{}", ["x", "y"][rng.below(2)], random_name(rng, false));
            data.insert(rec(&owner, Rtype::TXT, 300, "deep"));
        }
    }
    data.extend(apex_records());
    one_ttl_per_rrset(data);
}

/// A record of `data` that is not the apex's, at random.
fn pick(data: &BTreeSet<Rec>, rng: &mut Rng) -> Option<Rec> {
    let all: Vec<Rec> = data.iter().filter(|r| !apex_records().contains(r)).cloned().collect();
    (!all.is_empty()).then(|| all[rng.below(all.len())].clone())
}

/// An A or TXT record at a random name.
fn add_data(data: &mut BTreeSet<Rec>, rng: &mut Rng) {
    let owner = random_name(rng, false);
    let n = rng.below(250);
    let r = if rng.below(2) == 0 {
        rec(&owner, Rtype::A, 300, &format!("192.0.2.{n}"))
    } else {
        rec(&owner, Rtype::TXT, 300, &format!("t{n}"))
    };
    data.insert(r);
}

/// A delegation, out of zone or with its glue.
fn add_delegation(data: &mut BTreeSet<Rec>, rng: &mut Rng) {
    let owner = random_name(rng, true);
    if rng.below(2) == 0 {
        data.insert(rec(&owner, Rtype::NS, 3600, "ns.example.net."));
    } else {
        data.insert(rec(&owner, Rtype::NS, 3600, &format!("ns.{owner}")));
        data.insert(rec(&format!("ns.{owner}"), Rtype::A, 3600, "192.0.2.7"));
    }
}

/// A DS added at a random delegation that has none, or its DS removed.
fn toggle_ds(data: &mut BTreeSet<Rec>, rng: &mut Rng) {
    let cuts: Vec<Name> = data.iter().filter(|r| r.1 == Rtype::NS).map(|r| r.0.clone()).collect();
    let Some(cut) = (!cuts.is_empty()).then(|| cuts[rng.below(cuts.len())].clone()) else {
        return;
    };
    let digest = format!("{} 13 2 {}", rng.below(60000), "AB".repeat(32));
    let ds = rec(&cut.to_string(), Rtype::DS, 3600, &digest);
    let had: Vec<Rec> = data.iter().filter(|r| r.0 == cut && r.1 == Rtype::DS).cloned().collect();
    if had.is_empty() {
        data.insert(ds);
    } else {
        had.iter().for_each(|r| _ = data.remove(r));
    }
}

/// A random RRset's TTL changed between 300 and 600.
fn flip_ttl(data: &mut BTreeSet<Rec>, rng: &mut Rng) {
    let Some(r) = pick(data, rng) else { return };
    let ttl = if r.2 == 300 { 600 } else { 300 };
    let set: Vec<Rec> = data.iter().filter(|x| x.0 == r.0 && x.1 == r.1).cloned().collect();
    for x in set {
        data.remove(&x);
        data.insert((x.0, x.1, ttl, x.3));
    }
}

/// One TTL per RRset (the first record's), each RDATA once.
fn one_ttl_per_rrset(data: &mut BTreeSet<Rec>) {
    let mut ttls: std::collections::BTreeMap<(Name, Rtype), u32> = Default::default();
    let all = std::mem::take(data);
    for (owner, rtype, ttl, rdata) in all {
        let ttl = *ttls.entry((owner.clone(), rtype)).or_insert(ttl);
        data.insert((owner, rtype, ttl, rdata));
    }
}

/// True when `change` replaces the signature of the apex NS RRset, which no step changes:
/// only a whole signing does (with ECDSA, whose signatures differ each time).
fn resigns_apex_ns(change: &Changeset) -> bool {
    change.removed.iter().any(|r| {
        r.rtype == Rtype::RRSIG
            && r.owner == name("example.")
            && tern_zone::records::covered_type(&r.rdata) == Some(Rtype::NS)
    })
}

fn random_sequences(denial: DenialConfig, seed: u64, steps: usize) {
    let keys = keys(Algorithm::EcdsaP256Sha256, false);
    let options = SignOptions { denial, ..SignOptions::new(validity()) };
    let mut rng = Rng(seed);
    let mut data = apex_records();
    for _ in 0..6 {
        mutate(&mut data, &mut rng);
    }
    let mut signed = Signed::new(data, keys, options);
    for step in 0..steps {
        let mut new = signed.data.clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut new, &mut rng);
        }
        // Now and then the SOA's TTL moves the denial TTL: a whole signing.
        let soa =
            if rng.below(15) == 0 { (3600, 300 + 60 * rng.below(3) as u32) } else { signed.soa };
        let whole = soa != signed.soa;
        let change = signed.step(new, soa, &format!("seed {seed} step {step}"));
        assert_eq!(resigns_apex_ns(&change), whole, "seed {seed} step {step}");
    }
}

#[test]
fn random_nsec_changes_equal_a_whole_signing() {
    for seed in 1..=4 {
        random_sequences(DenialConfig::Nsec, seed, 40);
    }
}

#[test]
fn random_nsec3_changes_equal_a_whole_signing() {
    for seed in 11..=14 {
        random_sequences(denials()[1].clone(), seed, 40);
    }
}

#[test]
fn random_nsec3_opt_out_changes_equal_a_whole_signing() {
    for seed in 21..=24 {
        random_sequences(denials()[2].clone(), seed, 40);
    }
}

/// The RRSIG records of `records`, by the type they cover.
fn covered(records: &[RecordData]) -> Vec<Rtype> {
    let mut out: Vec<Rtype> = records
        .iter()
        .filter(|r| r.rtype == Rtype::RRSIG)
        .filter_map(|r| tern_zone::records::covered_type(&r.rdata))
        .collect();
    out.sort_by_key(|t| t.0);
    out
}

fn of_type(records: &[RecordData], rtype: Rtype) -> usize {
    records.iter().filter(|r| r.rtype == rtype).count()
}

fn start(denial: DenialConfig) -> Signed {
    let mut data = apex_records();
    for (owner, text) in [("a", "1"), ("c", "3"), ("e", "5"), ("x.y.g", "7")] {
        data.insert(rec(&format!("{owner}.example."), Rtype::TXT, 300, text));
    }
    let options = SignOptions { denial, ..SignOptions::new(validity()) };
    Signed::new(data, keys(Algorithm::Ed25519, false), options)
}

/// A record added to an RRset: its signature and the SOA's replaced, nothing else; a
/// new name: its own denial record and its predecessor's replaced too.
#[test]
fn a_change_signs_only_what_it_touches() {
    for (i, denial) in denials().into_iter().enumerate() {
        let nsec3 = i > 0;
        let mut signed = start(denial);
        let mut data = signed.data.clone();
        data.insert(rec("c.example.", Rtype::TXT, 300, "more"));
        let change = signed.step(data.clone(), signed.soa, "record added");
        assert_eq!(covered(&change.removed), [Rtype::SOA, Rtype::TXT]);
        assert_eq!(covered(&change.added), [Rtype::SOA, Rtype::TXT]);
        assert_eq!(change.added.len(), 3, "the record and two signatures");
        data.insert(rec("d.example.", Rtype::A, 300, "192.0.2.4"));
        let change = signed.step(data.clone(), signed.soa, "name added");
        let denial = if nsec3 { Rtype::NSEC3 } else { Rtype::NSEC };
        assert_eq!(of_type(&change.removed, denial), 1, "the predecessor's");
        assert_eq!(of_type(&change.added, denial), 2, "the new name's and the predecessor's");
        let mut expect = vec![Rtype::A, Rtype::SOA, denial, denial];
        expect.sort_by_key(|t| t.0);
        assert_eq!(covered(&change.added), expect);
        data.retain(|r| r.0 != name("d.example."));
        let change = signed.step(data, signed.soa, "name removed");
        assert_eq!(of_type(&change.removed, denial), 2);
        assert_eq!(of_type(&change.added, denial), 1);
    }
}

/// Hand-picked sequences: wildcards, empty non-terminals made and emptied, a delegation
/// cut above existing names (they become occluded, then authoritative again), DS added
/// and removed, an insecure delegation alone below an empty non-terminal (left out of an
/// opt-out chain), a name with data turned into an empty non-terminal above names the
/// change did not touch.
#[test]
fn hand_picked_sequences_equal_a_whole_signing() {
    let steps: &[(&str, &[&str], &[&str])] = &[
        ("wildcard", &["*.w.example. A 192.0.2.1"], &[]),
        ("deep name", &["a.b.c2.example. TXT deep"], &[]),
        ("names below a future cut", &["x.y.sub.example. TXT x", "z.sub.example. A 192.0.2.9"], &[]),
        ("cut above them", &["sub.example. NS ns.sub.example.", "ns.sub.example. A 192.0.2.2"], &[]),
        ("DS", &["sub.example. DS 1 13 2 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF"], &[]),
        ("DS gone", &[], &["sub.example. DS 1 13 2 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF"]),
        ("cut gone", &[], &["sub.example. NS ns.sub.example."]),
        ("insecure delegation below an ENT", &["i.ent.example. NS ns.example.net."], &[]),
        ("secure name beside it", &["s.ent.example. A 192.0.2.3", "ent.example. TXT own"], &[]),
        ("the ENT's own data gone", &[], &["ent.example. TXT own"]),
        ("secure name gone", &[], &["s.ent.example. A 192.0.2.3"]),
        ("deep name gone", &[], &["a.b.c2.example. TXT deep"]),
        ("wildcard gone", &[], &["*.w.example. A 192.0.2.1"]),
    ];
    for denial in denials() {
        let mut signed = start(denial.clone());
        let mut data = signed.data.clone();
        for (what, added, removed) in steps {
            let parse = |line: &&str| {
                let fields: Vec<&str> = line.splitn(3, ' ').collect();
                let rtype = Rtype::from_mnemonic(fields[1].as_bytes()).unwrap();
                rec(fields[0], rtype, 3600, fields[2])
            };
            removed.iter().map(parse).for_each(|r| assert!(data.remove(&r), "{what}"));
            data.extend(added.iter().map(parse));
            signed.step(data.clone(), signed.soa, &format!("{denial:?}: {what}"));
        }
    }
}

/// The apex DNSKEY RRset follows the keys and the published ones; DNSKEY records in an
/// unsigned change are left out; DNSSEC records in it are refused.
#[test]
fn dnskeys_follow_the_keys_and_the_published() {
    let mut signed = start(DenialConfig::Nsec);
    let spare = SigningKey::generate(Algorithm::Ed25519, KeyRole::Zsk).unwrap();
    signed.options.published = vec![spare.dnskey().to_vec()];
    let change = signed.step(signed.data.clone(), signed.soa, "a key published");
    assert_eq!(of_type(&change.added, Rtype::DNSKEY), 1);
    assert_eq!(covered(&change.added), [Rtype::SOA, Rtype::DNSKEY]);
    let apex = signed.zone.apex().unwrap();
    assert_eq!(apex.rrset(Rtype::DNSKEY).unwrap().count, 3);
    signed.options.dnskey_ttl = Some(60);
    let change = signed.step(signed.data.clone(), signed.soa, "the DNSKEY TTL");
    assert_eq!(
        (of_type(&change.removed, Rtype::DNSKEY), of_type(&change.added, Rtype::DNSKEY)),
        (3, 3)
    );

    let mut change =
        unsigned_change(&signed.with_soa(&signed.data, 7), &signed.with_soa(&signed.data, 8));
    change.added.push(record(&rec(
        "example.",
        Rtype::DNSKEY,
        60,
        &format!("256 3 15 {}", "AAAA".repeat(11)),
    )));
    let out = sign_change(
        &signed.zone,
        &{
            let mut c = change.clone();
            c.soa_from = None;
            c.soa_to = None;
            c
        },
        &signed.keys,
        &signed.options,
    )
    .unwrap();
    assert_eq!(of_type(&out.added, Rtype::DNSKEY), 0, "left out");
    change.added.push(record(&rec("a.example.", Rtype::NSEC, 300, "c.example. TXT")));
    assert!(matches!(
        sign_change(&signed.zone, &change, &signed.keys, &signed.options),
        Err(crate::Error::Change(_))
    ));
}

fn text_of(r: &RecordData) -> String {
    let mut text = tern_wire::rdata::to_text(r.rtype, &r.rdata);
    if r.rtype == Rtype::RRSIG {
        text = text.rsplit_once(' ').unwrap().0.to_string();
    }
    format!("{} {} {} {text}", r.owner.to_string().to_lowercase(), r.ttl, r.rtype)
}

/// From NSEC3 to other NSEC3 parameters, to NSEC, and to NSEC3 again: whole signings,
/// as changes. (The zone crate does not apply the last: its NSEC3 records need a zone
/// already NSEC3-signed. The records are compared instead.)
#[test]
fn a_change_of_denial_signs_the_whole_zone() {
    let mut signed = start(denials()[1].clone());
    let salted =
        DenialConfig::Nsec3(Nsec3Config { iterations: 0, salt: vec![0xCD, 0xEF], opt_out: false });
    for denial in [denials()[2].clone(), salted, DenialConfig::Nsec] {
        signed.options.denial = denial.clone();
        signed.step(signed.data.clone(), signed.soa, &format!("to {denial:?}"));
    }
    signed.options.denial = denials()[1].clone();
    let old = signed.with_soa(&signed.data, signed.serial);
    let new = signed.with_soa(&signed.data, signed.serial + 1);
    let change =
        sign_change(&signed.zone, &unsigned_change(&old, &new), &signed.keys, &signed.options)
            .unwrap();
    let mut records = records_of(&signed.zone);
    for gone in change.all_removed().map(text_of) {
        let at = records.iter().position(|r| *r == gone).unwrap();
        records.remove(at);
    }
    records.extend(change.all_added().map(text_of));
    records.sort();
    let whole =
        sign_zone(&build(&new), &signed.keys, &signed.options).unwrap().to_contents().unwrap();
    assert_eq!(records, records_of(&whole));
}

/// CDS and CDNSKEY follow the options (RFC 7344 §4, RFC 8078 §4): the keys' (a CDS of
/// SHA-256 each), the delete form, none; signed by the key-signing keys, as whole
/// signing makes them; the zone's own left out of an unsigned change.
#[test]
fn cds_and_cdnskey_follow_the_options() {
    for denial in denials() {
        let mut signed = start(denial.clone());
        let ksk = signed.keys.iter().find(|k| k.role() == KeyRole::Ksk).unwrap();
        let (ksk_dnskey, ksk_ds) =
            (ksk.dnskey().to_vec(), ksk.ds(&name("example."), crate::DigestType::Sha256).unwrap());
        signed.options.cds = Some(CdsRecords::Keys(vec![ksk_dnskey.clone()]));
        let change =
            signed.step(signed.data.clone(), signed.soa, &format!("{denial:?}: CDS of the KSK"));
        let added = |rtype| {
            change
                .added
                .iter()
                .filter(|r| r.rtype == rtype)
                .map(|r| r.rdata.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            added(Rtype::CDS),
            std::slice::from_ref(&ksk_ds),
            "the DS the parent should have"
        );
        assert_eq!(added(Rtype::CDNSKEY), std::slice::from_ref(&ksk_dnskey));
        assert!(covered(&change.added).contains(&Rtype::CDS), "signed");
        signed.options.cds = Some(CdsRecords::Delete);
        let change = signed.step(signed.data.clone(), signed.soa, &format!("{denial:?}: delete"));
        assert_eq!(of_type(&change.added, Rtype::CDS), 1);
        let apex = signed.zone.apex().unwrap();
        let cds: Vec<Vec<u8>> =
            apex.rrset(Rtype::CDS).unwrap().rdatas().map(<[u8]>::to_vec).collect();
        assert_eq!(cds, [crate::policy::CDS_DELETE.to_vec()]);
        signed.options.cds = Some(CdsRecords::Absent);
        let change = signed.step(signed.data.clone(), signed.soa, &format!("{denial:?}: none"));
        assert_eq!(
            (of_type(&change.removed, Rtype::CDS), of_type(&change.removed, Rtype::CDNSKEY)),
            (1, 1)
        );
        let apex = signed.zone.apex().unwrap();
        assert!(apex.rrset(Rtype::CDS).is_none() && apex.rrset(Rtype::CDNSKEY).is_none());
    }
    // The signer's CDS replaces what an unsigned change brings.
    let mut signed = start(DenialConfig::Nsec);
    signed.options.cds = Some(CdsRecords::Absent);
    let mut data = signed.data.clone();
    data.insert(rec("example.", Rtype::CDS, 300, "0 0 0 00"));
    signed.step(data, signed.soa, "a CDS in the data, left out");
    assert!(signed.zone.apex().unwrap().rrset(Rtype::CDS).is_none());
}

/// A withheld key (an algorithm rollover's new key, RFC 6781 §4.1.4) signs every RRset
/// while its DNSKEY stays out of the DNSKEY RRset (whole signing here; adding a key's
/// signatures to a signed zone is `refresh`'s work); published, its DNSKEY comes in by
/// a change.
#[test]
fn a_withheld_key_signs_without_its_dnskey() {
    let old = start(DenialConfig::Nsec);
    let mut keys = keys(Algorithm::Ed25519, false);
    let new = SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Csk).unwrap();
    let new_dnskey = new.dnskey().to_vec();
    keys.push(new);
    let mut options = old.options.clone();
    options.withheld = vec![new_dnskey.clone()];
    let mut signed = Signed::new(old.data.clone(), keys, options);
    let mut rrsets = 0;
    for id in 0..signed.zone.node_count() as u32 {
        let Some(node) = signed.zone.node(id) else { continue };
        for rrset in node.rrsets().filter(|r| r.rtype != Rtype::RRSIG && r.sig_count > 0) {
            let ecdsa = Algorithm::EcdsaP256Sha256.number();
            let by_new = rrset.sigs().filter(|sig| sig.get(2) == Some(&ecdsa)).count();
            assert_eq!(by_new, 1, "{} {} signed by the new algorithm", node.owner(), rrset.rtype);
            rrsets += 1;
        }
    }
    assert!(rrsets > 5);
    let dnskey = signed.zone.apex().unwrap().rrset(Rtype::DNSKEY).unwrap();
    assert!(!dnskey.rdatas().any(|rd| rd == new_dnskey.as_slice()), "withheld");
    assert_eq!(dnskey.count, 2);
    signed.options.withheld.clear();
    let change = signed.step(signed.data.clone(), signed.soa, "published");
    assert_eq!(of_type(&change.added, Rtype::DNSKEY), 1, "its DNSKEY comes in");
    assert_eq!(signed.zone.apex().unwrap().rrset(Rtype::DNSKEY).unwrap().count, 3);
}
