//! Encoding nodes while records still arrive, so that `finish` has less left to do.
//!
//! A secondary reading a transfer waits for the primary most of the time; what it does
//! after the last message delays serving. So every [`Ahead::BATCH`] records, the
//! records whose owner is already looked up (those before a space's deferred owner) are
//! taken in order: each in-zone target that already has a node gets it (an id never
//! changes, so `finish` would find the same one), and each run of records of one
//! main-space owner is encoded into its node's blob, as `finish` would, its own flags
//! and checks read from the blob while it is fresh (the `table` module).
//!
//! The blob is only a guess that the owner's records are all there: AXFR servers send
//! an owner's records together, but nothing requires it. A node is given up — left to
//! `finish`, which groups every record — when more records of it come later, when a
//! target is still unknown, or when encoding it has something to report (a duplicate,
//! TTLs that differ, an oversized RRset), so that findings come in `finish`'s order.
//! Targets left unknown are resolved by `finish`, in record order, where phantom nodes
//! are created exactly as they would have been. NSEC3-space records are left to
//! `finish`. The zone built is thus the same, byte for byte, as without encoding ahead.
//!
//! Once a batch is encoded, its records whose node is encoded are dropped from the
//! builder ([`ZoneBuilder::compact`]): their blob holds them. The builder's records and
//! RDATA then stay about a batch long, in two buffers used in turn, instead of growing
//! with the zone. A node given up after its records were dropped gets them back from
//! its blob (each RRset's records in order, then its signatures: what `finish` needs to
//! encode it as it would have). Only a builder whose records have no file and line
//! compacts: a record's number, which finds its line, changes.

use std::ops::Range;

use tern_wire::Rtype;

use super::encode::Encoder;
use super::space::Owners;
use super::table::{Facts, Targets};
use super::unique::rdata_of;
use super::{Pending, ZoneBuilder, NSEC3_SPACE};
use crate::blob::Blob;
use crate::node::{has_targets, Node, NodeId, NO_NODE};
use crate::report::Report;

/// Set in the record count of a node encoded ahead once its records are dropped.
const DROPPED: u32 = 1 << 31;

/// A main-space node's state ahead of `finish`.
#[derive(Debug, Default)]
pub(super) enum Early {
    /// No records of it seen yet.
    #[default]
    Unseen,
    /// Encoded from all of its records so far (how many records the blob holds, with
    /// [`DROPPED`] once the builder no longer has them), with what its data says (the
    /// `table` module).
    Encoded(Blob, u32, Facts),
    /// Left to `finish`.
    GivenUp,
}

/// What has been done ahead of `finish`.
#[derive(Debug)]
pub(super) struct Ahead {
    /// Records before this one have been taken (targets and encoding).
    pub done: usize,
    /// Records taken, in order, whose in-zone target had no node yet.
    pub unresolved: Vec<u32>,
    /// By main-space node id.
    pub early: Vec<Early>,
    /// Records between two rounds (0: never encode ahead).
    pub batch: usize,
    /// What the nodes encoded ahead say of their targets (the `table` module).
    pub targets: Targets,
    /// Nodes given up after their records were dropped, with the blob that holds them.
    restore: Vec<(NodeId, Blob)>,
    /// The buffers the next compaction writes into.
    spare: (Vec<Pending>, Vec<u8>),
}

impl Ahead {
    /// Records between two rounds of work ahead: a round costs a few allocations, and
    /// what is left for `finish` is at most about this many records.
    #[cfg(not(fuzzing))]
    pub const BATCH: usize = 16_384;
    /// Under `cargo fuzz`, a few records: the fuzzer's streams are short, and dropping
    /// records and restoring them from their blobs must run on them too.
    #[cfg(fuzzing)]
    pub const BATCH: usize = 4;

    pub fn new(batch: usize) -> Ahead {
        Ahead {
            done: 0,
            unresolved: Vec::new(),
            early: Vec::new(),
            batch,
            targets: Targets::default(),
            restore: Vec::new(),
            spare: (Vec::new(), Vec::new()),
        }
    }

