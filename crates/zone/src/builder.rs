//! Building a zone snapshot from a stream of records (a zone file, a transfer, a test).
//!
//! Records are appended to one arena as they arrive (no per-record allocation); each
//! owner gets a node the first time it is seen, with any missing ancestors (empty
//! non-terminals) created above it, so node ids are in topological order (a parent's id is
//! below its children's). `finish` groups records into RRsets (duplicates dropped, TTLs
//! reconciled per RFC 2181 §5.2), resolves the target names of NS/MX/SRV/SVCB/CNAME records
//! to node references, encodes each node once, then runs the adjust pass and the semantic
//! checks.

use tern_wire::{Dname, Name, Rtype};

use crate::contents::{Denial, ZoneContents, APEX};
use crate::cow::ChunkVec;
use crate::error::Error;
use crate::hash::{NameTag, SuffixHashes};
use crate::index::NameIndex;
use crate::node::{has_targets, BlobWriter, Flags, Node, NodeId, RrsetHead, NO_NODE};
use crate::nsec3::{decode_hash_label, Nsec3Chain, Nsec3Hash, Nsec3Params};
use crate::records::{canonical_eq, covered_type, in_nsec3_chain, target_name};
use crate::report::Report;
use crate::{adjust, check};

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

/// Owners under construction: their names, parents and hash index.
#[derive(Debug)]
struct Space {
    names: Vec<u8>,
    nodes: Vec<BuildNode>,
    index: NameIndex,
}

#[derive(Debug, Clone, Copy)]
struct BuildNode {
    name_at: usize,
    name_len: u8,
    parent: NodeId,
    phantom: bool,
}

impl Space {
    fn new(expected: usize) -> Space {
        Space { names: Vec::new(), nodes: Vec::new(), index: NameIndex::with_capacity(expected) }
    }

    fn owner(&self, id: NodeId) -> &Dname {
        self.nodes
            .get(id as usize)
            .and_then(|n| self.names.get(n.name_at..n.name_at + usize::from(n.name_len)))
            .and_then(|w| Dname::from_wire(w).ok())
            .unwrap_or(Dname::ROOT)
    }

    fn find(&self, name: &Dname, hash: NameTag) -> Option<NodeId> {
        self.index.find(hash, |id| self.owner(id).eq_ignore_case(name))
    }

    fn create(&mut self, name: &Dname, hash: NameTag, parent: NodeId, phantom: bool) -> NodeId {
        let id = self.nodes.len() as NodeId;
        let name_at = self.names.len();
        self.names.extend_from_slice(name.as_wire());
        self.nodes.push(BuildNode { name_at, name_len: name.len() as u8, parent, phantom });
        self.index.insert(hash, id);
        id
    }
}

/// Collects records and builds a [`ZoneContents`].
#[derive(Debug)]
pub struct ZoneBuilder {
    origin: Name,
    origin_labels: usize,
    main: Space,
    nsec3: Space,
    records: Vec<Pending>,
    rdata: Vec<u8>,
    last: Option<u32>,
    report: Report,
}

impl ZoneBuilder {
    /// A builder for the zone at `origin`.
    pub fn new(origin: &Dname) -> ZoneBuilder {
        let mut main = Space::new(16);
        let hash = crate::hash::name_hash(origin);
        main.create(origin, hash, NO_NODE, false);
        ZoneBuilder {
            origin: origin.to_name(),
            origin_labels: origin.label_count(),
            main,
            nsec3: Space::new(16),
            records: Vec::new(),
            rdata: Vec::new(),
            last: None,
            report: Report::default(),
        }
    }

