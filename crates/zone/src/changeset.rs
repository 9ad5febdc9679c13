//! Changesets — records removed and added, as IXFR and dynamic UPDATE produce them — and
//! applying them copy-on-write to a snapshot.
//!
//! [`ZoneContents::apply`] returns a new snapshot that shares every untouched node chunk,
//! index chunk and node blob with the old one; only the nodes an edit reaches are
//! re-encoded, and the adjust pass is redone only where the change reaches (a cut or DNAME
//! appearing above existing names is the one case that recomputes every node's flags).
//! The old snapshot is never modified, so readers keep answering from it until the new
//! one is published.

use std::collections::{HashMap, HashSet};

use tern_wire::{Dname, Name, Rtype};

use crate::adjust;
use crate::contents::{Denial, ZoneContents, APEX};
use crate::error::Error;
use crate::hash::{name_hash, NameTag, SuffixHashes};
use crate::node::{self, has_targets, Flags, Node, NodeId, RrsetData, NO_NODE};
use crate::records::{canonical_eq, covered_type, in_nsec3_chain, rfc2181_ttl, target_name};
use crate::report::Report;

/// One record of a changeset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordData {
    /// Owner name.
    pub owner: Name,
    /// Type.
    pub rtype: Rtype,
    /// TTL.
    pub ttl: u32,
    /// RDATA in uncompressed wire form.
    pub rdata: Vec<u8>,
}

/// One change of a zone: the SOA it starts from and the SOA it leads to, records to
/// remove, then records to add — what one IXFR difference sequence carries (RFC 1995 §4)
/// and what the history and journal keep.
///
/// Without `soa_from` and `soa_to` a changeset is a plain edit that leaves the SOA alone
/// (or replaces it as a record among `removed` and `added`); with them, [`apply`] first
/// checks that the zone is at `soa_from`'s serial (else
/// [`ChangesetError::WrongStart`]) and replaces the SOA.
///
/// [`apply`]: ZoneContents::apply
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changeset {
    /// The SOA the change starts from.
    pub soa_from: Option<RecordData>,
    /// The SOA the change leads to.
    pub soa_to: Option<RecordData>,
    /// Records removed.
    pub removed: Vec<RecordData>,
    /// Records added.
    pub added: Vec<RecordData>,
}

/// Why a changeset does not apply. [`WrongStart`](Self::WrongStart) and
/// [`Mismatch`](Self::Mismatch) mean the changeset was made for another version of the
/// zone: a secondary asks for a full transfer instead. [`Invalid`](Self::Invalid) means
/// the change itself is unacceptable: refuse it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangesetError {
    /// The zone is not at the serial the change starts from.
    WrongStart {
        /// The zone's serial.
        zone: u32,
        /// The serial the changeset starts from.
        from: u32,
    },
    /// A record to remove is not in the zone, or one to add already is (RFC 1995 §5).
    Mismatch(String),
    /// A record outside the zone, or a change the zone cannot hold.
    Invalid(String),
}

impl ChangesetError {
    /// True when a full transfer may succeed where this change failed.
    pub fn wants_full_transfer(&self) -> bool {
        matches!(self, ChangesetError::WrongStart { .. } | ChangesetError::Mismatch(_))
    }
}

impl std::fmt::Display for ChangesetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChangesetError::WrongStart { zone, from } => {
                write!(f, "it starts from serial {from}, the zone is at {zone}")
            }
            ChangesetError::Mismatch(m) | ChangesetError::Invalid(m) => f.write_str(m),
        }
    }
}

impl Changeset {
    /// An empty change from `soa_from` to `soa_to`.
    pub fn between(soa_from: RecordData, soa_to: RecordData) -> Changeset {
        Changeset { soa_from: Some(soa_from), soa_to: Some(soa_to), ..Changeset::default() }
    }

    /// The serial the change starts from, if it has SOAs.
    pub fn from_serial(&self) -> Option<u32> {
        self.soa_from.as_ref().and_then(RecordData::soa_serial)
    }

    /// The serial the change leads to, if it has SOAs.
    pub fn to_serial(&self) -> Option<u32> {
        self.soa_to.as_ref().and_then(RecordData::soa_serial)
    }

