//! NOTIFY received (RFC 1996): a primary telling a secondary that a zone changed.
//!
//! The request names the zone's apex with QTYPE SOA and may carry the new SOA in its
//! answer section (§3.7). It is answered with the question echoed, AA set and NOERROR
//! (§4.7) when the zone is ours and the sender may notify (an allowed primary, by the
//! access rules); the control plane is then told ([`Notice`]) so that it refreshes the
//! zone at once. A zone we do not serve is NOTAUTH, as Knot DNS answers; a sender not
//! allowed is REFUSED; a NOTIFY of another type is NOTIMP (only SOA is defined, §3.1).

use tern_wire::message::{MessageReader, Section};
use tern_wire::{Class, Dname, Name, Rcode, Rtype};
use tern_zone::records::soa_serial;
use tern_zone::ZoneSet;

use crate::access::{Access, Action, Who};
use crate::query::Question;
use crate::response::Response;

/// A NOTIFY accepted for a zone we serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The zone's origin.
    pub zone: Name,
    /// The serial the answer section announced, if any.
    pub serial: Option<u32>,
}

/// Answers a NOTIFY into `resp`; the notice when it was accepted.
pub(crate) fn answer(
    message: &[u8],
    question: &Question<'_>,
    zones: &ZoneSet,
    access: &Access,
    who: &Who<'_>,
    resp: &mut Response<'_>,
) -> Option<Notice> {
    if question.qtype != Rtype::SOA {
        resp.rcode = Rcode::NOTIMP;
        return None;
    }
    let Some(slot) = zones.get(question.qname()).filter(|_| question.qclass == Class::IN) else {
        resp.rcode = Rcode::NOTAUTH;
        return None;
    };
    if !access.allows(slot.origin(), Action::Notify, who) {
        resp.rcode = Rcode::REFUSED;
        return None;
    }
    resp.set_authoritative(true);
    Some(Notice { zone: slot.origin().clone(), serial: announced_serial(message, slot.origin()) })
}

/// The serial of an SOA for `zone` in the NOTIFY's answer section (RFC 1996 §3.7).
fn announced_serial(message: &[u8], zone: &Dname) -> Option<u32> {
    let mut reader = MessageReader::new(message).ok()?;
    let mut scratch = vec![0u8; tern_wire::message::MAX_RDATA_LEN];
    while let Ok(Some(record)) = reader.record(&mut scratch) {
        if record.section != Section::Answer {
            return None;
        }
        if record.rtype == Rtype::SOA && record.owner.eq_ignore_case(zone) {
            return soa_serial(record.rdata);
        }
    }
    None
}