    /// The blob encoded ahead for node `id`, its record count and facts, if still good.
    pub fn take(&mut self, id: NodeId) -> Option<(Blob, u32, Facts)> {
        match std::mem::take(self.early.get_mut(id as usize)?) {
            Early::Encoded(blob, count, facts) => Some((blob, count & !DROPPED, facts)),
            _ => None,
        }
    }

    /// True when any node is encoded ahead (and not taken yet).
    pub fn encoded_any(&self) -> bool {
        self.early.iter().any(|e| matches!(e, Early::Encoded(..)))
    }

    /// True when nodes given up need their records back ([`ZoneBuilder::compact`]).
    pub fn must_restore(&self) -> bool {
        !self.restore.is_empty()
    }

    /// True when node `node` (a pending record's, either space) is encoded ahead.
    pub fn is_encoded(&self, node: u32) -> bool {
        matches!(self.early.get(node as usize), Some(Early::Encoded(..)))
    }

    /// Gives up the nodes of `records` (those `finish` takes itself).
    pub fn give_up_nodes(&mut self, records: &[Pending]) {
        for p in records.iter().filter(|p| p.node & NSEC3_SPACE == 0) {
            if let Some(state) = self.early.get_mut(p.node as usize) {
                give_up(state, p.node, &mut self.targets, &mut self.restore);
            }
        }
    }
}

/// Node `id`'s state, made `Unseen` if it had none.
fn state_of(early: &mut Vec<Early>, id: NodeId) -> Option<&mut Early> {
    let i = id as usize;
    if i >= early.len() {
        early.resize_with(i + 1, Early::default);
    }
    early.get_mut(i)
}

/// Leaves node `id` to `finish`: the references read from its blob, if it was encoded
/// ahead, are taken back, and its records are to be restored if they were dropped.
fn give_up(
    state: &mut Early,
    id: NodeId,
    targets: &mut Targets,
    restore: &mut Vec<(NodeId, Blob)>,
) {
    if let Early::Encoded(blob, count, _) = std::mem::replace(state, Early::GivenUp) {
        targets.forget(&blob);
        if count & DROPPED != 0 {
            restore.push((id, blob));
        }
    }
}

/// Notes that the records of node `id` are dropped, if it is encoded: true then.
fn drop_records(early: &mut [Early], id: NodeId) -> bool {
    match early.get_mut(id as usize) {
        Some(Early::Encoded(_, count, _)) => {
            *count |= DROPPED;
            true
        }
        _ => false,
    }
}

/// Appends the records `blob` holds (node `id`'s): each RRset's records in order with
/// their targets, then its signatures, at the lowest of their TTLs (which is what
/// encoding them again keeps).
fn unpack(blob: Blob, id: NodeId, records: &mut Vec<Pending>, rdata: &mut Vec<u8>) {
    let node = Node::new(blob);
    for set in node.rrsets() {
        let data =
            set.rdatas().enumerate().map(|(i, bytes)| (set.rtype, set.ttl, set.target(i), bytes));
        let sigs = set.sigs().map(|bytes| (Rtype::RRSIG, set.sig_ttl, NO_NODE, bytes));
        for (rtype, ttl, target, bytes) in data.chain(sigs) {
            let rdata_at = rdata.len();
            rdata.extend_from_slice(bytes);
            let len = bytes.len() as u16; // RDATA in a blob has a 16-bit length
            records.push(Pending { rdata_at, node: id, ttl, target, len, rtype });
        }
    }
}

impl ZoneBuilder {
    /// Does the work of `finish` that the records so far allow (see the module docs),
    /// once a batch of records (16,384) has come since the last time. For a transfer,
    /// called after each record; a zone-file load does not (it has no wait to fill).
    #[inline]
    pub fn work_ahead(&mut self) {
        let upto = self.main.pending_from().min(self.nsec3.pending_from()).min(self.records.len());
        if self.ahead.batch != 0 && upto >= self.ahead.done + self.ahead.batch {
            self.take_records(upto);
        }
    }

