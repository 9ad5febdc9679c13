//! Changesets on signed zones. A small signer ([`sign`]) turns a set of records into the
//! zone a DNSSEC signer publishes: RRSIGs (filler signatures that change with their
//! RRset) and an NSEC chain (RFC 4034 §4, RFC 4035 §2.3) or an NSEC3 chain (RFC 5155
//! §7.1, with or without opt-out). Random sequences of changes (names added and removed,
//! delegations with glue and occluded names below them, empty non-terminals, wildcards)
//! are applied as the difference between two signed versions, as IXFR carries it; the
//! zone kept up to date by `apply` must answer every lookup and denial question as a
//! zone built from scratch from the same records does. A one-name change must copy a
//! few chunks of the zone, not all of them.

use std::collections::{BTreeMap, BTreeSet};

use tern_wire::{rdata, Name, Rtype};

use crate::changeset::{Changeset, RecordData};
use crate::contents::{Denial, Lookup, ZoneContents};
use crate::hash::SuffixHashes;
use crate::node::{Flags, NodeId, NSEC3_COVERS};
use crate::nsec3::{Nsec3Params, Nsec3Position};
use crate::testutil::Rng;
use crate::ZoneBuilder;

/// A record: owner (lower case), type, RDATA.
type Rec = (Name, Rtype, Vec<u8>);
type Records = BTreeSet<Rec>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signing {
    Nsec,
    Nsec3 { opt_out: bool },
}

fn name(s: &str) -> Name {
    s.to_lowercase().parse().unwrap()
}

fn rec(owner: &str, rtype: Rtype, text: &str) -> Rec {
    let rdata = rdata::parse_str(rtype, text, Some(&name("example."))).unwrap();
    (name(owner), rtype, rdata)
}

fn params() -> Nsec3Params {
    Nsec3Params { algorithm: 1, flags: 0, iterations: 2, salt: vec![0xAB, 0xCD] }
}

/// The apex records of every version.
fn apex(signing: Signing, serial: u32) -> Records {
    let mut out: Records = [
        rec("example.", Rtype::SOA, &format!("ns1 hostmaster {serial} 7200 3600 1209600 300")),
        rec("example.", Rtype::NS, "ns1"),
        rec("ns1.example.", Rtype::A, "192.0.2.53"),
        rec("example.", Rtype::DNSKEY, &format!("257 3 13 {}", "AAAA".repeat(22))),
    ]
    .into();
    if signing != Signing::Nsec {
        out.insert(rec("example.", Rtype::NSEC3PARAM, "1 0 2 abcd"));
    }
    out
}

/// The zone a signer publishes for `data` at `serial`.
fn sign(data: &Records, signing: Signing, serial: u32) -> Records {
    let mut all = data.clone();
    all.extend(apex(signing, serial));
    let zone = Shape::of(&all);
    match signing {
        Signing::Nsec => nsec_chain(&zone, &mut all),
        Signing::Nsec3 { opt_out } => nsec3_chain(&zone, opt_out, &mut all),
    }
    let mut rrsets: BTreeMap<(Name, Rtype), Vec<Vec<u8>>> = BTreeMap::new();
    for (owner, rtype, rd) in &all {
        rrsets.entry((owner.clone(), *rtype)).or_default().push(rd.clone());
    }
    for ((owner, rtype), rdatas) in rrsets {
        // RFC 4035 §2.2: NS at a delegation, and glue, are not signed.
        let delegation_ns = rtype == Rtype::NS && zone.cuts.contains(&owner);
        if zone.authoritative(&owner) && !delegation_ns {
            all.insert(rrsig(&owner, rtype, &rdatas));
        }
    }
    all
}

/// What a signer needs to know about a zone's names.
struct Shape {
    /// Types at each owner with data.
    types: BTreeMap<Name, BTreeSet<Rtype>>,
    /// Delegation points.
    cuts: BTreeSet<Name>,
    /// Empty non-terminals.
    empty: BTreeSet<Name>,
}