    /// Records removed, the starting SOA first.
    pub fn all_removed(&self) -> impl Iterator<Item = &RecordData> {
        self.soa_from.iter().chain(&self.removed)
    }

    /// Records added, the new SOA first.
    pub fn all_added(&self) -> impl Iterator<Item = &RecordData> {
        self.soa_to.iter().chain(&self.added)
    }

    /// Records it removes and adds, SOAs included.
    pub fn len(&self) -> usize {
        self.all_removed().count() + self.all_added().count()
    }

    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes it takes in memory, about (names, RDATA and per-record overhead): what the
    /// history's byte bound counts.
    pub fn size(&self) -> usize {
        self.all_removed().chain(self.all_added()).map(RecordData::size).sum()
    }
}

impl RecordData {
    /// The serial of an SOA record (`None` for other types or short RDATA).
    pub fn soa_serial(&self) -> Option<u32> {
        if self.rtype != Rtype::SOA {
            return None;
        }
        crate::records::soa_serial(&self.rdata)
    }

    /// Bytes it takes in memory, about.
    pub fn size(&self) -> usize {
        std::mem::size_of::<RecordData>() + self.owner.len() + self.rdata.len()
    }
}

/// The edits of one owner.
#[derive(Debug, Default)]
struct OwnerEdit<'c> {
    removed: Vec<&'c RecordData>,
    added: Vec<&'c RecordData>,
}

impl ZoneContents {
    /// Applies `changes` and returns the new snapshot. Removing a record that is not in
    /// the zone, or adding one that already is, is an error (the zone and the changeset
    /// disagree, RFC 1995 §5), as are semantic errors in the nodes the change reaches.
    pub fn apply(&self, changes: &Changeset) -> Result<(ZoneContents, Report), Error> {
        let mut zone = self.clone();
        let report = zone.apply_in_place(changes)?;
        Ok((zone, report))
    }

    /// Applies `changes` to this version itself, as [`ZoneContents::apply`] does to a
    /// copy: chunks this version shares with others are copied once, those it owns are
    /// changed where they are — so a batch of changes applied in turn to one version
    /// costs what its changes touch, not a copy per change. On an error the version may
    /// be half changed and must be dropped (a [`Error::Changeset`] `WrongStart` leaves it
    /// as it was).
    pub fn apply_in_place(&mut self, changes: &Changeset) -> Result<Report, Error> {
        if let Some(from) = changes.from_serial() {
            if from != self.serial {
                return Err(Error::Changeset(ChangesetError::WrongStart {
                    zone: self.serial,
                    from,
                }));
            }
        }
        let mut report = Report::default();
        let mut edit = Apply {
            touched: Vec::new(),
            released: Vec::new(),
            chain_edits: Vec::new(),
            cuts_moved: false,
        };
        for (owner, owner_edit) in group(self.origin(), changes)? {
            if let Some(first) = owner_edit.added.first().or(owner_edit.removed.first()) {
                if in_nsec3_chain(self.origin(), owner, first.rtype, &first.rdata) {
                    edit.chain(self, owner, &owner_edit)?;
                    continue;
                }
            }
            edit.node(self, owner, &owner_edit)?;
        }
        self.record_count = (self.record_count + changes.all_added().count())
            .saturating_sub(changes.all_removed().count());
        edit.adjust(self);
        for &id in &edit.touched {
            crate::check::changed_node(self, id, &mut report);
        }
        if report.has_errors() {
            return Err(Error::Semantic(Box::new(report)));
        }
        edit.reclaim(self);
        Ok(report)
    }
}

/// Owners a changeset may have before [`group`] finds them through a hash map; up to
/// this many, a scan of the owners so far is cheaper (a dynamic update touches one or
/// two names).
const SMALL_OWNERS: usize = 8;