    /// Resolves the known targets of records `done..upto`, then encodes their runs.
    #[inline(never)]
    fn take_records(&mut self, upto: usize) {
        let ZoneBuilder { origin, main, records, rdata, lines, ahead, .. } = self;
        let from = ahead.unresolved.len();
        let range = ahead.done..upto;
        // In-zone targets are looked up in a second pass, their index slots prefetched
        // in the first: each probe would otherwise wait for memory.
        let mut lookups = Vec::new();
        for (i, rec) in range.clone().zip(records.get_mut(range.clone()).unwrap_or(&mut [])) {
            if rec.node & NSEC3_SPACE != 0 || !has_targets(rec.rtype) {
                continue;
            }
            match super::target_known(origin, rdata, rec) {
                Ok(node) => rec.target = node,
                Err(target) => lookups.push((i, main.owners.prefetch_name(target))),
            }
        }
        for (i, tag) in lookups {
            let Some(rec) = records.get_mut(i) else { continue };
            let found = super::target_known(origin, rdata, rec)
                .err()
                .and_then(|target| main.owners.find(target, tag));
            match found {
                Some(target) => rec.target = target,
                None => ahead.unresolved.push(i as u32),
            }
        }
        let missing = ahead.unresolved.get(from..).unwrap_or(&[]).to_vec();
        let mut scratch = Report::default();
        let encoder = Encoder::new(records, rdata, lines, &mut scratch);
        let targets = std::mem::take(&mut ahead.targets);
        let mut runs = Runs { encoder, missing: &missing, members: Vec::new(), targets };
        let mut start = range.start;
        while let Some(first) = records.get(start).filter(|_| start < upto) {
            let rest = records.get(start..upto).unwrap_or(&[]);
            let end = start + rest.iter().take_while(|p| p.node == first.node).count();
            if first.node & NSEC3_SPACE == 0 {
                runs.encode(ahead, &main.owners, first.node, start..end);
            }
            start = end;
        }
        ahead.targets = std::mem::take(&mut runs.targets);
        drop(runs);
        ahead.done = upto;
        if !self.lines.has_files() {
            self.compact(upto);
        }
    }

    /// Drops the records before `upto` whose node is encoded, keeping (in order) those
    /// `finish` needs and every record from `upto` on, with their RDATA; the records of
    /// nodes given up after theirs were dropped come back first (see the module docs).
    pub(super) fn compact(&mut self, upto: usize) {
        let ZoneBuilder { records, rdata, ahead, main, nsec3, .. } = self;
        let (mut kept, mut bytes) = std::mem::take(&mut ahead.spare);
        kept.clear();
        bytes.clear();
        for (id, blob) in ahead.restore.drain(..) {
            unpack(blob, id, &mut kept, &mut bytes);
        }
        let mut unresolved = ahead.unresolved.iter_mut().peekable();
        for (i, p) in records.iter().enumerate() {
            if i < upto && p.node & NSEC3_SPACE == 0 && drop_records(&mut ahead.early, p.node) {
                continue;
            }
            // A record whose target was unknown belongs to a node given up: it is kept.
            if let Some(number) = unresolved.next_if(|u| **u as usize == i) {
                *number = kept.len() as u32;
            }
            let rdata_at = bytes.len();
            bytes.extend_from_slice(rdata_of(rdata, p));
            kept.push(Pending { rdata_at, ..*p });
        }
        let moved = kept.len() - (records.len() - upto);
        ahead.done = ahead.done + moved - upto;
        main.moved(upto, moved);
        nsec3.moved(upto, moved);
        std::mem::swap(records, &mut kept);
        std::mem::swap(rdata, &mut bytes);
        ahead.spare = (kept, bytes);
    }
}

/// Encodes runs of records, one node each, through one encoder.
struct Runs<'a, 'r> {
    encoder: Encoder<'a>,
    /// Records (in order) whose target is unknown.
    missing: &'r [u32],
    members: Vec<u32>,
    targets: Targets,
}