impl Shape {
    fn of(records: &Records) -> Shape {
        let apex = name("example.");
        let mut types: BTreeMap<Name, BTreeSet<Rtype>> = BTreeMap::new();
        for (owner, rtype, _) in records {
            types.entry(owner.clone()).or_default().insert(*rtype);
        }
        let cuts = types
            .iter()
            .filter(|(o, t)| **o != apex && t.contains(&Rtype::NS))
            .map(|(o, _)| o.clone())
            .collect();
        let mut empty = BTreeSet::new();
        for owner in types.keys() {
            let mut up = owner.parent();
            while let Some(p) = up.filter(|p| p.is_below(&apex)) {
                if !types.contains_key(&p.to_name()) {
                    empty.insert(p.to_name());
                }
                up = p.parent();
            }
        }
        Shape { types, cuts, empty }
    }

    /// Not strictly below a delegation point.
    fn authoritative(&self, owner: &Name) -> bool {
        !self.cuts.iter().any(|c| owner.is_below(c))
    }
}

/// An RRSIG (RFC 4034 §3.1) of `covered` whose signature bytes follow from the RRset.
fn rrsig(owner: &Name, covered: Rtype, rdatas: &[Vec<u8>]) -> Rec {
    let mut rd = covered.0.to_be_bytes().to_vec();
    rd.extend_from_slice(&[13, owner.label_count() as u8]);
    for n in [300u32, 2_000_000_000, 1_700_000_000] {
        rd.extend_from_slice(&n.to_be_bytes());
    }
    rd.extend_from_slice(&4242u16.to_be_bytes());
    rd.extend_from_slice(name("example.").as_wire());
    let mut x = 0xCBF2_9CE4_8422_2325u64;
    for b in owner.as_wire().iter().chain(rdatas.iter().flatten()) {
        x = (x ^ u64::from(*b)).wrapping_mul(0x100_0000_01B3);
    }
    for _ in 0..4 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rd.extend_from_slice(&x.to_be_bytes());
    }
    (owner.clone(), Rtype::RRSIG, rd)
}

/// A type bitmap (RFC 4034 §4.1.2) of types below 256.
fn bitmap(types: &BTreeSet<Rtype>) -> Vec<u8> {
    let mut bits = [0u8; 32];
    for t in types {
        bits[usize::from(t.0 / 8)] |= 0x80 >> (t.0 % 8);
    }
    let len = bits.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if len == 0 {
        return Vec::new();
    }
    [&[0, len as u8][..], &bits[..len]].concat()
}

/// NSEC at every authoritative name with data, each naming the next (RFC 4035 §2.3).
fn nsec_chain(zone: &Shape, out: &mut Records) {
    let names: Vec<&Name> = zone.types.keys().filter(|o| zone.authoritative(o)).collect();
    for (i, owner) in names.iter().enumerate() {
        let next = names[(i + 1) % names.len()];
        let mut types = zone.types[*owner].clone();
        types.extend([Rtype::NSEC, Rtype::RRSIG]);
        let rd = [next.as_wire(), &bitmap(&types)].concat();
        out.insert(((*owner).clone(), Rtype::NSEC, rd));
    }
}

/// NSEC3 at the hash of every authoritative name, empty non-terminals included; with
/// opt-out, not at delegations without DS (RFC 5155 §7.1).
fn nsec3_chain(zone: &Shape, opt_out: bool, out: &mut Records) {
    let p = params();
    let insecure = |o: &Name| zone.cuts.contains(o) && !zone.types[o].contains(&Rtype::DS);
    let names = zone.types.keys().chain(&zone.empty).filter(|o| zone.authoritative(o));
    let mut hashed: BTreeMap<[u8; 20], BTreeSet<Rtype>> = names
        .filter(|o| !(opt_out && insecure(o)))
        .map(|o| (p.hash(o), zone.types.get(o).cloned().unwrap_or_default()))
        .collect();
    for types in hashed.values_mut() {
        if types.iter().any(|&t| t != Rtype::NS) || types.contains(&Rtype::DS) {
            types.insert(Rtype::RRSIG);
        }
    }
    let hashes: Vec<[u8; 20]> = hashed.keys().copied().collect();
    for (i, hash) in hashes.iter().enumerate() {
        let next = hashes[(i + 1) % hashes.len()];
        let mut rd = vec![1, u8::from(opt_out), 0, 2, 2, 0xAB, 0xCD, 20];
        rd.extend_from_slice(&next);
        rd.extend_from_slice(&bitmap(&hashed[hash]));
        out.insert((name(&format!("{}.example.", base32hex(hash))), Rtype::NSEC3, rd));
    }
}

