//! Encoding the builder's pending records into node blobs.
//!
//! Records stay where `add` put them: [`Groups`] orders their indices node by node with
//! one counting sort (stable, so file order survives inside a node), and one [`Encoder`]
//! with reused scratch buffers forms each node's RRsets (duplicates dropped by the
//! `unique` module, TTLs reconciled per RFC 2181 §5.2, sizes checked) and writes its
//! blob. A million-node zone thus costs one allocation per node, the blob itself.
//! Findings about a record are placed at its line (the `lines` module).

use std::cell::Cell;
use std::ops::Range;

use tern_wire::{Dname, Rtype};

use super::lines::Lines;
use super::space::Owners;
use super::unique::{rdata_of, Unique};
use super::{kept, Member, Pending, KEEP_UP_TO, NSEC3_SPACE};
use crate::check;
use crate::node::{BlobWriter, Node, NodeId, RrsetHead};
use crate::nsec3::{decode_hash_label, Nsec3Chain, Nsec3Params};
use crate::records::covered_type;
use crate::report::{Report, Severity};

/// Record indices grouped by node: main-space nodes first, then NSEC3-space nodes.
#[derive(Debug)]
pub(super) struct Groups {
    order: Vec<u32>,
    /// `starts[k]..starts[k + 1]` is group `k`'s part of `order`.
    starts: Vec<u32>,
    main_len: usize,
}

impl Groups {
    /// Groups `records` of a builder with `main_len` main and `nsec3_len` NSEC3 nodes,
    /// leaving out those for which `taken` holds (their node is encoded already).
    pub(super) fn new(
        records: &[Pending],
        (main_len, nsec3_len): (usize, usize),
        taken: impl Fn(&Pending) -> bool,
    ) -> Groups {
        let key = |p: &Pending| {
            let id = (p.node & !NSEC3_SPACE) as usize;
            if p.node & NSEC3_SPACE != 0 {
                main_len + id
            } else {
                id
            }
        };
        // Counts land two slots up so that, after the prefix sum, `starts[k + 1]` is
        // group k's first slot: the scatter advances it to group k's end, which is
        // group k + 1's start.
        let (mut starts, mut order) = GROUPS.try_with(Cell::take).unwrap_or_default();
        starts.clear();
        starts.resize(main_len + nsec3_len + 2, 0);
        let mut kept = 0;
        for p in records.iter().filter(|p| !taken(p)) {
            kept += 1;
            if let Some(count) = starts.get_mut(key(p) + 2) {
                *count += 1;
            }
        }
        let mut sum = 0u32;
        for slot in &mut starts {
            sum += *slot;
            *slot = sum;
        }
        order.clear();
        order.resize(kept, 0);
        for (i, p) in records.iter().enumerate().filter(|(_, p)| !taken(p)) {
            if let Some(cursor) = starts.get_mut(key(p) + 1) {
                if let Some(slot) = order.get_mut(*cursor as usize) {
                    *slot = i as u32;
                }
                *cursor += 1;
            }
        }
        Groups { order, starts, main_len }
    }

    pub(super) fn main(&self, id: NodeId) -> &[u32] {
        self.group(id as usize)
    }

    fn nsec3(&self, id: NodeId) -> &[u32] {
        self.group(self.main_len + id as usize)
    }

