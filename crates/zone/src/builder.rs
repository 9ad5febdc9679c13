//! Building a zone snapshot from a stream of records (a zone file, a transfer, a test).
//!
//! Records are appended to one arena as they arrive (no per-record allocation); each
//! owner gets a node when it is first seen (looked up one record late, with a prefetch:
//! the `space` module), with any missing ancestors (empty non-terminals) created above
//! it, so node ids are in topological order (a parent's id is below its children's).
//! `finish` resolves the target names of NS/MX/SRV/SVCB/CNAME records to node references,
//! groups records into RRsets (duplicates dropped, TTLs reconciled per RFC 2181 §5.2) and
//! encodes each node once (the `encode` module), making it in its place in the node
//! table with its flags and links (the `table` module), then runs what is left of the
//! adjust pass and the semantic checks. A builder for a transfer does the grouping,
//! target resolution and encoding of each owner ahead, while the rest arrives (the
//! `ahead` module), then drops the records it encoded, so that its arena stays about a
//! batch long; `finish` keeps what still holds. Records from a zone file carry their
//! file and line (the `lines` module, one byte a record), so that findings say where;
//! the snapshot keeps none.

use std::path::Path;

use tern_wire::{Dname, Name, Rtype};

use crate::contents::{Denial, ZoneContents};
use crate::cow::ChunkVec;
use crate::error::{Error, Position};
use crate::index::IndexBuilder;
use crate::node::{has_targets, Node, NodeId, NO_NODE};
use crate::parser::Record;
use crate::records::{in_nsec3_chain, target_name};
use crate::report::{Report, Severity};
use crate::{adjust, check};

mod ahead;
mod encode;
mod lines;
mod space;
mod table;
mod unique;
use ahead::Ahead;
use encode::{Encoder, Groups};
use lines::Lines;
use space::Space;

/// Marks a pending record's node as living in the NSEC3 space.
const NSEC3_SPACE: u32 = 1 << 31;

/// One record waiting for `finish`.
#[derive(Clone, Copy, Debug)]
struct Pending {
    rdata_at: usize,
    node: u32,
    ttl: u32,
    target: NodeId,
    len: u16,
    rtype: Rtype,
}

/// A pending record with its number (its place in the order records were added), while
/// its node is encoded: the number finds its line for a finding.
type Member = (u32, Pending);

/// The text length up to which [`ZoneBuilder::sized`] sizes its buffers ahead.
const SIZED_UP_TO: usize = 64 * 1024;

/// Buffers of more bytes than this are freed rather than kept by the thread for its
/// next zone (the encoder's, the grouping's and the line records'), so that a thread
/// keeps at most a few hundred KiB after a large zone.
const KEEP_UP_TO: usize = 64 << 10;

/// `v` emptied, to keep for the thread's next zone; a new one when it is too large to
/// keep ([`KEEP_UP_TO`]).
fn kept<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    if v.capacity().saturating_mul(std::mem::size_of::<T>()) > KEEP_UP_TO {
        Vec::new()
    } else {
        v
    }
}

/// Collects records and builds a [`ZoneContents`].
#[derive(Debug)]
pub struct ZoneBuilder {
    origin: Name,
    main: Space,
    nsec3: Space,
    records: Vec<Pending>,
    rdata: Vec<u8>,
    /// Where each of `records` came from.
    lines: Lines,
    report: Report,
    /// What was done before `finish` (transfers only: the `ahead` module).
    ahead: Ahead,
}

impl ZoneBuilder {
    /// A builder for the zone at `origin`.
    pub fn new(origin: &Dname) -> ZoneBuilder {
        ZoneBuilder::with_room(origin, 0)
    }

    /// A builder for the zone at `origin` whose text is about `bytes` long (a zone
    /// file's size): its buffers start at the sizes a zone file of that length usually
    /// needs, up to 64 KiB of text's worth, so that a small zone is built without
    /// growing them step by step (a start with a million small zones spent a sixth of
    /// its load's instructions there). Bigger zones grow their buffers as they go.
    pub fn sized(origin: &Dname, bytes: u64) -> ZoneBuilder {
        ZoneBuilder::with_room(
            origin,
            usize::try_from(bytes).unwrap_or(usize::MAX).min(SIZED_UP_TO),
        )
    }