/// Base32hex without padding (RFC 4648 §7), lower case.
fn base32hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let (mut out, mut acc, mut bits) = (String::new(), 0u32, 0);
    for &b in bytes {
        acc = acc << 8 | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(DIGITS[(acc >> bits & 31) as usize] as char);
        }
    }
    out
}

fn build(records: &Records) -> Option<ZoneContents> {
    let mut b = ZoneBuilder::new(&name("example."));
    for (owner, rtype, rd) in records {
        b.add(owner, *rtype, 300, rd);
    }
    b.finish().ok().map(|(z, _)| z)
}

/// The changeset from one signed version to the next.
fn diff(old: &Records, new: &Records) -> Changeset {
    let record = |(owner, rtype, rd): &Rec| RecordData {
        owner: owner.clone(),
        rtype: *rtype,
        ttl: 300,
        rdata: rd.clone(),
    };
    Changeset {
        removed: old.difference(new).map(record).collect(),
        added: new.difference(old).map(record).collect(),
        ..Changeset::default()
    }
}

const OWNERS: &[&str] = &[
    "a.example.",
    "b.example.",
    "x.a.example.",
    "y.x.a.example.",
    "*.a.example.",
    "c.b.example.",
    "d.example.",
    "ns.d.example.",
    "deep.ns.d.example.",
    "e.f.g.example.",
    "m.e.f.g.example.",
    "h.example.",
    "*.example.",
    "z.example.",
];

/// Names looked up in the comparison: the owners, their empty non-terminals, and names
/// that do not exist around and below them.
const PROBES: &[&str] = &[
    "example.",
    "f.g.example.",
    "g.example.",
    "q.example.",
    "0.example.",
    "a0.example.",
    "zz.example.",
    "q.c.b.example.",
    "q.y.x.a.example.",
    "w.a.example.",
    "q.e.f.g.example.",
    "q.ns.d.example.",
    "ns1.example.",
];

fn random_record(rng: &mut Rng) -> Rec {
    let owner = *rng.pick(OWNERS);
    let cut = *rng.pick::<&str>(&["d.example.", "b.example."]);
    let digest = "2BB183AF5F22588179A53B0A98631FAD1A292118BAF1B9C0D1BA2EC9CBE5F7C5";
    match rng.next() % 8 {
        0 => rec(owner, Rtype::TXT, rng.pick::<&str>(&["\"1\"", "\"2\""])),
        1 => rec(cut, Rtype::NS, rng.pick::<&str>(&["ns.d.example.", "ns.other."])),
        2 => rec(cut, Rtype::DS, &format!("{} 13 2 {digest}", rng.pick(&[1, 2]))),
        3 => rec(owner, Rtype::MX, rng.pick::<&str>(&["10 h.example.", "20 x.a.example."])),
        _ => rec(owner, Rtype::A, rng.pick::<&str>(&["192.0.2.1", "192.0.2.2", "192.0.2.3"])),
    }
}

/// Adds or removes one to three records.
fn mutate(data: &Records, rng: &mut Rng) -> Records {
    let mut next = data.clone();
    for _ in 0..1 + rng.next() % 3 {
        if rng.next() % 2 == 0 || next.is_empty() {
            next.insert(random_record(rng));
        } else {
            let victim = next.iter().nth((rng.next() % next.len() as u64) as usize).cloned();
            next.remove(&victim.unwrap());
        }
    }
    next
}