    /// The report so far (issues found while adding).
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Adds one record. Records outside the zone are ignored with a warning (RFC 1035
    /// §5.2 allows only data for names in the zone); meta-types are errors.
    pub fn add(&mut self, owner: &Dname, rtype: Rtype, ttl: u32, rdata: &[u8]) {
        if !owner.ends_with(&self.origin) {
            self.report.ignored += 1;
            self.report.warn(Some(owner), Some(rtype), "is outside the zone: ignored");
            return;
        }
        if rtype.is_meta() {
            self.report.error(Some(owner), Some(rtype), "is a meta-type and cannot be in a zone");
            return;
        }
        let Ok(len) = u16::try_from(rdata.len()) else {
            self.report.error(Some(owner), Some(rtype), "has RDATA longer than 65535 bytes");
            return;
        };
        let node = if in_nsec3_chain(&self.origin, owner, rtype, rdata) {
            self.nsec3_node(owner) | NSEC3_SPACE
        } else {
            self.main_node(owner)
        };
        let rdata_at = self.rdata.len();
        self.rdata.extend_from_slice(rdata);
        self.records.push(Pending { rdata_at, node, ttl, target: NO_NODE, len, rtype });
    }

    fn nsec3_node(&mut self, owner: &Dname) -> NodeId {
        let hash = crate::hash::name_hash(owner);
        match self.nsec3.find(owner, hash) {
            Some(id) => id,
            None => self.nsec3.create(owner, hash, NO_NODE, false),
        }
    }

    /// The node of `owner` in the main space, created with its missing ancestors.
    fn main_node(&mut self, owner: &Dname) -> NodeId {
        if let Some(id) = self.last {
            if self.main.owner(id).eq_ignore_case(owner) {
                return id;
            }
        }
        let hashes = SuffixHashes::of(owner);
        let id = match self.main.find(owner, hashes.full()) {
            Some(id) => id,
            None => self.create_with_ancestors(owner, &hashes),
        };
        self.last = Some(id);
        id
    }

    fn create_with_ancestors(&mut self, owner: &Dname, hashes: &SuffixHashes) -> NodeId {
        let total = hashes.labels();
        let mut labels = total - 1;
        let mut parent = APEX;
        while labels > self.origin_labels {
            if let Some(id) =
                self.main.find(hashes.suffix_name(owner, labels), hashes.suffix(labels))
            {
                parent = id;
                break;
            }
            labels -= 1;
        }
        for l in labels + 1..=total {
            parent =
                self.main.create(hashes.suffix_name(owner, l), hashes.suffix(l), parent, false);
        }
        parent
    }

    /// Groups, checks and encodes everything, then adjusts: the finished snapshot, or the
    /// report listing the errors that make the zone unusable.
    pub fn finish(mut self) -> Result<(ZoneContents, Report), Error> {
        // Stable and adaptive: records arrive mostly grouped by owner.
        self.records.sort_by_key(|r| r.node);
        self.resolve_targets();
        let nodes = self.encode_main();
        let chain = self.encode_nsec3();
        let mut contents = ZoneContents {
            origin: self.origin.clone(),
            nodes: ChunkVec::from_vec(nodes),
            index: self.main.index.fitted(),
            nsec3: None,
            nsec3_covers: false,
            apex_wildcard_nsec3: u32::MAX,
            order: None,
            denial: Denial::Unsigned,
            serial: 0,
            negative_ttl: 0,
            negative_soa: None,
            record_count: self.report.records,
        };
        contents.nsec3 = chain;
        adjust::full(&mut contents);
        check::zone(&contents, &mut self.report);
        self.report.signed = contents.denial != Denial::Unsigned;
        if self.report.has_errors() {
            return Err(Error::Semantic(Box::new(self.report)));
        }
        Ok((contents, self.report))
    }

    /// Points each NS/MX/SRV/SVCB/HTTPS/CNAME record at the node of its target name,
    /// creating phantom nodes for in-zone targets that hold no data yet.
    fn resolve_targets(&mut self) {
        for i in 0..self.records.len() {
            let Some(rec) = self.records.get(i).copied() else { break };
            if rec.node & NSEC3_SPACE != 0 || !has_targets(rec.rtype) {
                continue;
            }
            let rdata =
                self.rdata.get(rec.rdata_at..rec.rdata_at + usize::from(rec.len)).unwrap_or(&[]);
            let Some(target) = target_name(rec.rtype, rdata) else { continue };
            let target = if target.is_root() && matches!(rec.rtype, Rtype::SVCB | Rtype::HTTPS) {
                // RFC 9460 §2.5.2: "." in ServiceMode is the owner itself.
                self.main.owner(rec.node).to_name()
            } else {
                target.to_name()
            };
            let id = self.target_node(&target);
            if let Some(r) = self.records.get_mut(i) {
                r.target = id;
            }
        }
    }

    fn target_node(&mut self, target: &Dname) -> NodeId {
        if !target.ends_with(&self.origin) {
            return NO_NODE;
        }
        let hash = crate::hash::name_hash(target);
        match self.main.find(target, hash) {
            Some(id) => id,
            None => self.main.create(target, hash, NO_NODE, true),
        }
    }

    fn encode_main(&mut self) -> Vec<Node> {
        let mut nodes = Vec::with_capacity(self.main.nodes.len());
        let mut cursor = 0usize;
        for id in 0..self.main.nodes.len() as NodeId {
            let end = cursor
                + self
                    .records
                    .get(cursor..)
                    .map_or(0, |r| r.iter().take_while(|p| p.node == id).count());
            let mut group: Vec<Pending> = self.records.get(cursor..end).unwrap_or(&[]).to_vec();
            cursor = end;
            let owner = self.main.owner(id).to_name();
            let data = self.encode_node(&owner, &mut group);
            let mut node = Node::new(data);
            if let Some(b) = self.main.nodes.get(id as usize) {
                node.parent = b.parent;
                node.flags.set(Flags::PHANTOM, b.phantom);
            }
            nodes.push(node);
        }
        count_children(&mut nodes);
        nodes
    }

    fn encode_nsec3(&mut self) -> Option<Nsec3Chain> {
        let first_nsec3 = self.records.iter().position(|r| r.node & NSEC3_SPACE != 0)?;
        let mut entries: Vec<(Nsec3Hash, Node)> = Vec::with_capacity(self.nsec3.nodes.len());
        let mut params = None;
        let mut cursor = first_nsec3;
        for id in 0..self.nsec3.nodes.len() as NodeId {
            let tag = id | NSEC3_SPACE;
            let end = cursor
                + self
                    .records
                    .get(cursor..)
                    .map_or(0, |r| r.iter().take_while(|p| p.node == tag).count());
            let mut group: Vec<Pending> = self.records.get(cursor..end).unwrap_or(&[]).to_vec();
            cursor = end;
            let owner = self.nsec3.owner(id).to_name();
            let Some(hash) = owner.first_label().and_then(decode_hash_label) else { continue };
            if params.is_none() {
                params = group
                    .iter()
                    .find(|p| p.rtype == Rtype::NSEC3)
                    .and_then(|p| Nsec3Params::from_rdata(self.rdata_of(p)));
            }
            let data = self.encode_node(&owner, &mut group);
            entries.push((hash, Node::new(data)));
        }
        Some(Nsec3Chain::new(params?, entries))
    }

    fn rdata_of(&self, p: &Pending) -> &[u8] {
        self.rdata.get(p.rdata_at..p.rdata_at + usize::from(p.len)).unwrap_or(&[])
    }

    /// Encodes one node's records: RRsets in type order, each followed by its RRSIGs.
    fn encode_node(&mut self, owner: &Dname, group: &mut [Pending]) -> std::sync::Arc<[u8]> {
        group.sort_by_key(|p| rrset_key(p, self.rdata_of(p)));
        let mut writer = BlobWriter::new(owner);
        let mut rest: &[Pending] = group;
        while let Some(first) = rest.first() {
            let key = rrset_key(first, self.rdata_of(first)).0;
            let n = rest.iter().take_while(|p| rrset_key(p, self.rdata_of(p)).0 == key).count();
            let (set, tail) = rest.split_at(n.min(rest.len()));
            rest = tail;
            self.encode_rrset(owner, Rtype(key), set, &mut writer);
        }
        writer.finish()
    }

    /// Encodes the records and signatures of one type (`set` holds records first, then
    /// RRSIGs covering `rtype`).
    fn encode_rrset(
        &mut self,
        owner: &Dname,
        rtype: Rtype,
        set: &[Pending],
        writer: &mut BlobWriter,
    ) {
        let split = set.iter().position(|p| p.rtype == Rtype::RRSIG && rtype != Rtype::RRSIG);
        let (data, sigs) = set.split_at(split.unwrap_or(set.len()));
        let data = self.unique(owner, data);
        let sigs = self.unique(owner, sigs);
        let ttl = self.reconcile_ttl(owner, rtype, &data);
        let sig_ttl = sigs.iter().map(|p| p.ttl).min().unwrap_or(ttl);
        let (head_type, head_ttl) =
            if data.is_empty() { (Rtype::RRSIG, sig_ttl) } else { (rtype, ttl) };
        self.report.records += data.len() + sigs.len();
        let targets: Vec<NodeId> = data.iter().map(|p| p.target).collect();
        let head = RrsetHead { rtype: head_type, ttl: head_ttl, sig_ttl };
        let arena = &self.rdata;
        let slice =
            |p: &Pending| arena.get(p.rdata_at..p.rdata_at + usize::from(p.len)).unwrap_or(&[]);
        writer.rrset(head, data.iter().map(slice), &targets, sigs.iter().map(slice));
    }

    /// Drops duplicate records (RFC 2181 §5: an RRset has no duplicate RRs; names in RDATA
    /// compare case-insensitively in canonical form, RFC 4034 §6.3).
    fn unique(&mut self, owner: &Dname, records: &[Pending]) -> Vec<Pending> {
        let mut kept: Vec<Pending> = Vec::with_capacity(records.len());
        for p in records {
            let rdata = self.rdata_of(p);
            if kept.iter().any(|k| canonical_eq(p.rtype, self.rdata_of(k), rdata)) {
                self.report.ignored += 1;
                self.report.warn(Some(owner), Some(p.rtype), "duplicate record ignored");
                continue;
            }
            kept.push(*p);
        }
        kept
    }

    /// The RRset's TTL: the lowest of its records', with a warning when they differ
    /// (RFC 2181 §5.2).
    fn reconcile_ttl(&mut self, owner: &Dname, rtype: Rtype, data: &[Pending]) -> u32 {
        let min = data.iter().map(|p| p.ttl).min().unwrap_or(0);
        if data.iter().any(|p| p.ttl != min) {
            self.report.warn(
                Some(owner),
                Some(rtype),
                format!("records have different TTLs: using the lowest, {min}"),
            );
        }
        min
    }
}

/// Sets each node's child count from the parent links (phantoms are nobody's child).
fn count_children(nodes: &mut [Node]) {
    let parents: Vec<NodeId> = nodes
        .iter()
        .filter(|n| !n.flags.contains(Flags::PHANTOM) && n.parent != NO_NODE)
        .map(|n| n.parent)
        .collect();
    for parent in parents {
        if let Some(p) = nodes.get_mut(parent as usize) {
            p.children += 1;
        }
    }
}

/// Sort key putting each type's records first and the RRSIGs covering it right after.
fn rrset_key(p: &Pending, rdata: &[u8]) -> (u16, bool) {
    if p.rtype == Rtype::RRSIG {
        if let Some(covered) = covered_type(rdata) {
            return (covered.0, true);
        }
    }
    (p.rtype.0, false)
}