    fn group(&self, key: usize) -> &[u32] {
        match (self.starts.get(key), self.starts.get(key + 1)) {
            (Some(&from), Some(&to)) => self.order.get(from as usize..to as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

impl Drop for Groups {
    /// Keeps the two lists for the thread's next groups (see [`Scratch`]).
    fn drop(&mut self) {
        let lists = (kept(std::mem::take(&mut self.starts)), kept(std::mem::take(&mut self.order)));
        let _ = GROUPS.try_with(|cell| cell.set(lists));
    }
}

thread_local! {
    /// The lists of the thread's last [`Groups`], emptied.
    static GROUPS: Cell<(Vec<u32>, Vec<u32>)> = const { Cell::new((Vec::new(), Vec::new())) };
}

/// Encodes nodes one after the other through reused buffers.
#[derive(Debug)]
pub(super) struct Encoder<'a> {
    records: &'a [Pending],
    rdata: &'a [u8],
    lines: &'a Lines,
    report: &'a mut Report,
    /// The current node's records, sorted into RRsets.
    group: Vec<Member>,
    /// The current RRset's records and signatures, duplicates dropped.
    data: Vec<Member>,
    sigs: Vec<Member>,
    targets: Vec<NodeId>,
    writer: BlobWriter,
    unique: Unique,
}

/// Records of a node, and bytes of its blob, that an [`Encoder`] has room for from the
/// start.
const NODE_RECORDS: usize = 16;
const NODE_BYTES: usize = 512;

/// An [`Encoder`]'s buffers, kept by the thread for its next encoder: a start encodes
/// zone after zone on each loading thread, and each encoder making and freeing its own
/// left holes among the zones' data in glibc's heap.
#[derive(Default)]
struct Scratch {
    group: Vec<Member>,
    data: Vec<Member>,
    sigs: Vec<Member>,
    targets: Vec<NodeId>,
    writer: Option<BlobWriter>,
    unique: Unique,
}

thread_local! {
    static SCRATCH: Cell<Scratch> = Cell::new(Scratch::default());
}

/// `v`, emptied, with room for `room` elements.
fn with_room<T>(mut v: Vec<T>, room: usize) -> Vec<T> {
    v.clear();
    v.reserve(room);
    v
}

impl Drop for Encoder<'_> {
    /// Keeps the buffers for the thread's next encoder (see [`Scratch`]).
    fn drop(&mut self) {
        let writer = std::mem::replace(&mut self.writer, BlobWriter::unallocated());
        let scratch = Scratch {
            group: kept(std::mem::take(&mut self.group)),
            data: kept(std::mem::take(&mut self.data)),
            sigs: kept(std::mem::take(&mut self.sigs)),
            targets: kept(std::mem::take(&mut self.targets)),
            writer: (writer.capacity() <= KEEP_UP_TO).then_some(writer),
            unique: std::mem::take(&mut self.unique).kept(),
        };
        let _ = SCRATCH.try_with(|cell| cell.set(scratch));
    }
}

impl<'a> Encoder<'a> {
    pub(super) fn new(
        records: &'a [Pending],
        rdata: &'a [u8],
        lines: &'a Lines,
        report: &'a mut Report,
    ) -> Self {
        let Scratch { group, data, sigs, targets, writer, unique } =
            SCRATCH.try_with(Cell::take).unwrap_or_default();
        Encoder {
            records,
            rdata,
            lines,
            report,
            // Room for the usual node (a zone apex) from the start: a small zone's
            // nodes are encoded without growing them.
            group: with_room(group, NODE_RECORDS),
            data: with_room(data, NODE_RECORDS),
            sigs,
            targets: with_room(targets, NODE_RECORDS),
            writer: writer.map_or_else(
                || BlobWriter::with_capacity(Dname::ROOT, NODE_BYTES),
                |mut w| {
                    w.restart(Dname::ROOT);
                    w
                },
            ),
            unique,
        }
    }

    /// Counts `count` records of a node encoded ahead, as encoding it would have.
    pub(super) fn taken_ahead(&mut self, count: u32) {
        self.report.records += count as usize;
    }

    /// The NSEC3 chain, or `None` when the zone has no NSEC3 records (or no usable
    /// NSEC3 parameters).
    pub(super) fn nsec3_chain(&mut self, space: &Owners, groups: &Groups) -> Option<Nsec3Chain> {
        if space.nodes.is_empty() {
            return None;
        }
        let mut entries = Vec::with_capacity(space.nodes.len());
        let mut params = None;
        for id in 0..space.nodes.len() as NodeId {
            let owner = space.owner(id);
            let Some(hash) = owner.first_label().and_then(decode_hash_label) else { continue };
            let members = groups.nsec3(id);
            if params.is_none() {
                params = members
                    .iter()
                    .filter_map(|&i| self.records.get(i as usize))
                    .find(|p| p.rtype == Rtype::NSEC3)
                    .and_then(|p| Nsec3Params::from_rdata(rdata_of(self.rdata, p)));
            }
            entries.push((hash, Node::new(self.node(owner, members))));
        }
        Some(Nsec3Chain::new(params?, entries))
    }

    /// Encodes one node's records (as [`Encoder::node`]) if that finds nothing to report:
    /// the blob and how many records it holds.
    pub(super) fn node_alone(
        &mut self,
        owner: &Dname,
        members: &[u32],
    ) -> Option<(crate::blob::Blob, u32)> {
        let report = &*self.report;
        let before = (report.issues().len(), report.ignored, report.suppressed, report.records);
        let blob = self.node(owner, members);
        let report = &*self.report;
        let after = (report.issues().len(), report.ignored, report.suppressed);
        let count = report.records - before.3;
        (after == (before.0, before.1, before.2)).then_some((blob, count as u32))
    }

    /// Encodes one node's records: RRsets in type order, each followed by its RRSIGs.
    pub(super) fn node(&mut self, owner: &Dname, members: &[u32]) -> crate::blob::Blob {
        crate::blob::Blob::new(self.node_bytes(owner, members))
    }

    /// Encodes one node's records (as [`Encoder::node`]): the blob's bytes, valid until
    /// the next node.
    pub(super) fn node_bytes(&mut self, owner: &Dname, members: &[u32]) -> &[u8] {
        let rdata = self.rdata;
        let records = self.records;
        self.group.clear();
        self.group.extend(members.iter().filter_map(|&i| records.get(i as usize).map(|p| (i, *p))));
        self.group.sort_by_key(|m| rrset_key(&m.1, rdata));
        self.writer.restart(owner);
        let mut start = 0;
        while let Some(first) = self.group.get(start) {
            let key = rrset_key(&first.1, rdata).0;
            let rest = self.group.get(start..).unwrap_or(&[]);
            let end = start + rest.iter().take_while(|m| rrset_key(&m.1, rdata).0 == key).count();
            self.rrset(owner, Rtype(key), start..end);
            start = end;
        }
        self.writer.bytes()
    }

    /// Encodes the records and signatures of one type (`group[range]` holds records
    /// first, then the RRSIGs covering `rtype`).
    fn rrset(&mut self, owner: &Dname, rtype: Rtype, range: Range<usize>) {
        let set = self.group.get(range).unwrap_or(&[]);
        let split = set.iter().position(|m| m.1.rtype == Rtype::RRSIG && rtype != Rtype::RRSIG);
        let (data, sigs) = set.split_at(split.unwrap_or(set.len()));
        let (report, lines) = (&mut *self.report, self.lines);
        let mut dropped = |m: &Member| {
            report.ignored += 1;
            let (at, message) = (|| lines.position(m.0), "duplicate record ignored");
            report.push_at(Severity::Warning, at, Some(owner), Some(m.1.rtype), message);
        };
        self.unique.retain(self.rdata, data, &mut self.data, &mut dropped);
        self.unique.retain(self.rdata, sigs, &mut self.sigs, &mut dropped);
        let rdata = self.rdata;
        let first = self.data.first().or(self.sigs.first()).map_or(u32::MAX, |m| m.0);
        let at = || lines.position(first);
        let bytes = self.data.iter().map(|m| usize::from(m.1.len)).sum();
        let size = (self.data.len(), bytes, self.sigs.len());
        let rdatas = self.data.iter().map(|m| rdata_of(rdata, &m.1));
        if !check::rrset_size(self.report, at, (owner, rtype), size, rdatas) {
            return; // the zone is refused
        }
        let ttl = reconcile_ttl(self.report, lines, owner, rtype, &self.data);
        let sig_ttl = self.sigs.iter().map(|m| m.1.ttl).min().unwrap_or(ttl);
        let (head_type, head_ttl) =
            if self.data.is_empty() { (Rtype::RRSIG, sig_ttl) } else { (rtype, ttl) };
        self.report.records += self.data.len() + self.sigs.len();
        self.targets.clear();
        self.targets.extend(self.data.iter().map(|m| m.1.target));
        let head = RrsetHead { rtype: head_type, ttl: head_ttl, sig_ttl };
        self.writer.rrset(
            head,
            self.data.iter().map(|m| rdata_of(rdata, &m.1)),
            &self.targets,
            self.sigs.iter().map(|m| rdata_of(rdata, &m.1)),
        );
    }
}

/// The RRset's TTL: the lowest of its records', with a warning when they differ
/// (RFC 2181 §5.2), at the first record whose TTL is not the first one's.
fn reconcile_ttl(
    report: &mut Report,
    lines: &Lines,
    owner: &Dname,
    rtype: Rtype,
    data: &[Member],
) -> u32 {
    let min = data.iter().map(|m| m.1.ttl).min().unwrap_or(0);
    let first_ttl = data.first().map_or(min, |m| m.1.ttl);
    if let Some(other) = data.iter().find(|m| m.1.ttl != first_ttl) {
        let message = format!("records have different TTLs: using the lowest, {min}");
        let at = || lines.position(other.0);
        report.push_at(Severity::Warning, at, Some(owner), Some(rtype), message);
    }
    min
}

/// Sort key putting each type's records first and the RRSIGs covering it right after.
fn rrset_key(p: &Pending, arena: &[u8]) -> (u16, bool) {
    if p.rtype == Rtype::RRSIG {
        if let Some(covered) = covered_type(rdata_of(arena, p)) {
            return (covered.0, true);
        }
    }
    (p.rtype.0, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NO_NODE;
    use tern_wire::Rtype;

    fn pending(node: u32) -> Pending {
        Pending { rdata_at: 0, node, ttl: 0, target: NO_NODE, len: 0, rtype: Rtype::A }
    }

    #[test]
    fn small_buffers_are_kept_emptied_and_large_ones_freed() {
        let mut small = Vec::with_capacity(100);
        small.push(1u32);
        let small = kept(small);
        assert!(small.is_empty() && small.capacity() >= 100);
        let large: Vec<u64> = Vec::with_capacity(KEEP_UP_TO / 8 + 1);
        assert_eq!(kept(large).capacity(), 0, "more than KEEP_UP_TO bytes");
    }

    #[test]
    fn groups_keep_file_order_inside_each_node() {
        let records =
            [pending(2), pending(0), pending(2), pending(NSEC3_SPACE), pending(1), pending(0)];
        let groups = Groups::new(&records, (3, 1), |_| false);
        assert_eq!(groups.main(0), &[1, 5]);
        assert_eq!(groups.main(1), &[4]);
        assert_eq!(groups.main(2), &[0, 2]);
        assert_eq!(groups.nsec3(0), &[3]);
        assert_eq!(groups.nsec3(1), &[] as &[u32], "past the last group");
    }

    #[test]
    fn records_taken_are_left_out() {
        let records = [pending(0), pending(1), pending(0), pending(NSEC3_SPACE), pending(1)];
        let groups = Groups::new(&records, (2, 1), |p| p.node == 1);
        assert_eq!(groups.main(0), &[0, 2]);
        assert!(groups.main(1).is_empty());
        assert_eq!(groups.nsec3(0), &[3]);
    }

    #[test]
    fn empty_groups_for_nodes_without_records() {
        let groups = Groups::new(&[pending(3)], (5, 0), |_| false);
        assert!(groups.main(0).is_empty() && groups.main(4).is_empty());
        assert_eq!(groups.main(3), &[0]);
    }
}
