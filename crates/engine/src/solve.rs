//! Answering from one zone (RFC 1034 §4.3.2 step 3, with RFC 4592 wildcards, RFC 6672
//! DNAME and RFC 4035 §3.1 DNSSEC): one lookup decides between an answer at a node, a
//! referral, a DNAME synthesis, a wildcard synthesis and NXDOMAIN. CNAME and DNAME
//! targets inside the zone are followed (the chain is bounded and loops are cut).

use std::num::NonZeroU16;

use arrayvec::ArrayVec;

use tern_wire::message::Section;
use tern_wire::{Dname, NameBuf, Rtype};
use tern_zone::hash::SuffixHashes;
use tern_zone::{Flags, Lookup, Node, NodeId, ZoneContents, APEX, NO_NODE};

use crate::class::ResponseClass;
use crate::response::{Response, Truncated};

/// Most names looked up for one query: the query name and the CNAME or DNAME targets
/// followed from it inside the zone. Longer chains end where they are, as a loop does
/// (the bound Knot DNS uses; the resolver continues the chain itself).
pub const MAX_CHAIN: usize = 5;

/// Additional-section entries kept per response.
const MAX_EXTRAS: usize = 32;

/// NSEC/NSEC3 RRsets queued per response (an NSEC3 NXDOMAIN needs three).
const MAX_PROOFS: usize = 8;

/// What one step of the chain decided. Small, so that returning it copies no name.
pub(crate) enum Step<'z> {
    /// The response is complete (bar the additional section).
    Done,
    /// Continue with this name, a CNAME target in the zone's data.
    Follow(&'z Dname),
    /// Continue with the CNAME target a DNAME synthesized, left in
    /// [`Solver::synthesized`].
    Synthesized,
}

/// Where the data of an answer comes from when it is not the query name's own node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WildcardMatch {
    /// The closest encloser.
    pub encloser: NodeId,
    /// Its label count.
    pub encloser_labels: usize,
}

/// A node whose addresses go in the additional section.
#[derive(Clone, Copy, Debug)]
struct Extra {
    node: NodeId,
    /// Where the node's name is already in the message (the NS/MX/SRV target written;
    /// never offset 0, which is the header).
    owner_at: Option<NonZeroU16>,
    /// Glue the referral cannot do without (RFC 9471 §3).
    required: bool,
}

/// A queued NSEC or NSEC3 RRset proving part of the answer: node `id` of the zone, or
/// of the NSEC3 chain when `in_chain` is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Proof {
    pub id: NodeId,
    pub in_chain: bool,
}

/// State of answering one query from one zone.
pub(crate) struct Solver<'z, 'r, 'b> {
    pub zone: &'z ZoneContents,
    pub resp: &'r mut Response<'b>,
    pub qtype: Rtype,
    /// Additional-section candidates. The lists are `ArrayVec`s, which start without
    /// writing their storage: a query that needs none of them clears nothing.
    extras: ArrayVec<Extra, MAX_EXTRAS>,
    /// Nodes already answered in this chain (loop detection).
    visited: ArrayVec<NodeId, MAX_CHAIN>,
    /// NSEC/NSEC3 records proving what the answer needs, written to the authority
    /// section once the answer section is complete.
    pub proofs: ArrayVec<Proof, MAX_PROOFS>,
    /// The name a DNAME synthesized, for the chain to follow ([`Step::Synthesized`]).
    pub synthesized: Option<NameBuf>,
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
    resp.class = ResponseClass::Positive;
    let mut solver = Solver {
        zone,
        resp,
        qtype,
        extras: ArrayVec::new(),
        visited: ArrayVec::new(),
        proofs: ArrayVec::new(),
        synthesized: None,
        dname_written: NO_NODE,
    };
    if solver.chain(qname, hashes).is_ok() && solver.write_proofs().is_ok() {
        solver.write_extras();
    }
}

impl<'z> Solver<'z, '_, '_> {
    /// Follows the chain of names from `qname` until an answer is complete.
    ///
    /// The chain stops at a node answered before ([`seen`](Self::seen)) and at a CNAME
    /// target followed before: through wildcards, `a.w CNAME b.w` then `b.w CNAME b.w`
    /// for `*.w CNAME b.w` (the query name is not a target: `b.w` asked gets its CNAME
    /// twice), as NSD answers and Knot DNS mostly does.
    fn chain(&mut self, qname: &Dname, hashes: &SuffixHashes) -> Result<(), Truncated> {
        let mut step = self.step(qname, hashes)?;
        if let Step::Done = step {
            return Ok(());
        }
        let mut followed: ArrayVec<&'z Dname, MAX_CHAIN> = ArrayVec::new();
        let mut synthesized;
        for _ in 1..MAX_CHAIN {
            let current = match step {
                Step::Done => return Ok(()),
                Step::Follow(target) => {
                    if followed.iter().any(|t| t.eq_ignore_case(target)) {
                        return Ok(()); // a loop (through a wildcard, or to a node seen)
                    }
                    let _ = followed.try_push(target); // never full: one per step
                    target
                }
                Step::Synthesized => {
                    synthesized = self.synthesized.take();
                    match &synthesized {
                        Some(name) => name,
                        None => return Ok(()),
                    }
                }
            };
            if !current.ends_with(self.zone.origin()) {
                return Ok(()); // RFC 1034 §4.3.2: the rest is for another server
            }
            // The new name is the target of the CNAME just written: point owners there.
            let target_at = self.resp.name_at(0).map(NonZeroU16::get);
            self.resp.alias(current, target_at);
            step = self.step(current, &SuffixHashes::of(current))?;
        }
        Ok(())
    }

