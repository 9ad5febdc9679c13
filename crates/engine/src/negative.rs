//! Negative answers (RFC 2308): NXDOMAIN and NODATA carry the zone's SOA in the authority
//! section with TTL min(SOA TTL, SOA MINIMUM) (RFC 2308 §3), and with DNSSEC the proofs
//! of non-existence (RFC 4035 §3.1.3, RFC 5155 §7.2).

use tern_wire::message::Section;
use tern_wire::{Dname, Rcode, Rtype};
use tern_zone::NodeId;

use crate::class::ResponseClass;
use crate::response::Truncated;
use crate::solve::{Solver, WildcardMatch};

impl Solver<'_, '_, '_> {
    /// The name does not exist and no wildcard matched.
    pub(crate) fn nxdomain(&mut self, name: &Dname, w: WildcardMatch) -> Result<(), Truncated> {
        // RFC 6604 §3: the last name of a chain decides the RCODE.
        self.resp.rcode = Rcode::NXDOMAIN;
        self.resp.class = ResponseClass::NxDomain;
        // Proofs are only queued here (written after the SOA, `write_proofs`): finding
        // them first starts their records loading while the SOA is written.
        if self.resp.dnssec {
            self.nxdomain_proof(name, w)?;
        }
        self.negative_soa()
    }

    /// The name exists (node `id`, or the wildcard that matched) but has no data of the
    /// queried type.
    pub(crate) fn nodata(
        &mut self,
        id: NodeId,
        owner: &Dname,
        wildcard: Option<WildcardMatch>,
    ) -> Result<(), Truncated> {
        self.resp.class = ResponseClass::NoData;
        if self.resp.dnssec {
            // Queued before the SOA is written, as for NXDOMAIN.
            match wildcard {
                None => self.nodata_proof(id, owner)?,
                Some(w) => self.wildcard_nodata_proof(id, owner, w)?,
            }
        }
        self.negative_soa()
    }

    /// The apex SOA with the negative-caching TTL: the prepared copy when the zone is the
    /// question's (the apex is the question name's tail, where the copy's pointers go),
    /// else written as any RRset.
    fn negative_soa(&mut self) -> Result<(), Truncated> {
        let zone = self.zone;
        let Some(apex) = zone.apex() else { return Ok(()) };
        let ttl = zone.negative_ttl();
        if let (Some(prepared), Some(at)) = (zone.negative_soa(), self.resp.apex_at(zone.origin()))
        {
            // The SOA RRset itself is needed only for its RRSIGs.
            let sigs = if self.resp.dnssec { apex.rrset(Rtype::SOA) } else { None };
            return self.resp.must_negative_soa(prepared, apex.owner(), at, sigs.as_ref(), ttl);
        }
        let Some(soa) = apex.rrset(Rtype::SOA) else { return Ok(()) };
        self.resp.must(Section::Authority, apex.owner(), &soa, ttl)
    }
}