/// Groups a changeset by owner (case-insensitively), in the order owners first appear,
/// checking every owner is in the zone. (A hash map, not a sorted one, once there are
/// more than [`SMALL_OWNERS`]: comparing names in canonical order cost a 10,000-record
/// change a fifth of its time.)
fn group<'c>(
    origin: &Dname,
    changes: &'c Changeset,
) -> Result<Vec<(&'c Name, OwnerEdit<'c>)>, Error> {
    let mut owners: Vec<(&'c Name, OwnerEdit<'c>)> = Vec::new();
    let mut places: Option<HashMap<&'c Name, usize>> = None;
    let removed = changes.all_removed().map(|r| (r, true));
    for (record, removing) in removed.chain(changes.all_added().map(|r| (r, false))) {
        if !record.owner.ends_with(origin) {
            return Err(changeset_error(record, "is outside the zone", ChangesetError::Invalid));
        }
        let place = place_of(&mut owners, &mut places, &record.owner);
        let Some((_, entry)) = owners.get_mut(place) else { continue };
        if removing {
            entry.removed.push(record);
        } else {
            entry.added.push(record);
        }
    }
    Ok(owners)
}

/// The place of `owner` among `owners`, appended when new: found by a scan while there
/// are at most [`SMALL_OWNERS`], then through `places` (made from `owners` then).
fn place_of<'c>(
    owners: &mut Vec<(&'c Name, OwnerEdit<'c>)>,
    places: &mut Option<HashMap<&'c Name, usize>>,
    owner: &'c Name,
) -> usize {
    if let Some(places) = places {
        return *places.entry(owner).or_insert_with(|| {
            owners.push((owner, OwnerEdit::default()));
            owners.len() - 1
        });
    }
    if let Some(place) = owners.iter().position(|(o, _)| *o == owner) {
        return place;
    }
    owners.push((owner, OwnerEdit::default()));
    if owners.len() > SMALL_OWNERS {
        *places = Some(owners.iter().enumerate().map(|(i, (o, _))| (*o, i)).collect());
    }
    owners.len() - 1
}

fn changeset_error(record: &RecordData, what: &str, kind: fn(String) -> ChangesetError) -> Error {
    let rdata = tern_wire::rdata::to_text(record.rtype, &record.rdata);
    Error::Changeset(kind(format!("{} {} {rdata} {what}", record.owner, record.rtype)))
}

/// State of one `apply`.
struct Apply {
    /// Main-tree nodes whose data or place in the tree changed.
    touched: Vec<NodeId>,
    /// Nodes that lost their last reference as a target.
    released: Vec<NodeId>,
    /// NSEC3 nodes edited, each with whether it held records before.
    chain_edits: Vec<(u32, bool)>,
    cuts_moved: bool,
}

impl Apply {
    /// Edits one owner of the main tree.
    fn node(
        &mut self,
        zone: &mut ZoneContents,
        owner: &Dname,
        edit: &OwnerEdit<'_>,
    ) -> Result<(), Error> {
        let hash = name_hash(owner);
        let id = match zone.find_hashed(owner, hash) {
            Some(id) => id,
            None => new_node(zone, owner, hash, Flags::PHANTOM),
        };
        let Some(node) = zone.node(id) else { return Ok(()) };
        let before = node.flags;
        let mut rrsets: Vec<RrsetData> =
            node.rrsets().map(|r| RrsetData::from_stored(&r)).collect();
        let before_targets = edited_targets(&rrsets, edit);
        edit_rrsets(&mut rrsets, edit)?;
        for rrset in rrsets.iter_mut().filter(|r| has_targets(r.rtype)) {
            rrset.targets =
                rrset.rdatas.iter().map(|rd| target_of(zone, owner, rrset.rtype, rd)).collect();
        }
        recount(zone, before_targets, edited_targets(&rrsets, edit), &mut self.released);
        rrsets.sort_by_key(|r| (r.rdatas.is_empty(), r.rtype.0));
        let data = node::encode(owner, &rrsets);
        if let Some(node) = zone.nodes.get_mut(id as usize) {
            node.set_data(data);
            zone.index.set_hint(hash, id, node.data_address());
        }
        link_or_unlink(zone, id, &mut self.touched);
        let after = zone.node(id).map(|n| adjust::local_flags(n, id)).unwrap_or_default();
        let cut = Flags::DELEGATION | Flags::DNAME;
        if before.intersects(cut) != after.intersects(cut)
            && zone.node(id).is_some_and(|n| n.children > 0)
        {
            self.cuts_moved = true;
        }
        self.touched.push(id);
        Ok(())
    }