    /// A builder with room for about `bytes` of zone text (none for 0). The room is made
    /// before the apex's node: growing its buffers after would free their first, small
    /// allocations among the zone's data in glibc's heap (a hole a zone, at a start of
    /// many small zones).
    fn with_room(origin: &Dname, bytes: usize) -> ZoneBuilder {
        let mut main = Space::new(0, Some(origin.label_count()));
        let mut builder_room = (0, 0, 0);
        if bytes > 0 {
            // About 30 bytes of text a record, about 10 of RDATA and 20 of owner names a
            // node in a small hosting zone; a little more room than that.
            main.reserve(bytes / 40 + 4, bytes / 2 + 32);
            builder_room = (bytes / 24 + 4, bytes / 2 + 16, bytes / 24 + 4);
        }
        let hash = crate::hash::name_hash(origin);
        main.owners.create(origin, hash, NO_NODE, false);
        let (records, rdata, lines) = builder_room;
        let mut builder = ZoneBuilder {
            origin: origin.to_name(),
            main,
            nsec3: Space::new(NSEC3_SPACE, None),
            records: Vec::with_capacity(records),
            rdata: Vec::with_capacity(rdata),
            lines: Lines::default(),
            report: Report::default(),
            ahead: Ahead::new(0),
        };
        builder.lines.reserve(lines);
        builder
    }

    /// A builder for a zone arriving by transfer: [`ZoneBuilder::work_ahead`] encodes
    /// what it can while the rest arrives.
    pub fn for_transfer(origin: &Dname) -> ZoneBuilder {
        ZoneBuilder { ahead: Ahead::new(Ahead::BATCH), ..ZoneBuilder::new(origin) }
    }

    /// As [`ZoneBuilder::for_transfer`], working ahead every `batch` records (tests).
    #[cfg(test)]
    pub(crate) fn working_ahead_every(origin: &Dname, batch: usize) -> ZoneBuilder {
        ZoneBuilder { ahead: Ahead::new(batch), ..ZoneBuilder::new(origin) }
    }