fn owner_of(z: &ZoneContents, id: NodeId) -> String {
    z.node(id).map_or("-".into(), |n| n.owner().to_string().to_lowercase())
}

fn chain_owner(z: &ZoneContents, position: Option<Nsec3Position>) -> String {
    let (kind, id) = match position {
        Some(Nsec3Position::Match(id)) => ("match", id),
        Some(Nsec3Position::Covered(id)) => ("covered by", id),
        None => return "no NSEC3".into(),
    };
    let node = z.nsec3().and_then(|c| c.node(id));
    format!("{kind} {}", node.map_or("-".into(), |n| n.owner().to_string().to_lowercase()))
}

/// What a query sees at name `n`: the lookup, the node's facts, and the denial records
/// the engine would take (NSEC: the predecessor and the NSEC walked back to; NSEC3: the
/// record matching or covering the name, and that trusted links agree with the chain).
fn view(z: &ZoneContents, n: &str) -> String {
    let q = name(n);
    let (id, mut out) = match z.lookup(&q, &SuffixHashes::of(&q)) {
        Lookup::Found(id) => (Some(id), format!("found {}", facts(z, id))),
        Lookup::NotFound { encloser, .. } => {
            (None, format!("missing, encloser {}", facts(z, encloser)))
        }
    };
    match z.denial() {
        Denial::Nsec => {
            let pred = z.predecessor(&q);
            let nsec = pred.and_then(|p| z.nsec_node_at_or_before(p));
            let walk = |id: Option<NodeId>| id.map_or("-".into(), |id| owner_of(z, id));
            out += &format!(" pred={} nsec={}", walk(pred), walk(nsec));
        }
        Denial::Nsec3 => {
            let chain = z.nsec3().unwrap();
            out += &format!(" hash {}", chain_owner(z, chain.find(&chain.params.hash(&q))));
            if let Some(id) = id {
                assert_links_agree(z, id);
            }
        }
        Denial::Unsigned => {}
    }
    out
}

fn facts(z: &ZoneContents, id: NodeId) -> String {
    let node = z.node(id).unwrap();
    let mask = Flags::APEX | Flags::DELEGATION | Flags::NONAUTH | Flags::EMPTY | Flags::NSEC;
    let flags = Flags::from_bits(node.flags.bits() & mask.bits());
    let cut = z.cut_above(id).map(|c| owner_of(z, c));
    let prev = if z.denial() == Denial::Nsec { owner_of(z, node.prev) } else { String::new() };
    format!(
        "{} {flags:?} wild={} cut={cut:?} prev={prev}",
        node.owner(),
        owner_of(z, node.wildcard)
    )
}

/// The links a node keeps to the NSEC3 chain, where the engine trusts them, say what
/// hashing its name and searching the chain says (RFC 5155 §7.2).
fn assert_links_agree(z: &ZoneContents, id: NodeId) {
    let (Some(chain), Some(node)) = (z.nsec3(), z.node(id)) else { return };
    let truth = chain.find(&chain.params.hash(node.owner()));
    let link = node.nsec3;
    if link != u32::MAX && link & NSEC3_COVERS == 0 && chain.prepared(link).is_some() {
        assert_eq!(truth, Some(Nsec3Position::Match(link)), "{}", node.owner());
    }
    if let Some(cover) = z.nsec3_cover(id) {
        assert_eq!(truth, Some(Nsec3Position::Covered(cover)), "{}", node.owner());
    }
}