impl Runs<'_, '_> {
    /// Encodes node `id` from `range`, its run of records, unless it is to be given up:
    /// it had records before, a target is unknown, or the encoder reports something.
    fn encode(&mut self, ahead: &mut Ahead, owners: &Owners, id: NodeId, range: Range<usize>) {
        let Some(state) = state_of(&mut ahead.early, id) else { return };
        // Runs come in order, and so do the missing records: step past the earlier ones.
        let before = self.missing.iter().take_while(|&&i| (i as usize) < range.start).count();
        self.missing = self.missing.get(before..).unwrap_or(&[]);
        let unknown = self.missing.first().is_some_and(|&i| (i as usize) < range.end);
        if unknown || !matches!(state, Early::Unseen) {
            give_up(state, id, &mut self.targets, &mut ahead.restore);
            return;
        }
        self.members.clear();
        self.members.extend(range.start as u32..range.end as u32);
        *state = match self.encoder.node_alone(owners.owner(id), &self.members) {
            Some((blob, count)) => {
                let (blob, facts) = Facts::of_data(blob, id, &mut self.targets);
                Early::Encoded(blob, count, facts)
            }
            None => Early::GivenUp,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::testutil::{self, fingerprint, Rng, APEX};
    use tern_wire::Name;

    /// The zone (or the refusal) built from `text` by a builder that works ahead every
    /// `batch` records (0: never), as comparable text.
    fn build(text: &str, batch: usize) -> String {
        let origin: Name = "example.".parse().unwrap();
        let mut b = ZoneBuilder::working_ahead_every(&origin, batch);
        testutil::add_lines_then(&mut b, "example.", text, ZoneBuilder::work_ahead);
        match b.finish() {
            Ok((zone, report)) => {
                crate::changeset_tests::assert_ids_sound(&zone); // references counted right
                format!("{:#?}\n{report:?}", fingerprint(&zone))
            }
            Err(Error::Semantic(report)) => format!("refused: {report:?}"),
            Err(e) => format!("error: {e}"),
        }
    }

    /// Builds `text` working ahead at several strides and checks every build is the same
    /// as the one that does not.
    fn same_every_way(text: &str) {
        let text = format!("{APEX}{text}");
        let plain = build(&text, 0);
        for batch in [1, 2, 3, 5, 8, 64] {
            assert_eq!(build(&text, batch), plain, "batch {batch}");
        }
    }

    #[test]
    fn contiguous_owners_with_glue_and_targets_later() {
        same_every_way(
            "d1.example. 300 NS ns1.d1.example.
             d1.example. 300 NS ns2.d1.example.
             ns1.d1.example. 300 A 192.0.2.1
             ns2.d1.example. 300 AAAA 2001:db8::1
             d2.example. 300 NS ns.other.
             mx.example. 300 MX 10 mail.example.
             www.example. 300 CNAME host.example.
             host.example. 300 A 192.0.2.2
             mail.example. 300 A 192.0.2.3
             nowhere.example. 300 MX 10 missing.example.
             svc.example. 300 SVCB 1 . alpn=h2",
        );
    }

    #[test]
    fn owners_that_come_back_are_left_to_finish() {
        same_every_way(
            "a.example. 300 A 192.0.2.1
             b.example. 300 A 192.0.2.2
             c.example. 300 A 192.0.2.3
             a.example. 300 AAAA 2001:db8::1
             d.EXAMPLE. 300 A 192.0.2.4
             b.example. 300 TXT \"late\"
             D.example. 300 TXT \"case\"",
        );
    }

    #[test]
    fn duplicates_ttls_and_errors_report_the_same() {
        same_every_way(
            "dup.example. 300 A 192.0.2.1
             dup.example. 300 A 192.0.2.1
             ttl.example. 300 A 192.0.2.1
             ttl.example. 600 A 192.0.2.2
             x.y.z.example. 300 A 192.0.2.9
             *.wild.example. 300 A 192.0.2.10
             sub.wild.example. 300 TXT \"x\"",
        );
        same_every_way(
            "bad.example. 300 CNAME a.example.
             bad.example. 300 A 192.0.2.1
             a.example. 300 A 192.0.2.2",
        );
    }

    #[test]
    fn signed_records_and_an_nsec3_chain() {
        let sig = "13 2 300 20300101000000 20200101000000 12345 example. AAAA";
        let hash = ["0p9mhaveqvm6t7vbl5lop2u3t2rp3tom", "2vptu5timamqttgl4luu9kg21e0aor3s"];
        same_every_way(&format!(
            "example. 300 NSEC3PARAM 1 0 2 abcd
             a.example. 300 A 192.0.2.1
             a.example. 300 RRSIG A {sig}
             a.example. 300 RRSIG A {sig}
             {h0}.example. 300 NSEC3 1 0 2 abcd {h1} A RRSIG
             {h0}.example. 300 RRSIG NSEC3 {sig}
             b.example. 300 RRSIG A {sig}
             b.example. 300 A 192.0.2.2
             {h1}.example. 300 NSEC3 1 0 2 abcd {h0} A RRSIG
             {h1}.example. 300 RRSIG NSEC3 {sig}",
            h0 = hash[0],
            h1 = hash[1],
        ));
    }

    #[test]
    fn signed_owners_that_come_back_get_their_records_again() {
        // `a` is encoded and its records dropped before it comes back: with signatures
        // of two TTLs, an orphan one, a target, and a duplicate among the late records.
        let sig = |covered: &str, tag: u32| {
            format!("RRSIG {covered} 13 2 300 20300101000000 20200101000000 {tag} example. AAAA")
        };
        same_every_way(&format!(
            "b.example. 300 A 192.0.2.2
             a.example. 300 A 192.0.2.1
             a.example. 300 {s1}
             a.example. 200 {s2}
             a.example. 300 MX 10 b.example.
             a.example. 300 {s3}
             c.example. 300 A 192.0.2.3
             d.example. 300 A 192.0.2.4
             a.example. 300 AAAA 2001:db8::1
             a.example. 300 A 192.0.2.1
             a.example. 300 {s1}
             e.example. 300 A 192.0.2.5",
            s1 = sig("A", 1),
            s2 = sig("A", 2),
            s3 = sig("TXT", 3),
        ));
    }

    #[test]
    fn random_zones_build_the_same() {
        let mut rng = Rng(0x5eed_ab1e);
        for _ in 0..20 {
            let mut text = String::new();
            for _ in 0..200 {
                let owner = format!("n{}.example.", rng.next() % 40);
                let target = format!("n{}.example.", rng.next() % 60);
                let line = match rng.next() % 6 {
                    0 => format!("{owner} 300 NS {target}"),
                    1 => format!("{owner} {} A 192.0.2.{}", 300 + rng.next() % 2, rng.next() % 3),
                    2 => format!("{owner} 300 MX 10 {target}"),
                    3 => format!("sub.{owner} 300 TXT \"t\""),
                    4 => format!("{owner} 300 AAAA 2001:db8::{}", rng.next() % 4),
                    _ => format!("{owner} 300 NS ns.other."),
                };
                text.push_str(&line);
                text.push('\n');
            }
            same_every_way(&text);
        }
    }

    #[test]
    fn a_node_state_is_two_words() {
        assert_eq!(std::mem::size_of::<Early>(), 16);
    }

    #[test]
    fn most_nodes_of_a_grouped_transfer_are_encoded_ahead() {
        let origin: Name = "example.".parse().unwrap();
        let mut b = ZoneBuilder::working_ahead_every(&origin, 8);
        let text: String = (0..100)
            .map(|i| {
                format!("d{i}.example. 300 NS ns.d{i}.example.\nns.d{i}.example. 300 A 192.0.2.1\n")
            })
            .collect();
        testutil::add_lines_then(
            &mut b,
            "example.",
            &format!("{APEX}{text}"),
            ZoneBuilder::work_ahead,
        );
        let encoded = b.ahead.early.iter().filter(|e| matches!(e, Early::Encoded(..))).count();
        assert!(encoded > 150, "{encoded} encoded ahead");
        // The records of the nodes encoded are dropped: the builder holds about a batch.
        assert!(b.records.len() < 16, "{} of 201 records kept", b.records.len());
        let rdata: usize = b.records.iter().map(|p| usize::from(p.len)).sum();
        assert_eq!(b.rdata.len(), rdata, "only the RDATA of the records kept");
    }
}
