//! Proofs of non-existence for DNSSEC-signed zones: NSEC (RFC 4035 §3.1.3) and NSEC3
//! (RFC 5155 §7.2), written to the authority section with their RRSIGs when DO is set.
//! Each NSEC/NSEC3 RRset is written once even when it proves two things.

use tern_wire::message::compress::MAX_POINTER;
use tern_wire::message::Section;
use tern_wire::{Dname, NameBuf, NameBuilder, Rtype};
use tern_zone::Nsec3Position;
use tern_zone::{Denial, Flags, NodeId, NO_NODE, NSEC3_COVERS};

use crate::response::Truncated;
use crate::solve::{Proof, Solver, WildcardMatch};

/// Which table a proof node lives in.
const MAIN: bool = false;
const CHAIN: bool = true;

impl Solver<'_, '_, '_> {
    /// NXDOMAIN: no such name and no wildcard (RFC 4035 §3.1.3.2, RFC 5155 §7.2.2).
    pub(crate) fn nxdomain_proof(
        &mut self,
        name: &Dname,
        w: WildcardMatch,
    ) -> Result<(), Truncated> {
        match self.zone.denial() {
            Denial::Nsec => {
                self.nsec_covering(name)?;
                if let Some(wc) = self.wildcard_name(w.encloser) {
                    self.nsec_covering(&wc)?;
                }
            }
            Denial::Nsec3 => {
                self.closest_encloser_proof(name, w)?;
                match self.zone.apex_wildcard_nsec3().filter(|_| w.encloser == tern_zone::APEX) {
                    Some(id) => self.proof(CHAIN, id, Rtype::NSEC3)?,
                    None => {
                        if let Some(wc) = self.wildcard_name(w.encloser) {
                            self.nsec3_cover(&wc)?;
                        }
                    }
                }
            }
            Denial::Unsigned => {}
        }
        Ok(())
    }

    /// NODATA at an existing node (RFC 4035 §3.1.3.1, RFC 5155 §7.2.3 and §7.2.4).
    pub(crate) fn nodata_proof(&mut self, id: NodeId, owner: &Dname) -> Result<(), Truncated> {
        match self.zone.denial() {
            Denial::Nsec => {
                if self.node(id).is_some_and(|n| n.flags.contains(Flags::NSEC)) {
                    self.proof(MAIN, id, Rtype::NSEC)
                } else {
                    self.nsec_covering(owner) // an empty non-terminal has no NSEC of its own
                }
            }
            Denial::Nsec3 => match self.nsec3_match(id) {
                Some(m) => self.proof(CHAIN, m, Rtype::NSEC3),
                None => self.closest_provable_encloser(id),
            },
            Denial::Unsigned => Ok(()),
        }
    }

    /// A wildcard matched but has no data of the type (RFC 4035 §3.1.3.4, RFC 5155
    /// §7.2.5).
    pub(crate) fn wildcard_nodata_proof(
        &mut self,
        wild: NodeId,
        qname: &Dname,
        w: WildcardMatch,
    ) -> Result<(), Truncated> {
        match self.zone.denial() {
            Denial::Nsec => {
                self.nsec_covering(qname)?;
                self.proof(MAIN, wild, Rtype::NSEC)
            }
            Denial::Nsec3 => {
                self.closest_encloser_proof(qname, w)?;
                match self.nsec3_match(wild) {
                    Some(m) => self.proof(CHAIN, m, Rtype::NSEC3),
                    None => Ok(()),
                }
            }
            Denial::Unsigned => Ok(()),
        }
    }

    /// A wildcard answer: the query name itself does not exist (RFC 4035 §3.1.3.3,
    /// RFC 5155 §7.2.6).
    pub(crate) fn wildcard_answer_proof(
        &mut self,
        qname: &Dname,
        w: WildcardMatch,
    ) -> Result<(), Truncated> {
        if !self.resp.dnssec {
            return Ok(());
        }
        match self.zone.denial() {
            Denial::Nsec => self.nsec_covering(qname),
            Denial::Nsec3 => match next_closer(qname, w.encloser_labels) {
                Some(nc) => self.nsec3_cover(nc),
                None => Ok(()),
            },
            Denial::Unsigned => Ok(()),
        }
    }

    /// An unsigned delegation (RFC 4035 §3.1.4.1, RFC 5155 §7.2.7).
    pub(crate) fn no_ds_proof(&mut self, cut: NodeId) -> Result<(), Truncated> {
        match self.zone.denial() {
            Denial::Nsec => self.proof(MAIN, cut, Rtype::NSEC),
            Denial::Nsec3 => match self.nsec3_match(cut) {
                Some(m) => self.proof(CHAIN, m, Rtype::NSEC3),
                None => self.closest_provable_encloser(cut),
            },
            Denial::Unsigned => Ok(()),
        }
    }

    /// The closest encloser proof (RFC 5155 §7.2.1): the NSEC3 matching the closest
    /// encloser and the one covering the next closer name.
    fn closest_encloser_proof(&mut self, name: &Dname, w: WildcardMatch) -> Result<(), Truncated> {
        if let Some(m) = self.nsec3_match(w.encloser) {
            self.proof(CHAIN, m, Rtype::NSEC3)?;
        }
        match next_closer(name, w.encloser_labels) {
            Some(nc) => self.nsec3_cover(nc),
            None => Ok(()),
        }
    }

    /// For a node without its own NSEC3 (below an opt-out span): the closest ancestor that
    /// has one, and the NSEC3 covering the next closer name (RFC 5155 §7.2.4, §7.2.7). The
    /// next closer name is the node on the path just below that ancestor, whose covering
    /// record the adjust pass usually precomputed.
    fn closest_provable_encloser(&mut self, id: NodeId) -> Result<(), Truncated> {
        let zone = self.zone;
        let mut below = id;
        let mut ancestor = zone.node(id).map_or(NO_NODE, |n| n.parent);
        while ancestor != NO_NODE {
            if let Some(m) = self.nsec3_match(ancestor) {
                self.proof(CHAIN, m, Rtype::NSEC3)?;
                return match zone.nsec3_cover(below) {
                    Some(cover) => self.proof(CHAIN, cover, Rtype::NSEC3),
                    None => match zone.node(below) {
                        Some(next_closer) => self.nsec3_cover(next_closer.owner()),
                        None => Ok(()),
                    },
                };
            }
            below = ancestor;
            ancestor = zone.node(ancestor).map_or(NO_NODE, |a| a.parent);
        }
        Ok(())
    }

    /// Writes the NSEC RRset covering `name` (the one at its canonical predecessor).
    fn nsec_covering(&mut self, name: &Dname) -> Result<(), Truncated> {
        let zone = self.zone;
        let found = zone.predecessor(name).and_then(|p| zone.nsec_node_at_or_before(p));
        match found {
            Some(id) => self.proof(MAIN, id, Rtype::NSEC),
            None => Ok(()),
        }
    }

    /// Writes the NSEC3 RRset covering the hash of `name`.
    fn nsec3_cover(&mut self, name: &Dname) -> Result<(), Truncated> {
        let Some(chain) = self.zone.nsec3() else { return Ok(()) };
        match chain.find(&chain.params.hash(name)) {
            Some(Nsec3Position::Covered(id) | Nsec3Position::Match(id)) => {
                self.proof(CHAIN, id, Rtype::NSEC3)
            }
            None => Ok(()),
        }
    }

    /// The NSEC3 record matching a main-tree node: its precomputed link, or a hash when
    /// the link is missing or stale (after a changeset). A link is taken when the chain
    /// has the linked node's NSEC3 RRset prepared: the proof copies that entry anyway,
    /// where checking the node itself would read its data, one more cache miss.
    fn nsec3_match(&self, id: NodeId) -> Option<u32> {
        let chain = self.zone.nsec3()?;
        let node = self.zone.node(id)?;
        let link = node.nsec3;
        if link & NSEC3_COVERS == 0 && chain.prepared(link).is_some() {
            return Some(link);
        }
        if self.zone.nsec3_cover(id).is_some() {
            return None; // known to have no record of its own
        }
        chain.find_exact(&chain.params.hash(node.owner()))
    }

    /// Queues one proof (the NSEC or NSEC3 RRset of a node), once per response; proofs
    /// are written after the answer section is complete (a wildcard CNAME's proof comes
    /// before its target's records are known).
    fn proof(&mut self, chain: bool, id: NodeId, _rtype: Rtype) -> Result<(), Truncated> {
        let proof = Proof { id, in_chain: chain };
        let done = self.proofs.contains(&proof);
        if !done {
            match (chain, self.zone.nsec3()) {
                // What `write_proofs` will read: the prepared copy, else the node.
                (true, Some(nsec3)) if self.prepared_at().is_some() => {
                    nsec3.prefetch_prepared_slot(id)
                }
                (true, Some(nsec3)) => nsec3.prefetch_node(id),
                (true, None) => {}
                (false, _) => self.zone.prefetch_node(id),
            }
            let _ = self.proofs.try_push(proof); // full: the answer goes without it
        }
        Ok(())
    }

    /// Writes the queued proofs to the authority section (their data is prefetched
    /// first, so that the records' cache misses overlap). NSEC3 records are copied as the
    /// chain prepared them when the apex is in the question and DO is set (the bytes
    /// `must_below_apex` would write).
    pub(crate) fn write_proofs(&mut self) -> Result<(), Truncated> {
        if self.proofs.is_empty() {
            return Ok(());
        }
        let zone = self.zone;
        let proofs = std::mem::take(&mut self.proofs);
        let nsec3 = zone.nsec3();
        // The chain whose prepared records are copied, and where they go: under the apex
        // in the question.
        let apex_at = self.prepared_at();
        let prepared_in = nsec3.zip(apex_at);
        let node_of = |chain: bool, id: NodeId| {
            if chain {
                (nsec3.and_then(|c| c.node(id)), Rtype::NSEC3)
            } else {
                (zone.node(id), Rtype::NSEC)
            }
        };
        for &Proof { id, in_chain: chain } in &proofs {
            match prepared_in.filter(|_| chain) {
                Some((c, _)) => c.prefetch_prepared(id),
                None => {
                    if let (Some(node), _) = node_of(chain, id) {
                        node.prefetch_data();
                    }
                }
            }
        }
        for &Proof { id, in_chain: chain } in &proofs {
            // A first owner beyond pointer reach is written whole by `must_below_apex`.
            let reachable = chain && self.resp.writer.len() <= MAX_POINTER;
            let prepared = prepared_in.filter(|_| reachable);
            if let Some((records, at)) = prepared.and_then(|(c, at)| Some((c.prepared(id)?, at))) {
                self.resp.must_prepared(Section::Authority, records, at)?;
                continue;
            }
            let (node, rtype) = node_of(chain, id);
            let Some(node) = node else { continue };
            let Some(rrset) = node.rrset(rtype).filter(|r| r.has_records()) else { continue };
            if chain {
                // An NSEC3 owner is one label under the apex (RFC 5155 §3).
                let origin = zone.origin();
                self.resp.must_below_apex(Section::Authority, node.owner(), origin, &rrset)?;
            } else {
                self.resp.must(Section::Authority, node.owner(), &rrset, rrset.ttl)?;
            }
        }
        Ok(())
    }

    /// Where the apex is in the question when NSEC3 proofs are copied as the chain
    /// prepared them (DO set, and the question in this zone); `None` when they are
    /// written from their nodes.
    #[inline]
    fn prepared_at(&self) -> Option<u16> {
        self.resp.apex_at(self.zone.origin()).filter(|_| self.resp.dnssec)
    }

    /// `*.<encloser>`, the source of synthesis that does not exist.
    fn wildcard_name(&self, encloser: NodeId) -> Option<NameBuf> {
        let owner = self.zone.node(encloser)?.owner();
        let mut builder = NameBuilder::new();
        builder.push_label(b"*").ok()?;
        builder.finish_with(owner).ok()
    }
}

/// The next closer name: `name`'s suffix one label longer than the closest encloser
/// (RFC 5155 §1.3).
fn next_closer(name: &Dname, encloser_labels: usize) -> Option<&Dname> {
    name.suffix(encloser_labels + 1)
}