/// The canonical order holds every name of the zone, sorted, and each one's `prev` is
/// the one before it (the apex's the last).
fn assert_order_consistent(z: &ZoneContents) {
    let order: Vec<NodeId> = z.order.as_ref().unwrap().iter().collect();
    let mut names: Vec<(Name, NodeId)> = (0..z.node_count() as NodeId)
        .filter(|&id| !z.node(id).unwrap().flags.contains(Flags::PHANTOM))
        .map(|id| (z.node(id).unwrap().owner().to_name(), id))
        .collect();
    names.sort();
    assert_eq!(order, names.iter().map(|n| n.1).collect::<Vec<_>>());
    for (i, &id) in order.iter().enumerate() {
        let prev = order[(i + order.len() - 1) % order.len()];
        assert_eq!(z.node(id).unwrap().prev, prev, "prev of {}", owner_of(z, id));
    }
}

fn records_of(z: &ZoneContents) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    z.for_each_record(|o, t, ttl, rd| {
        out.insert(format!("{} {ttl} {t} {}", o.to_string().to_lowercase(), rdata::to_text(t, rd)));
    });
    out
}

/// The zone `apply` made answers as the zone built from scratch does.
fn assert_same(applied: &ZoneContents, rebuilt: &ZoneContents, context: &str) {
    assert_eq!(records_of(applied), records_of(rebuilt), "{context}");
    crate::changeset_tests::assert_ids_sound(applied);
    assert_eq!((applied.denial(), applied.serial()), (rebuilt.denial(), rebuilt.serial()));
    for n in OWNERS.iter().chain(PROBES) {
        assert_eq!(view(applied, n), view(rebuilt, n), "{context}: {n}");
    }
    match applied.denial() {
        Denial::Nsec => {
            assert_order_consistent(applied);
            assert_order_consistent(rebuilt);
        }
        Denial::Nsec3 => {
            let (a, r) = (applied.nsec3().unwrap(), rebuilt.nsec3().unwrap());
            let owners = |c: &crate::Nsec3Chain| {
                c.nodes().map(|n| n.owner().to_string().to_lowercase()).collect::<Vec<_>>()
            };
            assert_eq!(owners(a), owners(r), "{context}: chain in hash order");
            assert_eq!(a.len(), r.len());
            let wildcard = |z: &ZoneContents| z.apex_wildcard_nsec3().map(Nsec3Position::Covered);
            assert!(wildcard(applied).is_some());
            assert_eq!(
                chain_owner(applied, wildcard(applied)),
                chain_owner(rebuilt, wildcard(rebuilt))
            );
        }
        Denial::Unsigned => panic!("{context}: the zone lost its signatures"),
    }
}

/// Applies `change` to `zone`: to a copy at even steps (`apply`), to the zone itself at
/// odd ones (`apply_in_place`, on chunks the previous step left it owning).
fn apply(zone: &mut ZoneContents, change: &Changeset, step: u32) -> Result<(), crate::Error> {
    if step % 2 == 0 {
        *zone = zone.apply(change)?.0;
    } else {
        zone.apply_in_place(change)?;
    }
    Ok(())
}

/// Random sequences of changes on signed zones: after each, the zone `apply` keeps equals
/// the zone built from the same records.
fn random_sequences(signing: Signing, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let mut compared = 0;
    for round in 0..40 {
        let mut data = (0..8).map(|_| random_record(&mut rng)).collect::<Records>();
        let mut signed = sign(&data, signing, 1);
        let Some(mut zone) = build(&signed) else { continue };
        for step in 2..14u32 {
            let next = mutate(&data, &mut rng);
            let next_signed = sign(&next, signing, step);
            let Some(rebuilt) = build(&next_signed) else { continue };
            let change = diff(&signed, &next_signed);
            let context = format!("{signing:?} round {round} step {step}: {change:?}");
            apply(&mut zone, &change, step).unwrap_or_else(|e| panic!("{context}: {e}"));
            assert_same(&zone, &rebuilt, &context);
            (data, signed) = (next, next_signed);
            compared += 1;
        }
    }
    compared
}

#[test]
fn nsec_zone_changes_equal_a_rebuild() {
    assert!(random_sequences(Signing::Nsec, 0x9E37_79B9_7F4A_7C15) > 300);
}