    /// Edits one owner of the NSEC3 chain.
    fn chain(
        &mut self,
        zone: &mut ZoneContents,
        owner: &Dname,
        edit: &OwnerEdit<'_>,
    ) -> Result<(), Error> {
        let Some(chain) = zone.nsec3.as_mut() else {
            return Err(Error::Changeset(ChangesetError::Invalid(format!(
                "{owner}: NSEC3 records need an NSEC3-signed zone"
            ))));
        };
        let current = chain.find_owner(owner).and_then(|id| chain.node(id));
        let was_live = current.is_some_and(|n| !n.is_empty());
        let mut rrsets: Vec<RrsetData> = current
            .map(|n| n.rrsets().map(|r| RrsetData::from_stored(&r)).collect())
            .unwrap_or_default();
        edit_rrsets(&mut rrsets, edit)?;
        let id = chain.put(owner, node::encode(owner, &rrsets));
        self.chain_edits.push((id, was_live));
        Ok(())
    }

    /// Reclaims the nodes the change left unused: a phantom (no data, no children) that
    /// no record names as its target. Its index entry goes and its id joins the free
    /// list. Done last, once the adjust pass has taken every such node out of the
    /// tree, the wildcard links and the canonical order, so nothing refers to it.
    fn reclaim(&mut self, zone: &mut ZoneContents) {
        for &id in self.touched.iter().chain(&self.released) {
            let Some(node) = zone.node(id) else { continue };
            let unused = node.flags.contains(Flags::PHANTOM)
                && node.refs == 0
                && node.children == 0
                && !node.is_vacant()
                && node.is_empty();
            if id == APEX || !unused {
                continue;
            }
            zone.index.remove(name_hash(node.owner()), id);
            zone.nodes.set(id as usize, Node::vacant());
            zone.free.get_or_insert_default().push(id);
        }
    }

    /// Redoes the adjust pass where the change reaches: flags and wildcard links of the
    /// touched nodes, then the denial structures, relinked around the names that came
    /// and went.
    fn adjust(&mut self, zone: &mut ZoneContents) {
        let reordered = zone.nsec3.as_mut().is_some_and(|chain| chain.reorder(&self.chain_edits));
        let denial_before = zone.denial;
        if self.cuts_moved {
            adjust::full(zone);
            return;
        }
        let mut ids = self.touched.clone();
        ids.sort_unstable_by_key(|&id| (zone.node(id).map_or(0, |n| n.owner().label_count()), id));
        ids.dedup();
        for &id in &ids {
            adjust::node_flags(zone, id);
        }
        adjust::wildcard_links(zone, &ids);
        // The facts come from the apex and the NSEC3 chain: a change elsewhere keeps them.
        if ids.contains(&APEX) || !self.chain_edits.is_empty() || reordered {
            adjust::zone_facts(zone);
        }
        if zone.denial != denial_before {
            adjust::full(zone);
        } else if zone.denial == Denial::Nsec {
            adjust::relink_order(zone, &ids);
        } else if zone.denial == Denial::Nsec3 {
            adjust::nsec3_link(zone, &ids);
            if reordered {
                adjust::apex_wildcard_link(zone);
            }
        }
    }
}

/// Applies one owner's removals, then additions, to its RRsets.
fn edit_rrsets(rrsets: &mut Vec<RrsetData>, edit: &OwnerEdit<'_>) -> Result<(), Error> {
    for_each_list(&edit.removed, |key, records| remove(rrsets, key, records))?;
    for_each_list(&edit.added, |key, records| add(rrsets, key, records))?;
    rrsets.retain(|r| !r.rdatas.is_empty() || !r.sigs.is_empty());
    // A node counts an RRset's records in 16 bits (as the builder refuses larger ones).
    let limit = usize::from(u16::MAX);
    if let Some(set) = rrsets.iter().find(|r| r.rdatas.len() > limit || r.sigs.len() > limit) {
        return Err(Error::Changeset(ChangesetError::Invalid(format!(
            "the {} RRset would hold more than {limit} records",
            set.rtype
        ))));
    }
    Ok(())
}

