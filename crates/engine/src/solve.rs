//! Answering from one zone (RFC 1034 §4.3.2 step 3, with RFC 4592 wildcards, RFC 6672
//! DNAME and RFC 4035 §3.1 DNSSEC): one lookup decides between an answer at a node, a
//! referral, a DNAME synthesis, a wildcard synthesis and NXDOMAIN. CNAME and DNAME
//! targets inside the zone are followed (the chain is bounded and loops are cut).

use std::num::NonZeroU16;

use tern_wire::message::Section;
use tern_wire::{Dname, NameBuf, Rtype};
use tern_zone::hash::SuffixHashes;
use tern_zone::{Flags, Lookup, Node, NodeId, ZoneContents, NO_NODE};

use crate::response::{Response, Truncated};

/// Most names looked up for one query: the query name and the CNAME or DNAME targets
/// followed from it inside the zone. Longer chains end where they are, as a loop does
/// (the bound Knot DNS uses; the resolver continues the chain itself).
pub const MAX_CHAIN: usize = 5;

/// Additional-section entries kept per response.
const MAX_EXTRAS: usize = 32;

/// What one step of the chain decided. (The name stays on the stack: boxing it would
/// allocate on the hot path.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Step {
    /// The response is complete (bar the additional section).
    Done,
    /// Continue with this name (a CNAME or synthesized CNAME target in the zone).
    Follow(NameBuf),
}

/// Where the data of an answer comes from when it is not the query name's own node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WildcardMatch {
    /// The closest encloser.
    pub encloser: NodeId,
    /// Its label count.
    pub encloser_labels: usize,
}

/// A node whose addresses go in the additional section. Eight bytes without padding,
/// all zero when empty, so that the solver's list of them is cleared by a few wide
/// stores instead of one store per field.
#[derive(Clone, Copy, Debug)]
struct Extra {
    node: NodeId,
    /// Where the node's name is already in the message (the NS/MX/SRV target written;
    /// never offset 0, which is the header).
    owner_at: Option<NonZeroU16>,
    /// Glue the referral cannot do without (RFC 9471 §3).
    required: bool,
    _pad: u8,
}

impl Extra {
    const EMPTY: Extra = Extra { node: 0, owner_at: None, required: false, _pad: 0 };
}

/// A queued NSEC or NSEC3 RRset proving part of the answer: node `id` of the zone, or
/// of the NSEC3 chain when `in_chain` is set. No padding, as [`Extra`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Proof {
    pub id: NodeId,
    pub in_chain: bool,
    _pad: [u8; 3],
}

impl Proof {
    const EMPTY: Proof = Proof::new(false, 0);

    pub(crate) const fn new(in_chain: bool, id: NodeId) -> Proof {
        Proof { id, in_chain, _pad: [0; 3] }
    }
}

/// State of answering one query from one zone.
pub(crate) struct Solver<'z, 'r, 'b> {
    pub zone: &'z ZoneContents,
    pub resp: &'r mut Response<'b>,
    pub qtype: Rtype,
    /// Additional-section candidates: (node, required glue).
    extras: [Extra; MAX_EXTRAS],
    extras_len: usize,
    /// Nodes already answered in this chain (loop detection).
    visited: [NodeId; MAX_CHAIN],
    visited_len: usize,
    /// NSEC/NSEC3 records proving what the answer needs, written to the authority
    /// section once the answer section is complete: (in the NSEC3 chain, node, type).
    pub proofs: [Proof; 8],
    pub proofs_len: usize,
    /// The DNAME node already written to the answer (a DNAME may apply repeatedly).
    pub dname_written: NodeId,
}

/// Answers `qname`/`qtype` from `zone` into `resp`; `hashes` are `qname`'s.
pub(crate) fn answer(
    zone: &ZoneContents,
    qname: &Dname,
    hashes: &SuffixHashes,
    qtype: Rtype,
    resp: &mut Response<'_>,
) {
    resp.set_authoritative(true);
    resp.question_zone(zone.origin());
    // Only the first `*_len` entries of the lists are ever read; the rest start as zero
    // bytes, which the compiler clears in a few wide stores.
    let mut solver = Solver {
        zone,
        resp,
        qtype,
        extras: [Extra::EMPTY; MAX_EXTRAS],
        extras_len: 0,
        visited: [0; MAX_CHAIN],
        visited_len: 0,
        proofs: [Proof::EMPTY; 8],
        proofs_len: 0,
        dname_written: NO_NODE,
    };
    if solver.chain(qname, hashes).is_ok() && solver.write_proofs().is_ok() {
        solver.write_extras();
    }
}