    /// The report so far (issues found while adding).
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Adds one record. Records outside the zone are ignored with a warning (RFC 1035
    /// §5.2 allows only data for names in the zone); meta-types are errors. A TTL with
    /// its top bit set counts as 0 (RFC 2181 §8, [`crate::records::rfc2181_ttl`]; the
    /// zone-file parser has applied it to [`ZoneBuilder::add_record`]'s records).
    pub fn add(&mut self, owner: &Dname, rtype: Rtype, ttl: u32, rdata: &[u8]) {
        let ttl = crate::records::rfc2181_ttl(ttl);
        self.add_from(owner, rtype, ttl, rdata, None, 0);
    }

    /// Adds a record read from a zone file, remembering its file and line for findings.
    pub fn add_record(&mut self, record: &Record<'_>) {
        let Record { owner, rtype, ttl, rdata, location, .. } = *record;
        let file = Some((location.file_number, location.file));
        self.add_from(owner, rtype, ttl, rdata, file, location.line);
    }

    /// [`ZoneBuilder::add`] of a record from `line` of `file`, if known. Inlined into
    /// both callers: the call itself cost a zone load 1% more instructions.
    #[inline(always)]
    fn add_from(
        &mut self,
        owner: &Dname,
        rtype: Rtype,
        ttl: u32,
        rdata: &[u8],
        file: Option<(u32, &Path)>,
        line: u32,
    ) {
        let refusal = if !owner.ends_with(&self.origin) {
            Some((Severity::Warning, "is outside the zone: ignored"))
        } else if rtype.is_meta() {
            Some((Severity::Error, "is a meta-type and cannot be in a zone"))
        } else if rdata.len() > usize::from(u16::MAX) {
            Some((Severity::Error, "has RDATA longer than 65535 bytes"))
        } else {
            None
        };
        if let Some((severity, message)) = refusal {
            self.refuse(severity, message, (owner, rtype), file.map(|f| (f.1, line)));
            return;
        }
        let len = rdata.len() as u16; // checked above
        let node = if in_nsec3_chain(&self.origin, owner, rtype, rdata) {
            self.nsec3.node_for(owner, &mut self.records)
        } else {
            self.main.node_for(owner, &mut self.records)
        };
        let rdata_at = self.rdata.len();
        self.rdata.extend_from_slice(rdata);
        self.records.push(Pending { rdata_at, node, ttl, target: NO_NODE, len, rtype });
        self.lines.push(file, line);
    }

    /// Notes a record that is not added: a warning for one outside the zone (counted as
    /// ignored), an error otherwise.
    #[cold]
    #[inline(never)]
    fn refuse(
        &mut self,
        severity: Severity,
        message: &str,
        (owner, rtype): (&Dname, Rtype),
        from: Option<(&Path, u32)>,
    ) {
        if severity == Severity::Warning {
            self.report.ignored += 1;
        }
        let at = || from.map(|(file, line)| Position::of_line(file, line));
        self.report.push_at(severity, at, Some(owner), Some(rtype), message);
    }

    /// Groups, checks and encodes everything, then adjusts: the finished snapshot, or the
    /// report listing the errors that make the zone unusable.
    pub fn finish(mut self) -> Result<(ZoneContents, Report), Error> {
        self.main.resolve(&mut self.records);
        self.nsec3.resolve(&mut self.records);
        self.resolve_targets();
        let lens = (self.main.owners.nodes.len(), self.nsec3.owners.nodes.len());
        self.ahead.give_up_nodes(self.records.get(self.ahead.done..).unwrap_or(&[]));
        if self.ahead.must_restore() {
            self.compact(self.ahead.done);
        }
        let groups = Groups::new(&self.records, lens, |p| self.ahead.is_encoded(p.node));
        let mut encoder = Encoder::new(&self.records, &self.rdata, &self.lines, &mut self.report);
        let (nodes, checks) =
            table::main_nodes(&mut encoder, &self.main.owners, &groups, &mut self.ahead);
        let chain = encoder.nsec3_chain(&self.nsec3.owners, &groups);
        drop(encoder);
        let firsts = self.lines.has_files().then(|| first_records(&self.records, lens.0));
        drop((groups, self.records, self.rdata, self.ahead));
        let index = hinted(self.main.owners.index, &nodes);
        let mut contents = ZoneContents {
            origin: self.origin.clone(),
            // A name has at most 127 labels.
            origin_labels: self.origin.label_count() as u8,
            nodes,
            free: None,
            index,
            nsec3: chain.map(Box::new),
            nsec3_covers: false,
            apex_wildcard_nsec3: u32::MAX,
            order: None,
            denial: Denial::Unsigned,
            serial: 0,
            negative_ttl: 0,
            negative_soa: None,
            record_count: self.report.records,
            history: None,
        };
        adjust::zone_wide(&mut contents); // the table set the rest (`adjust::full`)
        let lines = &self.lines;
        let locate = |id: NodeId| match firsts.as_ref().and_then(|f| f.get(id as usize)) {
            Some(&first) if first != u32::MAX => lines.position(first),
            _ => lines.first_file(),
        };
        check::zone(&contents, &checks, &mut self.report, &locate);
        self.report.signed = contents.denial != Denial::Unsigned;
        if self.report.has_errors() {
            return Err(Error::Semantic(Box::new(self.report)));
        }
        Ok((contents, self.report))
    }

    /// Points each NS/MX/SRV/SVCB/HTTPS/CNAME record at the node of its target name,
    /// creating phantom nodes for in-zone targets that hold no data yet: the records
    /// whose target was unknown when taken ahead, then those not taken, in order.
    fn resolve_targets(&mut self) {
        let ZoneBuilder { origin, main, records, rdata, ahead, .. } = self;
        let left = ahead.unresolved.iter().map(|&i| i as usize).chain(ahead.done..records.len());
        for i in left {
            let Some(rec) = records.get_mut(i) else { continue };
            if rec.node & NSEC3_SPACE != 0 || !has_targets(rec.rtype) {
                continue;
            }
            rec.target = target_of(origin, &mut main.owners, rdata, rec);
        }
    }
}

/// The first record of each of the first `len` main-space nodes (the earliest added),
/// `u32::MAX` for a node without records: where findings about the node go.
fn first_records(records: &[Pending], len: usize) -> Vec<u32> {
    let mut firsts = vec![u32::MAX; len];
    for (i, p) in (0u32..).zip(records).filter(|(_, p)| p.node & NSEC3_SPACE == 0) {
        if let Some(first) = firsts.get_mut(p.node as usize).filter(|f| **f == u32::MAX) {
            *first = i;
        }
    }
    firsts
}

/// The node of `rec`'s target, a phantom one for an in-zone name without a node.
fn target_of(origin: &Name, owners: &mut space::Owners, rdata: &[u8], rec: &Pending) -> NodeId {
    match target_known(origin, rdata, rec) {
        Ok(node) => node,
        Err(target) => owners.target_node(target),
    }
}

/// `rec`'s target where no lookup is needed: `NO_NODE` for a record without one or out
/// of the zone, the owner itself for SVCB/HTTPS "."; else the in-zone name to look up.
fn target_known<'d>(origin: &Name, rdata: &'d [u8], rec: &Pending) -> Result<NodeId, &'d Dname> {
    let data = rdata.get(rec.rdata_at..rec.rdata_at + usize::from(rec.len)).unwrap_or(&[]);
    let Some(target) = target_name(rec.rtype, data) else { return Ok(NO_NODE) };
    if target.is_root() && matches!(rec.rtype, Rtype::SVCB | Rtype::HTTPS) {
        // RFC 9460 §2.5.2: "." in ServiceMode is the owner itself.
        Ok(rec.node)
    } else if !target.ends_with(origin) {
        Ok(NO_NODE)
    } else {
        Err(target)
    }
}

/// The finished index, each entry hinting at its node's data (see
/// [`NameIndex`](crate::index::NameIndex)).
fn hinted(index: IndexBuilder, nodes: &ChunkVec<Node>) -> crate::index::NameIndex {
    let node = |id: u32| nodes.get(id as usize);
    index.finish(
        |id| node(id).map_or(0, Node::data_address),
        |id| {
            if let Some(n) = node(id) {
                crate::index::prefetch(n);
            }
        },
    )
}