/// Lists of up to this many records are searched record by record; longer ones
/// through a hash set of their canonical forms, so a change of n records to one RRset
/// costs O(n), not O(n²).
const SMALL: usize = 16;

/// Which list of which RRset a record edits: the RRset's type, and whether it is one of
/// its signatures.
type ListKey = (Rtype, bool);

/// Calls `edit` with each list `records` edit and its records, as [`by_list`] groups
/// them; without grouping them when they all edit one list (a dynamic update's
/// records, most often).
fn for_each_list<'r>(
    records: &[&'r RecordData],
    mut edit: impl FnMut(ListKey, &[&'r RecordData]) -> Result<(), Error>,
) -> Result<(), Error> {
    let Some(&first) = records.first() else { return Ok(()) };
    let key = edit_key(first);
    if records.iter().all(|&r| edit_key(r) == key) {
        return edit(key, records);
    }
    by_list(records).into_iter().try_for_each(|(key, list)| edit(key, &list))
}

/// Records grouped by the list they edit, in order within each group.
fn by_list<'r>(records: &[&'r RecordData]) -> Vec<(ListKey, Vec<&'r RecordData>)> {
    let mut groups: Vec<(ListKey, Vec<&RecordData>)> = Vec::new();
    for &record in records {
        let key = edit_key(record);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(record),
            None => groups.push((key, vec![record])),
        }
    }
    groups
}

/// A record's RDATA in canonical form (RFC 4034 §6.2), as a hash key.
fn canonical(rtype: Rtype, rdata: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rdata.len());
    match tern_wire::rdata::canonical_wire(rtype, rdata, &mut out) {
        Ok(()) => out,
        Err(_) => rdata.to_vec(),
    }
}

/// Removes `records` from one list; each must be there.
fn remove(
    rrsets: &mut [RrsetData],
    (rtype, is_sig): ListKey,
    records: &[&RecordData],
) -> Result<(), Error> {
    let missing = |record: &RecordData| {
        changeset_error(
            record,
            "cannot be removed: it is not in the zone",
            ChangesetError::Mismatch,
        )
    };
    let list = rrsets.iter_mut().find(|r| r.rtype == rtype).map(|r| {
        if is_sig {
            &mut r.sigs
        } else {
            &mut r.rdatas
        }
    });
    let (Some(list), Some(first)) = (list, records.first()) else {
        return records.first().map_or(Ok(()), |r| Err(missing(r)));
    };
    let list_type = first.rtype;
    if records.len() <= SMALL {
        for record in records {
            let pos = list.iter().position(|rd| canonical_eq(list_type, rd, &record.rdata));
            list.remove(pos.ok_or_else(|| missing(record))?);
        }
        return Ok(());
    }
    let mut wanted: HashMap<Vec<u8>, usize> = HashMap::with_capacity(records.len());
    for record in records {
        *wanted.entry(canonical(list_type, &record.rdata)).or_default() += 1;
    }
    list.retain(|rd| match wanted.get_mut(&canonical(list_type, rd)) {
        Some(left) if *left > 0 => {
            *left -= 1;
            false
        }
        _ => true,
    });
    match records
        .iter()
        .find(|r| wanted.get(&canonical(list_type, &r.rdata)).is_some_and(|&n| n > 0))
    {
        Some(record) => Err(missing(record)),
        None => Ok(()),
    }
}