    /// One lookup and what follows from it.
    fn step(&mut self, name: &Dname, hashes: &SuffixHashes) -> Result<Step<'z>, Truncated> {
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
                if encloser == APEX && self.apex_dname().is_some() {
                    return self.below_apex_dname(name);
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
                    // Counted under the wildcard, whatever name it is asked by.
                    self.resp.class = ResponseClass::Wildcard;
                    self.resp.node = wildcard;
                    return self.at_node(wildcard, name, Some(ctx));
                }
                self.nxdomain(name, ctx)?;
                Ok(Step::Done)
            }
        }
    }

    /// The apex node when it holds a DNAME: beside SOA and NS (RFC 6672 §2.3), it
    /// redirects every name below the apex. (`cut_above` leaves the apex out; a zone with
    /// data below such an apex is not loaded, so neither a node nor a wildcard can match
    /// there first.)
    fn apex_dname(&self) -> Option<&'z Node> {
        self.zone.apex().filter(|n| n.flags.contains(Flags::DNAME))
    }

    /// Applies the apex's DNAME to `name` (kept out of [`step`](Self::step)'s body: rare).
    #[cold]
    #[inline(never)]
    fn below_apex_dname(&mut self, name: &Dname) -> Result<Step<'z>, Truncated> {
        match self.apex_dname() {
            Some(apex) => self.at_cut_node(APEX, apex, name),
            None => Ok(Step::Done),
        }
    }

    /// A query for the delegation point's own name is a referral unless it asks for DS,
    /// which the parent side answers (RFC 4035 §3.1.4.1).
    fn is_referral_at(&self, cut: &Node) -> bool {
        cut.flags.contains(Flags::DELEGATION) && self.qtype != Rtype::DS
    }

    fn at_cut(&mut self, cut: NodeId, name: &Dname) -> Result<Step<'z>, Truncated> {
        let Some(node) = self.zone.node(cut) else { return Ok(Step::Done) };
        self.at_cut_node(cut, node, name)
    }

    /// [`at_cut`](Self::at_cut) with the cut's node at hand.
    fn at_cut_node(
        &mut self,
        cut: NodeId,
        node: &Node,
        name: &Dname,
    ) -> Result<Step<'z>, Truncated> {
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
    ) -> Result<Step<'z>, Truncated> {
        // A node of the zone answered again is a loop: stop where we are. A wildcard
        // answers many names, so meeting it again is not (`chain` stops a name followed
        // twice).
        if self.seen(id) && wildcard.is_none() {
            return Ok(Step::Done);
        }
        let zone = self.zone;
        let Some(node) = zone.node(id) else { return Ok(Step::Done) };
        match self.qtype {
            Rtype::ANY => return self.any(id, node, owner, wildcard),
            Rtype::RRSIG => return self.rrsigs(node, owner, id, wildcard),
            _ => {}
        }
        if let Some(rrset) = node.rrset(self.qtype).filter(|r| r.has_records()) {
            self.resp.decided();
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
            return Ok(target.map_or(Step::Done, Step::Follow));
        }
        self.nodata(id, owner, wildcard)?;
        Ok(Step::Done)
    }

    /// Remembers a node of the chain; true if it was already answered (a loop).
    fn seen(&mut self, id: NodeId) -> bool {
        let seen = self.visited.contains(&id);
        if !seen {
            let _ = self.visited.try_push(id); // full: the chain ends at MAX_CHAIN anyway
        }
        seen
    }

    /// QTYPE=ANY (RFC 8482 §4.1): one RRset, over UDP and TCP alike, chosen as NSD
    /// chooses ([`any_rank`]). Knot DNS takes the RRset of the lowest type, which at a
    /// signed name without types below 46 is the RRSIG set: a data RRset (with its
    /// signatures when DO is set) is the more useful answer.
    fn any(
        &mut self,
        id: NodeId,
        node: &Node,
        owner: &Dname,
        wildcard: Option<WildcardMatch>,
    ) -> Result<Step<'z>, Truncated> {
        let first = node
            .rrsets()
            .filter(|r| r.has_records() && r.rtype != Rtype::RRSIG)
            .min_by_key(|r| (any_rank(r.rtype), r.rtype.0));
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
    ) -> Result<Step<'z>, Truncated> {
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
            let queued = self.extras.iter().any(|x| x.node == node);
            if node == NO_NODE || queued {
                continue;
            }
            if let Some(n) = zone.node(node) {
                n.prefetch_data();
            }
            let required = cut.is_some_and(|c| zone.is_below_node(node, c));
            let owner_at = self.resp.name_at(i);
            // Beyond MAX_EXTRAS targets, the rest go without addresses.
            let _ = self.extras.try_push(Extra { node, owner_at, required });
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
            for i in 0..self.extras.len() {
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

/// The order of preference among the RRsets of a name for QTYPE=ANY, as NSD 4 ranks
/// them: the common small types first (A, AAAA, SOA, MX, PTR), DNSKEY and NSEC last,
/// other data between. Within a rank NSD goes by zone-file order (the first common type,
/// the last other one), which a loaded zone does not keep: the lowest type goes first
/// here. So a name with one type of its best rank gets NSD's answer, and a name without
/// common types Knot DNS's answer where that is data (the lowest type).
fn any_rank(rtype: Rtype) -> u8 {
    match rtype {
        Rtype::A | Rtype::AAAA | Rtype::SOA | Rtype::MX | Rtype::PTR => 0,
        Rtype::DNSKEY | Rtype::NSEC | Rtype::RRSIG => 2,
        _ => 1,
    }
}

/// Types whose targets' addresses go in the additional section (RFC 1035 §3.3.9,
/// RFC 2782, RFC 9460 §4).
fn adds_targets(rtype: Rtype) -> bool {
    matches!(rtype, Rtype::NS | Rtype::MX | Rtype::SRV | Rtype::SVCB | Rtype::HTTPS)
}
