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

use std::ops::Range;

use super::encode::Encoder;
use super::space::Owners;
use super::table::{Facts, Targets};
use super::{Pending, ZoneBuilder, NSEC3_SPACE};
use crate::blob::Blob;
use crate::node::{has_targets, NodeId};
use crate::report::Report;

/// A main-space node's state ahead of `finish`.
#[derive(Debug, Default)]
pub(super) enum Early {
    /// No records of it seen yet.
    #[default]
    Unseen,
    /// Encoded from all of its records so far (how many records the blob holds), with
    /// what its data says (the `table` module).
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
}

impl Ahead {
    /// Records between two rounds of work ahead: a round costs a few allocations, and
    /// what is left for `finish` is at most about this many records.
    pub const BATCH: usize = 16_384;

    pub fn new(batch: usize) -> Ahead {
        let targets = Targets::default();
        Ahead { done: 0, unresolved: Vec::new(), early: Vec::new(), batch, targets }
    }

    /// The blob encoded ahead for node `id`, its record count and facts, if still good.
    pub fn take(&mut self, id: NodeId) -> Option<(Blob, u32, Facts)> {
        match std::mem::take(self.early.get_mut(id as usize)?) {
            Early::Encoded(blob, count, facts) => Some((blob, count, facts)),
            _ => None,
        }
    }

    /// True when node `node` (a pending record's, either space) is encoded ahead.
    pub fn is_encoded(&self, node: u32) -> bool {
        matches!(self.early.get(node as usize), Some(Early::Encoded(..)))
    }

    /// Gives up the nodes of `records` (those `finish` takes itself).
    pub fn give_up_nodes(&mut self, records: &[Pending]) {
        for p in records.iter().filter(|p| p.node & NSEC3_SPACE == 0) {
            if let Some(state) = self.early.get_mut(p.node as usize) {
                give_up(state, &mut self.targets);
            }
        }
    }

    fn state(&mut self, id: NodeId) -> Option<&mut Early> {
        let i = id as usize;
        if i >= self.early.len() {
            self.early.resize_with(i + 1, Early::default);
        }
        self.early.get_mut(i)
    }
}

/// Leaves a node to `finish`; the references read from its blob, if it was encoded
/// ahead, are taken back.
fn give_up(state: &mut Early, targets: &mut Targets) {
    if let Early::Encoded(blob, ..) = std::mem::replace(state, Early::GivenUp) {
        targets.forget(blob);
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
        for (i, rec) in range.clone().zip(records.get_mut(range.clone()).unwrap_or(&mut [])) {
            if rec.node & NSEC3_SPACE != 0 || !has_targets(rec.rtype) {
                continue;
            }
            match super::target_of(origin, &mut main.owners, rdata, rec, false) {
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
        ahead.targets = runs.targets;
        ahead.done = upto;
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
        let Some(state) = ahead.state(id) else { return };
        // Runs come in order, and so do the missing records: step past the earlier ones.
        let before = self.missing.iter().take_while(|&&i| (i as usize) < range.start).count();
        self.missing = self.missing.get(before..).unwrap_or(&[]);
        let unknown = self.missing.first().is_some_and(|&i| (i as usize) < range.end);
        if unknown || !matches!(state, Early::Unseen) {
            give_up(state, &mut self.targets);
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
    }
}