#[test]
fn nsec3_zone_changes_equal_a_rebuild() {
    assert!(random_sequences(Signing::Nsec3 { opt_out: false }, 0x2545_F491_4F6C_DD1D) > 300);
}

#[test]
fn nsec3_opt_out_zone_changes_equal_a_rebuild() {
    assert!(random_sequences(Signing::Nsec3 { opt_out: true }, 0xD1B5_4A32_D192_ED03) > 300);
}

/// A change of one name in a signed zone of 20,000 names copies the chunks the change
/// reaches (the apex's, the predecessor's, the new node's), not the zone.
#[test]
fn a_one_name_change_copies_a_few_chunks_of_a_signed_zone() {
    let data: Records =
        (0..20_000).map(|i| rec(&format!("h{i}.example."), Rtype::A, "192.0.2.1")).collect();
    for signing in [Signing::Nsec, Signing::Nsec3 { opt_out: false }] {
        let old = sign(&data, signing, 1);
        let zone = build(&old).unwrap();
        let mut more = data.clone();
        more.insert(rec("h77x.example.", Rtype::A, "192.0.2.9"));
        let new = sign(&more, signing, 2);
        let (applied, _) = zone.apply(&diff(&old, &new)).unwrap();
        assert_same(&applied, &build(&new).unwrap(), &format!("{signing:?}"));
        let chunks = zone.nodes.len().div_ceil(crate::cow::ChunkVec::<crate::node::Node>::CHUNK);
        let shared = applied.nodes.shared_chunks(&zone.nodes);
        assert!(shared + 3 >= chunks, "{signing:?}: {shared} of {chunks} node chunks shared");
        if let (Some(a), Some(b)) = (&applied.order, &zone.order) {
            assert!(a.shared_runs(b) + 2 >= b.runs(), "{} of {} runs", a.shared_runs(b), b.runs());
        }
        if let (Some(a), Some(b)) = (applied.nsec3(), zone.nsec3()) {
            let (shared, groups) = a.shared_order_groups(b);
            assert!(shared + 2 >= groups, "{shared} of {groups} hash groups shared");
        }
    }
}

/// A batch of changes to a zone of a few thousand names, `step` choosing its kind: a
/// burst of names that sort together (splitting runs of the canonical order), the
/// removal of that burst and a third of the rest (joining them), or a mix of names with
/// empty non-terminals above them, delegations with and without DS, and removals.
fn batch(data: &Records, step: u32, rng: &mut Rng) -> Records {
    let mut next = data.clone();
    let digest = "2BB183AF5F22588179A53B0A98631FAD1A292118BAF1B9C0D1BA2EC9CBE5F7C5";
    match step % 3 {
        0 => {
            for _ in 0..2500 {
                let owner = format!("b{}.example.", rng.next() % 1_000_000);
                next.insert(rec(&owner, Rtype::A, "192.0.2.7"));
            }
        }
        1 => next.retain(|(owner, ..)| {
            let burst = owner.to_string().starts_with('b');
            !burst && rng.next() % 3 != 0
        }),
        _ => {
            for _ in 0..300 {
                let k = rng.next() % 5000;
                let (owner, kind) = (format!("y.q{k}.example."), rng.next() % 4);
                next.insert(rec(&owner, Rtype::A, "192.0.2.8"));
                let cut = format!("d{k}.example.");
                match kind {
                    0 => drop(next.insert(rec(&cut, Rtype::NS, "ns.other."))),
                    1 => drop(next.insert(rec(&cut, Rtype::DS, &format!("1 13 2 {digest}")))),
                    _ => {}
                }
            }
            let victims: Vec<Rec> = next.iter().filter(|_| rng.next() % 20 == 0).cloned().collect();
            for victim in victims {
                next.remove(&victim);
            }
        }
    }
    next
}

