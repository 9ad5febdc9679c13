//! Referrals at zone cuts (RFC 1034 §4.3.2 step 3b): the child's NS RRset in the
//! authority section, DS or the proof of its absence with DNSSEC (RFC 4035 §3.1.4), and
//! glue for the name servers (RFC 9471: in-bailiwick glue is required, sibling glue added
//! when it fits). A referral is not authoritative data, so AA is clear unless the answer
//! section already holds this zone's records (a CNAME chain leading to the cut).

use tern_wire::message::Section;
use tern_wire::Rtype;
use tern_zone::{Denial, Node, NodeId, Rrset};

use crate::class::ResponseClass;
use crate::response::Truncated;
use crate::solve::Solver;

impl Solver<'_, '_, '_> {
    /// Writes a referral to the zone cut at `cut`.
    pub(crate) fn referral(&mut self, cut: NodeId) -> Result<(), Truncated> {
        match self.zone.node(cut) {
            Some(node) => self.referral_node(cut, node),
            None => Ok(()),
        }
    }

    /// [`referral`](Self::referral) with the cut's node at hand.
    pub(crate) fn referral_node(&mut self, cut: NodeId, node: &Node) -> Result<(), Truncated> {
        let zone = self.zone;
        if self.resp.count(Section::Answer) == 0 {
            self.resp.set_authoritative(false);
        }
        // Counted under the cut, however far below it the name asked is.
        self.resp.class = ResponseClass::Referral;
        self.resp.node = cut;
        self.resp.decided();
        let Some(ns) = node.rrset(Rtype::NS) else { return Ok(()) };
        self.prefetch_targets(&ns);
        let signed = self.resp.dnssec && zone.denial() != Denial::Unsigned;
        let ds = if signed { self.ds_or_proof(cut, node)? } else { None };
        self.resp.must(Section::Authority, node.owner(), &ns, ns.ttl)?;
        if let Some(ds) = ds {
            self.resp.must(Section::Authority, node.owner(), &ds, ds.ttl)?;
        }
        self.note_targets(&ns, Some(cut));
        Ok(())
    }

    /// The cut's DS RRset, or none after queueing the proof that it has none: the proof
    /// is written after the NS RRset (`write_proofs`), but found first, so that its
    /// records load while the NS RRset is written.
    #[inline(never)] // the unsigned path stays as small as it was
    fn ds_or_proof<'n>(
        &mut self,
        cut: NodeId,
        node: &'n Node,
    ) -> Result<Option<Rrset<'n>>, Truncated> {
        match node.rrset(Rtype::DS).filter(|r| r.has_records()) {
            Some(ds) => Ok(Some(ds)),
            None => self.no_ds_proof(cut).map(|()| None),
        }
    }
}
