//! DNAME redirection (RFC 6672 §3): the DNAME record, a CNAME synthesized from it for the
//! query name, then the new name is followed like a CNAME target. A synthesized name over
//! 255 bytes is YXDOMAIN (RFC 6672 §2.2).

use tern_wire::message::Section;
use tern_wire::{Dname, NameBuilder, Rcode, Rtype};
use tern_zone::NodeId;

use crate::response::Truncated;
use crate::solve::{Solver, Step};

impl<'z> Solver<'z, '_, '_> {
    /// Applies the DNAME at node `id` to `name` (which is below it).
    pub(crate) fn dname(&mut self, id: NodeId, name: &Dname) -> Result<Step<'z>, Truncated> {
        let zone = self.zone;
        let Some(node) = zone.node(id) else { return Ok(Step::Done) };
        let Some(dname) = node.rrset(Rtype::DNAME).filter(|r| r.has_records()) else {
            return Ok(Step::Done);
        };
        if self.dname_written != id {
            self.resp.must(Section::Answer, node.owner(), &dname, dname.ttl)?;
            self.dname_written = id;
        }
        let Some(target) = dname.rdatas().next().and_then(|rd| Dname::from_wire(rd).ok()) else {
            return Ok(Step::Done);
        };
        let prefix_len = name.len().saturating_sub(node.owner().len());
        let mut builder = NameBuilder::new();
        let synthesized = builder
            .push_wire_labels(name.as_wire().get(..prefix_len).unwrap_or(&[]))
            .and_then(|()| builder.finish_with(target));
        let Ok(new_name) = synthesized else {
            self.resp.rcode = Rcode::YXDOMAIN;
            return Ok(Step::Done);
        };
        // The synthesized CNAME has the DNAME's TTL and no signature (RFC 6672 §3.1, §5.3.1).
        self.resp.must_record(
            Section::Answer,
            name,
            Rtype::CNAME,
            dname.ttl,
            new_name.as_wire(),
        )?;
        if self.qtype == Rtype::CNAME {
            return Ok(Step::Done);
        }
        self.synthesized = Some(new_name);
        Ok(Step::Synthesized)
    }
}