/// The comparison of [`assert_same`] for a large zone: records, the whole canonical
/// order or NSEC3 chain, and the view of every name with data and of as many names
/// that do not exist.
fn assert_large_same(applied: &ZoneContents, rebuilt: &ZoneContents, data: &Records, step: u32) {
    let context = format!("step {step}");
    assert_eq!(records_of(applied), records_of(rebuilt), "{context}");
    assert_eq!(applied.denial(), rebuilt.denial(), "{context}");
    if applied.denial() == Denial::Nsec {
        assert_order_consistent(applied);
    } else {
        let (a, r) = (applied.nsec3().unwrap(), rebuilt.nsec3().unwrap());
        assert!(a.nodes().map(|n| n.owner()).eq(r.nodes().map(|n| n.owner())), "{context}");
    }
    let owners: BTreeSet<String> = data.iter().map(|(o, ..)| o.to_string()).collect();
    for owner in &owners {
        let missing = format!("zz.{owner}");
        for n in [owner.as_str(), missing.as_str()] {
            assert_eq!(view(applied, n), view(rebuilt, n), "{context}: {n}");
        }
    }
}

/// Batches of thousands of records on zones of thousands of names, signed each way:
/// the canonical order's runs split and join, the NSEC3 order's groups take many
/// additions and removals at once, and the zone `apply` keeps equals a rebuild.
fn large_batches(signing: Signing, seed: u64) {
    let mut rng = Rng(seed);
    let mut data: Records =
        (0..3000).map(|i| rec(&format!("n{i}.example."), Rtype::A, "192.0.2.1")).collect();
    let mut signed = sign(&data, signing, 1);
    let mut zone = build(&signed).unwrap();
    for step in 2..9u32 {
        let next = batch(&data, step, &mut rng);
        let next_signed = sign(&next, signing, step);
        let rebuilt = build(&next_signed).unwrap();
        apply(&mut zone, &diff(&signed, &next_signed), step).unwrap();
        assert_large_same(&zone, &rebuilt, &next, step);
        (data, signed) = (next, next_signed);
    }
}

#[test]
fn large_nsec_batches_equal_a_rebuild() {
    large_batches(Signing::Nsec, 0x6A09_E667_F3BC_C908);
}

#[test]
fn large_nsec3_batches_equal_a_rebuild() {
    large_batches(Signing::Nsec3 { opt_out: false }, 0xBB67_AE85_84CA_A73B);
}

#[test]
fn large_nsec3_opt_out_batches_equal_a_rebuild() {
    large_batches(Signing::Nsec3 { opt_out: true }, 0x3C6E_F372_FE94_F82B);
}

/// In an opt-out zone the insecure delegations have no NSEC3 record of their own, and
/// each keeps a link to the record covering its hash. A one-name change shortens one
/// record's span: only the links to that record stop being trusted (RFC 5155 §7.2.4
/// proofs for the others still need no hashing at query time).
#[test]
fn a_one_name_change_keeps_other_covering_links() {
    let mut data: Records =
        (0..1000).map(|i| rec(&format!("h{i}.example."), Rtype::A, "192.0.2.1")).collect();
    data.extend((0..2000).map(|i| rec(&format!("d{i}.example."), Rtype::NS, "ns.other.")));
    let signing = Signing::Nsec3 { opt_out: true };
    let old = sign(&data, signing, 1);
    let zone = build(&old).unwrap();
    let covered = |z: &ZoneContents| {
        (0..z.node_count() as NodeId).filter(|&id| z.nsec3_cover(id).is_some()).count()
    };
    assert_eq!(covered(&zone), 2000, "every insecure delegation links its cover");
    data.insert(rec("h77x.example.", Rtype::A, "192.0.2.9"));
    let new = sign(&data, signing, 2);
    let (applied, _) = zone.apply(&diff(&old, &new)).unwrap();
    assert_same(&applied, &build(&new).unwrap(), "opt-out");
    let kept = covered(&applied);
    assert!((1980..=2000).contains(&kept), "{kept} of 2000 covering links still trusted");
}