/// Adds `records` to one list (making its RRset if needed); none may be there already.
fn add(
    rrsets: &mut Vec<RrsetData>,
    (rtype, is_sig): ListKey,
    records: &[&RecordData],
) -> Result<(), Error> {
    let Some(first) = records.first() else { return Ok(()) };
    let index = match rrsets.iter().position(|r| r.rtype == rtype) {
        Some(i) => i,
        None => {
            rrsets.push(RrsetData {
                rtype,
                ttl: rfc2181_ttl(first.ttl),
                sig_ttl: rfc2181_ttl(first.ttl),
                ..RrsetData::default()
            });
            rrsets.len() - 1
        }
    };
    let Some(set) = rrsets.get_mut(index) else { return Ok(()) };
    let (list, ttl) =
        if is_sig { (&mut set.sigs, &mut set.sig_ttl) } else { (&mut set.rdatas, &mut set.ttl) };
    let list_type = first.rtype;
    let mut present: Option<HashSet<Vec<u8>>> = (list.len() + records.len() > SMALL)
        .then(|| list.iter().map(|rd| canonical(list_type, rd)).collect());
    for record in records {
        let duplicate = match &mut present {
            Some(set) => !set.insert(canonical(list_type, &record.rdata)),
            None => list.iter().any(|rd| canonical_eq(list_type, rd, &record.rdata)),
        };
        if duplicate {
            let what = "cannot be added: it is already in the zone";
            return Err(changeset_error(record, what, ChangesetError::Mismatch));
        }
        list.push(record.rdata.clone());
        // RFC 2136 §3.4.2.2: the RRset takes the TTL of the record last added (one
        // with the top bit set counting as 0, RFC 2181 §8: a journal written before
        // every way in applied it may hold one).
        *ttl = rfc2181_ttl(record.ttl);
    }
    Ok(())
}

/// The RRset a record edits: its type, or for an RRSIG the type it covers.
fn edit_key(record: &RecordData) -> (Rtype, bool) {
    match (record.rtype, covered_type(&record.rdata)) {
        (Rtype::RRSIG, Some(covered)) => (covered, true),
        (rtype, _) => (rtype, false),
    }
}

/// The node a record's target name refers to (a phantom is made for an in-zone name
/// without a node).
fn target_of(zone: &mut ZoneContents, owner: &Dname, rtype: Rtype, rdata: &[u8]) -> NodeId {
    let Some(target) = target_name(rtype, rdata) else { return NO_NODE };
    let target = if target.is_root() && matches!(rtype, Rtype::SVCB | Rtype::HTTPS) {
        owner
    } else {
        target
    };
    if !target.ends_with(zone.origin()) {
        return NO_NODE;
    }
    let hash = name_hash(target);
    match zone.find_hashed(target, hash) {
        Some(id) => id,
        None => new_node(zone, target, hash, Flags::PHANTOM),
    }
}

/// A vacant node's id to take, if the version has one; the list goes with its last id.
fn vacant(zone: &mut ZoneContents) -> Option<NodeId> {
    let free = zone.free.as_mut()?;
    let id = free.pop();
    if free.len() == 0 {
        zone.free = None;
    }
    id
}

/// Makes a node without data and indexes it (`hash` is `owner`'s [`name_hash`]): in the
/// place of a reclaimed node when there is one, else at the end of the table.
fn new_node(zone: &mut ZoneContents, owner: &Dname, hash: NameTag, flags: Flags) -> NodeId {
    let mut node = Node::new(node::encode(owner, &[]));
    node.flags = flags;
    let hint = node.data_address();
    let id = match vacant(zone) {
        Some(id) => {
            zone.nodes.set(id as usize, node);
            id
        }
        None => {
            zone.nodes.push(node);
            zone.nodes.len() as NodeId - 1
        }
    };
    zone.index.insert(hash, id, hint);
    id
}

/// The target nodes of the records of `rrsets` whose type `edit` changes, sorted
/// (`NO_NODE` left out). An RRset of another type keeps its records, and their targets
/// are found again as the same nodes (a named node is never reclaimed), so its
/// references do not change.
fn edited_targets(rrsets: &[RrsetData], edit: &OwnerEdit<'_>) -> Vec<NodeId> {
    // An RRSIG edits the RRset of the type it covers (read only for RRSIGs).
    let edits = |r: &RecordData, rtype| {
        r.rtype == rtype || (r.rtype == Rtype::RRSIG && edit_key(r).0 == rtype)
    };
    let edited = |rtype: Rtype| edit.removed.iter().chain(&edit.added).any(|r| edits(r, rtype));
    let mut targets: Vec<NodeId> = rrsets
        .iter()
        .filter(|r| has_targets(r.rtype) && edited(r.rtype))
        .flat_map(|r| r.targets.iter().copied())
        .filter(|&t| t != NO_NODE)
        .collect();
    targets.sort_unstable();
    targets
}

