//! The builder's owner names: one space for the zone's tree, one for the NSEC3 chain.
//!
//! A name seen for the first time needs a probe of the hash index, and on a big zone that
//! probe is a cache miss (about 200 ns here, 80% of the time spent adding a record). So
//! the lookup of a new owner waits for the next new owner: its index slot is prefetched
//! when it is first seen, the parser reads the following records meanwhile, and its
//! records carry [`DEFERRED`] until then. Records of one owner usually come together, so
//! nearly every lookup finds its slot in cache.

use tern_wire::{Dname, NameBuf};

use super::Pending;
use crate::contents::APEX;
use crate::hash::{NameTag, SuffixHashes};
use crate::index::IndexBuilder;
use crate::node::{NodeId, NO_NODE};

/// Node id of records whose owner is still to be looked up.
pub(super) const DEFERRED: u32 = (1 << 31) - 1;

/// One space of owners under construction, with the lookup of its newest owner deferred.
#[derive(Debug)]
pub(super) struct Space {
    pub owners: Owners,
    /// Bits or-ed into the node ids stored in records (tells the spaces apart).
    tag: u32,
    /// Labels of the zone's origin, when names get their missing ancestors created
    /// (the main space); `None` for a flat space (NSEC3 owners).
    origin_labels: Option<usize>,
    /// The owner of the records that came last, once looked up.
    last: Option<NodeId>,
    deferred: Deferred,
}

/// Owner names with their parents and hash index.
#[derive(Debug)]
pub(super) struct Owners {
    names: Vec<u8>,
    pub nodes: Vec<BuildNode>,
    pub index: IndexBuilder,
}

/// A node being built.
#[derive(Debug, Clone, Copy)]
pub(super) struct BuildNode {
    name_at: usize,
    name_len: u8,
    pub parent: NodeId,
    pub phantom: bool,
}

/// The owner whose lookup waits for the next new owner.
struct Deferred {
    active: bool,
    name: NameBuf,
    hashes: SuffixHashes,
    /// Index of its first record: from there on, its records carry `DEFERRED | tag`.
    first: usize,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred").field("active", &self.active).field("name", &self.name).finish()
    }
}

impl Space {
    /// A space whose ids carry `tag`; with `origin_labels`, a tree under the origin.
    pub fn new(tag: u32, origin_labels: Option<usize>) -> Space {
        Space {
            owners: Owners {
                names: Vec::new(),
                nodes: Vec::new(),
                index: IndexBuilder::with_capacity(16),
            },
            tag,
            origin_labels,
            last: None,
            deferred: Deferred {
                active: false,
                name: NameBuf::root(),
                hashes: SuffixHashes::root(),
                first: 0,
            },
        }
    }

    /// Makes room for `nodes` nodes whose names take `names` bytes.
    pub fn reserve(&mut self, nodes: usize, names: usize) {
        self.owners.nodes.reserve(nodes);
        self.owners.names.reserve(names);
    }

    /// The node value for the next record of `owner`, to be pushed onto `records`: its
    /// node id (with the space's tag), or `DEFERRED` with the tag until
    /// [`Space::resolve`].
    pub fn node_for(&mut self, owner: &Dname, records: &mut [Pending]) -> u32 {
        if self.deferred.active && self.deferred.name.eq_ignore_case(owner) {
            return DEFERRED | self.tag;
        }
        if let Some(id) = self.last.filter(|&id| self.owners.owner(id).eq_ignore_case(owner)) {
            return id | self.tag;
        }
        self.resolve(records);
        let deferred = &mut self.deferred;
        deferred.active = true;
        deferred.name.set(owner);
        deferred.hashes.refill(owner);
        deferred.first = records.len();
        self.owners.index.prefetch(deferred.hashes.full());
        DEFERRED | self.tag
    }

    /// The first record whose owner is still to be looked up (`usize::MAX`: none).
    #[inline]
    pub fn pending_from(&self) -> usize {
        if self.deferred.active {
            self.deferred.first
        } else {
            usize::MAX
        }
    }