impl Solver<'_, '_, '_> {
    /// Follows the chain of names from `qname` until an answer is complete.
    fn chain(&mut self, qname: &Dname, hashes: &SuffixHashes) -> Result<(), Truncated> {
        let mut step = self.step(qname, hashes)?;
        let mut current;
        for _ in 1..MAX_CHAIN {
            let Step::Follow(next) = step else { return Ok(()) };
            if !next.ends_with(self.zone.origin()) {
                return Ok(()); // RFC 1034 §4.3.2: the rest is for another server
            }
            current = next;
            // The new name is the target of the CNAME just written: point owners there.
            let target_at = self.resp.name_at(0).map(NonZeroU16::get);
            self.resp.alias(&current, target_at);
            step = self.step(&current, &SuffixHashes::of(&current))?;
        }
        Ok(())
    }

    /// One lookup and what follows from it.
    fn step(&mut self, name: &Dname, hashes: &SuffixHashes) -> Result<Step, Truncated> {
        match self.zone.lookup(name, hashes) {
            Lookup::Found(id) => {
                let Some(node) = self.zone.node(id) else { return Ok(Step::Done) };
                match self.zone.cut_above_node(id, node) {
                    // The name's own node is a delegation point.
                    Some(cut) if cut == id && self.is_referral_at(node) => {
                        self.at_cut_node(cut, node, name)
                    }
                    Some(cut) if cut != id => self.at_cut(cut, name),
                    _ => self.at_node(id, name, None),
                }
            }
            Lookup::NotFound { encloser, encloser_labels } => {
                if let Some(cut) = self.zone.cut_above(encloser) {
                    return self.at_cut(cut, name);
                }
                let wildcard = self.node(encloser).map_or(NO_NODE, |n| n.wildcard);
                let ctx = WildcardMatch { encloser, encloser_labels };
                let wild_cut =
                    self.node(wildcard).is_some_and(|n| n.flags.contains(Flags::DELEGATION));
                if wild_cut && self.qtype != Rtype::DS {
                    // An NS RRset at a wildcard is a zone cut of its own: refer to it as
                    // it is, without synthesis (RFC 4592 §4.2; as Knot DNS does).
                    self.referral(wildcard)?;
                    return Ok(Step::Done);
                }
                if wildcard != NO_NODE {
                    return self.at_node(wildcard, name, Some(ctx));
                }
                self.nxdomain(name, ctx)?;
                Ok(Step::Done)
            }
        }
    }

    /// A query for the delegation point's own name is a referral unless it asks for DS,
    /// which the parent side answers (RFC 4035 §3.1.4.1).
    fn is_referral_at(&self, cut: &Node) -> bool {
        cut.flags.contains(Flags::DELEGATION) && self.qtype != Rtype::DS
    }

    fn at_cut(&mut self, cut: NodeId, name: &Dname) -> Result<Step, Truncated> {
        let Some(node) = self.zone.node(cut) else { return Ok(Step::Done) };
        self.at_cut_node(cut, node, name)
    }

    /// [`at_cut`](Self::at_cut) with the cut's node at hand.
    fn at_cut_node(&mut self, cut: NodeId, node: &Node, name: &Dname) -> Result<Step, Truncated> {
        self.resp.cut_above(name, node.owner());
        if node.flags.contains(Flags::DNAME) {
            return self.dname(cut, name);
        }
        self.referral_node(cut, node)?;
        Ok(Step::Done)
    }

    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.zone.node(id)
    }

    /// Answers at an existing node, or at the wildcard that matched (`wildcard` set).
    fn at_node(
        &mut self,
        id: NodeId,
        owner: &Dname,
        wildcard: Option<WildcardMatch>,
    ) -> Result<Step, Truncated> {
        if self.seen(id) {
            return Ok(Step::Done); // a loop: stop where we are
        }
        let zone = self.zone;
        let Some(node) = zone.node(id) else { return Ok(Step::Done) };
        match self.qtype {
            Rtype::ANY => return self.any(id, node, owner, wildcard),
            Rtype::RRSIG => return self.rrsigs(node, owner, id, wildcard),
            _ => {}
        }
        if let Some(rrset) = node.rrset(self.qtype).filter(|r| r.has_records()) {
            self.prefetch_targets(&rrset);
            self.resp.must(Section::Answer, owner, &rrset, rrset.ttl)?;
            self.note_targets(&rrset, None);
            if let Some(w) = wildcard {
                self.wildcard_answer_proof(owner, w)?;
            }
            return Ok(Step::Done);
        }
        // NSEC and RRSIG may sit beside a CNAME (RFC 4035 §2.5): a query for them asks
        // about the owner itself, so the CNAME is not followed.
        let follows = !matches!(self.qtype, Rtype::NSEC | Rtype::RRSIG);
        if let Some(cname) = node.rrset(Rtype::CNAME).filter(|r| r.has_records() && follows) {
            self.resp.must(Section::Answer, owner, &cname, cname.ttl)?;
            if let Some(w) = wildcard {
                self.wildcard_answer_proof(owner, w)?;
            }
            let target = cname.rdatas().next().and_then(|rd| Dname::from_wire(rd).ok());
            return Ok(target.map_or(Step::Done, |t| Step::Follow(NameBuf::from_dname(t))));
        }
        self.nodata(id, owner, wildcard)?;
        Ok(Step::Done)
    }

    /// Remembers a node of the chain; true if it was already answered (a loop).
    fn seen(&mut self, id: NodeId) -> bool {
        let seen = self.visited.get(..self.visited_len).is_some_and(|v| v.contains(&id));
        if !seen {
            if let Some(slot) = self.visited.get_mut(self.visited_len) {
                *slot = id;
                self.visited_len += 1;
            }
        }
        seen
    }

    /// QTYPE=ANY (RFC 8482 §4.1): one RRset, the one with the lowest type, as Knot DNS
    /// and NSD answer over UDP and TCP alike.
    fn any(
        &mut self,
        id: NodeId,
        node: &Node,
        owner: &Dname,
        wildcard: Option<WildcardMatch>,
    ) -> Result<Step, Truncated> {
        let first = node
            .rrsets()
            .filter(|r| r.has_records() && r.rtype != Rtype::RRSIG)
            .min_by_key(|r| r.rtype.0);
        let Some(rrset) = first else {
            self.nodata(id, owner, wildcard)?;
            return Ok(Step::Done);
        };
        self.resp.must(Section::Answer, owner, &rrset, rrset.ttl)?;
        self.note_targets(&rrset, None);
        if let Some(w) = wildcard {
            self.wildcard_answer_proof(owner, w)?;
        }
        Ok(Step::Done)
    }

    /// QTYPE=RRSIG: the signatures of one RRset (the lowest type signed), DO or not —
    /// minimal like ANY (RFC 8482 §4.1), as Knot DNS answers.
    fn rrsigs(
        &mut self,
        node: &Node,
        owner: &Dname,
        id: NodeId,
        wildcard: Option<WildcardMatch>,
    ) -> Result<Step, Truncated> {
        let signed = node.rrsets().filter(|r| r.sig_count > 0).min_by_key(|r| {
            let covered = r.sigs().next().and_then(tern_zone::records::covered_type);
            covered.map_or(u16::MAX, |t| t.0)
        });
        let Some(rrset) = signed else {
            self.nodata(id, owner, wildcard)?;
            return Ok(Step::Done);
        };
        self.resp.must_sigs(Section::Answer, owner, &rrset)?;
        if let Some(w) = wildcard {
            self.wildcard_answer_proof(owner, w)?;
        }
        Ok(Step::Done)
    }

    /// Queues the additional-section targets of an answered RRset (RFC 1035 §3.3.9,
    /// RFC 2782, RFC 9460 §4). `cut` marks a referral: targets below it are required glue.
    /// The targets' data is prefetched for [`write_extras`](Self::write_extras).
    pub fn note_targets(&mut self, rrset: &tern_zone::Rrset<'_>, cut: Option<NodeId>) {
        if !adds_targets(rrset.rtype) {
            return;
        }
        let zone = self.zone;
        for i in 0..usize::from(rrset.count) {
            let node = rrset.target(i);
            let queued = self
                .extras
                .get(..self.extras_len)
                .is_some_and(|e| e.iter().any(|x| x.node == node));
            if node == NO_NODE || queued {
                continue;
            }
            if let Some(n) = zone.node(node) {
                n.prefetch_data();
            }
            let required = cut.is_some_and(|c| zone.is_below_node(node, c));
            let owner_at = self.resp.name_at(i);
            if let Some(slot) = self.extras.get_mut(self.extras_len) {
                *slot = Extra { node, owner_at, required, _pad: 0 };
                self.extras_len += 1;
            }
        }
    }

    /// Starts loading the nodes an RRset's RDATA names (their addresses are looked up
    /// once the RRset is written).
    pub fn prefetch_targets(&self, rrset: &tern_zone::Rrset<'_>) {
        if !adds_targets(rrset.rtype) {
            return;
        }
        for i in 0..usize::from(rrset.count) {
            self.zone.prefetch_node(rrset.target(i));
        }
    }

    /// Writes the queued addresses: required glue first (TC when some does not fit,
    /// RFC 9471 §3), then the rest. Every RRset that fits goes in, as Knot DNS fills it.
    fn write_extras(&mut self) {
        for required in [true, false] {
            for i in 0..self.extras_len {
                match self.extras.get(i) {
                    Some(&extra) if extra.required == required => self.write_addresses(&extra),
                    _ => {}
                }
            }
        }
    }

    fn write_addresses(&mut self, extra: &Extra) {
        let zone = self.zone;
        let Some(node) = zone.node(extra.node) else { return };
        if node.flags.contains(Flags::PHANTOM) {
            return;
        }
        let mut owner_at = extra.owner_at.map(NonZeroU16::get);
        for rtype in [Rtype::A, Rtype::AAAA] {
            let Some(rrset) = node.rrset(rtype).filter(|r| r.has_records()) else { continue };
            if self.resp.may(Section::Additional, node.owner(), owner_at, &rrset) {
                owner_at = self.resp.writer.last_owner_at();
            } else if extra.required {
                self.resp.truncate();
            }
        }
    }
}

/// Types whose targets' addresses go in the additional section (RFC 1035 §3.3.9,
/// RFC 2782, RFC 9460 §4).
fn adds_targets(rtype: Rtype) -> bool {
    matches!(rtype, Rtype::NS | Rtype::MX | Rtype::SRV | Rtype::SVCB | Rtype::HTTPS)
}