/// Moves the reference counts ([`Node::refs`]) of one node's targets from `before` to
/// `after` (both sorted): a target in both keeps its count and its chunk. A node whose
/// count falls to zero goes to `released`. A count that reached
/// [`REFS_UNCOUNTED`](node::REFS_UNCOUNTED) stays there.
fn recount(
    zone: &mut ZoneContents,
    before: Vec<NodeId>,
    after: Vec<NodeId>,
    released: &mut Vec<NodeId>,
) {
    let (mut gone, mut came) = (before.into_iter().peekable(), after.into_iter().peekable());
    loop {
        let step: Option<(NodeId, bool)> = match (gone.peek(), came.peek()) {
            (Some(g), Some(c)) if g == c => {
                gone.next();
                came.next();
                continue;
            }
            (Some(&g), Some(&c)) if g < c => gone.next().map(|_| (g, false)),
            (Some(&g), None) => gone.next().map(|_| (g, false)),
            (_, Some(&c)) => came.next().map(|_| (c, true)),
            (None, None) => None,
        };
        let Some((id, up)) = step else { return };
        let Some(node) = zone.nodes.get_mut(id as usize) else { continue };
        if node.refs == node::REFS_UNCOUNTED {
            continue;
        }
        node.refs = if up { node.refs + 1 } else { node.refs.saturating_sub(1) };
        if node.refs == 0 {
            released.push(id);
        }
    }
}

/// Keeps the tree consistent after node `id` changed: a node that gained data joins the
/// tree (with any missing ancestors); a node left without data or children leaves it,
/// and so may its emptied ancestors. Every node whose links changed is added to `touched`.
fn link_or_unlink(zone: &mut ZoneContents, id: NodeId, touched: &mut Vec<NodeId>) {
    let Some(node) = zone.node(id) else { return };
    let (empty, phantom, children) =
        (node.is_empty(), node.flags.contains(Flags::PHANTOM), node.children);
    if id == APEX {
        return;
    }
    if !empty && phantom {
        link(zone, id, touched);
    } else if empty && !phantom && children == 0 {
        unlink(zone, id, touched);
    }
}

/// Joins node `id` to the tree under its closest existing ancestor, creating the empty
/// non-terminals between them.
fn link(zone: &mut ZoneContents, id: NodeId, touched: &mut Vec<NodeId>) {
    let Some(owner) = zone.node(id).map(|n| n.owner().to_name()) else { return };
    let hashes = SuffixHashes::of(&owner);
    let apex_labels = zone.origin_labels();
    let mut labels = hashes.labels() - 1;
    let mut parent = APEX;
    while labels > apex_labels {
        let name = hashes.suffix_name(&owner, labels);
        match zone.find_hashed(name, hashes.suffix(labels)) {
            Some(pid) if zone.node(pid).is_some_and(|n| !n.flags.contains(Flags::PHANTOM)) => {
                parent = pid;
                break;
            }
            _ => labels -= 1,
        }
    }
    for l in labels + 1..hashes.labels() {
        let name = hashes.suffix_name(&owner, l);
        let child = match zone.find_hashed(name, hashes.suffix(l)) {
            Some(existing) => existing,
            None => new_node(zone, name, hashes.suffix(l), Flags::empty()),
        };
        attach(zone, child, parent);
        touched.push(child);
        parent = child;
    }
    attach(zone, id, parent);
}

fn attach(zone: &mut ZoneContents, child: NodeId, parent: NodeId) {
    if let Some(n) = zone.nodes.get_mut(child as usize) {
        n.parent = parent;
        n.flags.set(Flags::PHANTOM, false);
    }
    if let Some(p) = zone.nodes.get_mut(parent as usize) {
        p.children += 1;
    }
}

/// Removes node `id` from the tree, then its parent if that is now an empty leaf. Each
/// becomes a phantom, still indexed until the change ends: then the ones no record names
/// as a target are reclaimed (`Apply::reclaim`).
fn unlink(zone: &mut ZoneContents, mut id: NodeId, touched: &mut Vec<NodeId>) {
    while id != APEX {
        let Some(n) = zone.nodes.get_mut(id as usize) else { return };
        let parent = n.parent;
        n.parent = NO_NODE;
        n.flags.set(Flags::PHANTOM, true);
        touched.push(id);
        let Some(p) = zone.nodes.get_mut(parent as usize) else { return };
        p.children = p.children.saturating_sub(1);
        if p.children > 0 || !p.is_empty() {
            return;
        }
        id = parent;
    }
}