    /// The records from `from` on now start at `to` (the builder dropped or restored
    /// records before them: see `ahead`).
    pub fn moved(&mut self, from: usize, to: usize) {
        if self.deferred.active {
            self.deferred.first = self.deferred.first - from + to;
        }
    }

    /// Looks up (or creates) the deferred owner and gives its records their node id.
    pub fn resolve(&mut self, records: &mut [Pending]) {
        if !std::mem::replace(&mut self.deferred.active, false) {
            return;
        }
        let Deferred { name, hashes, first, .. } = &self.deferred;
        let owners = &mut self.owners;
        let id = match owners.find(name, hashes.full()) {
            Some(id) => id,
            None => match self.origin_labels {
                Some(origin_labels) => owners.create_with_ancestors(name, hashes, origin_labels),
                None => owners.create(name, hashes.full(), NO_NODE, false),
            },
        };
        let first = *first;
        let (marker, node) = (DEFERRED | self.tag, id | self.tag);
        for record in records.get_mut(first..).unwrap_or(&mut []) {
            if record.node == marker {
                record.node = node;
            }
        }
        self.last = Some(id);
    }
}

impl Owners {
    /// The owner name of node `id` (the root if there is none).
    pub fn owner(&self, id: NodeId) -> &Dname {
        self.nodes
            .get(id as usize)
            .and_then(|n| self.names.get(n.name_at..n.name_at + usize::from(n.name_len)))
            .and_then(|w| Dname::from_wire(w).ok())
            .unwrap_or(Dname::ROOT)
    }

    /// True when node `id`'s owner is a wildcard (its first label is `*`, RFC 4592).
    pub fn is_wildcard(&self, id: NodeId) -> bool {
        let start = self.nodes.get(id as usize).map_or(usize::MAX, |n| n.name_at);
        self.names.get(start..start.saturating_add(2)) == Some(&[1, b'*'])
    }

    /// The hash under which `name` is looked up, its index slot prefetched: a lookup of
    /// many names ([`Owners::find`] with the tag) overlaps their cache misses.
    pub fn prefetch_name(&self, name: &Dname) -> NameTag {
        let tag = crate::hash::name_hash(name);
        self.index.prefetch(tag);
        tag
    }

    /// The node of `name` (whose hash is `hash`), if it has one.
    pub fn find(&self, name: &Dname, hash: NameTag) -> Option<NodeId> {
        self.index.find(hash, |id| self.owner(id).eq_ignore_case(name))
    }

    /// Adds a node (the caller knows the name is new).
    pub fn create(&mut self, name: &Dname, hash: NameTag, parent: NodeId, phantom: bool) -> NodeId {
        let id = self.nodes.len() as NodeId;
        let name_at = self.names.len();
        self.names.extend_from_slice(name.as_wire());
        self.nodes.push(BuildNode { name_at, name_len: name.len() as u8, parent, phantom });
        self.index.insert(hash, id);
        id
    }

    /// The node of the in-zone name `target`, a phantom one if it has none yet.
    pub fn target_node(&mut self, target: &Dname) -> NodeId {
        let hash = crate::hash::name_hash(target);
        match self.find(target, hash) {
            Some(id) => id,
            None => self.create(target, hash, NO_NODE, true),
        }
    }

    /// Creates `owner`'s node and the missing ancestors (empty non-terminals) between it
    /// and the closest existing one below the origin.
    fn create_with_ancestors(
        &mut self,
        owner: &Dname,
        hashes: &SuffixHashes,
        origin_labels: usize,
    ) -> NodeId {
        let total = hashes.labels();
        let mut labels = total - 1;
        let mut parent = APEX;
        while labels > origin_labels {
            if let Some(id) = self.find(hashes.suffix_name(owner, labels), hashes.suffix(labels)) {
                parent = id;
                break;
            }
            labels -= 1;
        }
        for l in labels + 1..=total {
            parent = self.create(hashes.suffix_name(owner, l), hashes.suffix(l), parent, false);
        }
        parent
    }
}