#[cfg(test)]
mod group_tests {
    use super::*;

    fn record(owner: &str, last: u8) -> RecordData {
        let owner = owner.parse().unwrap_or_else(|_| Name::root());
        RecordData { owner, rtype: Rtype::A, ttl: 300, rdata: vec![192, 0, 2, last] }
    }

    /// What `group` gave with a hash map for every size: owners in first-appearance
    /// order, each with its records in order.
    fn reference(changes: &Changeset) -> Vec<(&Name, Vec<u8>, Vec<u8>)> {
        let mut owners: Vec<(&Name, Vec<u8>, Vec<u8>)> = Vec::new();
        let mut places: HashMap<&Name, usize> = HashMap::new();
        for (r, removing) in changes
            .removed
            .iter()
            .map(|r| (r, true))
            .chain(changes.added.iter().map(|r| (r, false)))
        {
            let place = *places.entry(&r.owner).or_insert_with(|| {
                owners.push((&r.owner, Vec::new(), Vec::new()));
                owners.len() - 1
            });
            let list = if removing { &mut owners[place].1 } else { &mut owners[place].2 };
            list.push(r.rdata[3]);
        }
        owners
    }

    #[test]
    fn small_and_large_groupings_agree_with_a_hash_map_case_insensitively() {
        let origin: Name = "example.".parse().unwrap();
        for owners in [0, 1, 2, SMALL_OWNERS, SMALL_OWNERS + 1, 3 * SMALL_OWNERS] {
            let mut changes = Changeset::default();
            for i in 0..(3 * owners) {
                // Every owner three times, spelled in three cases, interleaved.
                let spelled = match i / owners.max(1) {
                    0 => format!("h{}.example.", i % owners),
                    1 => format!("H{}.EXAMPLE.", i % owners),
                    _ => format!("h{}.Example.", (owners - 1 - i % owners)),
                };
                let list = if i % 2 == 0 { &mut changes.added } else { &mut changes.removed };
                list.push(record(&spelled, i as u8));
            }
            let grouped = group(&origin, &changes).unwrap();
            let got: Vec<(&Name, Vec<u8>, Vec<u8>)> = grouped
                .iter()
                .map(|(o, e)| {
                    let last = |l: &[&RecordData]| l.iter().map(|r| r.rdata[3]).collect();
                    (*o, last(&e.removed), last(&e.added))
                })
                .collect();
            assert_eq!(got, reference(&changes), "{owners} owners");
            assert_eq!(got.len(), owners);
        }
    }

    #[test]
    fn lists_are_edited_as_by_list_groups_them() {
        let a = |last| record("a.example.", last);
        let mut rrsig = record("a.example.", 9);
        rrsig.rtype = Rtype::RRSIG;
        rrsig.rdata = vec![0, 1, 8, 2, 0, 0, 0, 60]; // covers A
        let mut txt = record("a.example.", 7);
        txt.rtype = Rtype::TXT;
        let (one, two, three) = (a(1), a(2), a(3));
        let cases: [Vec<&RecordData>; 4] = [
            vec![],
            vec![&one],
            vec![&one, &two, &three],
            vec![&one, &txt, &rrsig, &two, &txt, &three],
        ];
        for records in cases {
            let mut seen: Vec<(ListKey, Vec<&RecordData>)> = Vec::new();
            let edited = for_each_list(&records, |key, list| {
                seen.push((key, list.to_vec()));
                Ok(())
            });
            assert!(edited.is_ok());
            assert_eq!(seen, by_list(&records), "{} records", records.len());
        }
    }

    #[test]
    fn an_owner_outside_the_zone_is_refused() {
        let origin: Name = "example.".parse().unwrap();
        let mut changes = Changeset::default();
        changes.added.push(record("a.example.", 1));
        changes.added.push(record("a.example.net.", 2));
        assert!(matches!(
            group(&origin, &changes),
            Err(Error::Changeset(ChangesetError::Invalid(_)))
        ));
    }
}
