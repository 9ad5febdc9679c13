//! What kind of answer a response is, for the server's response rate limiting: the
//! answers a flood of spoofed queries could reflect at a victim are counted per client
//! prefix, response class and name, in the spirit of BIND's and Knot DNS's RRL.
//!
//! The name an answer is counted under is chosen so that varying the query cannot
//! spread a flood over many counters: the query name and type for a positive answer,
//! the zone for NXDOMAIN and NODATA (random names or types would otherwise each get a
//! counter), the zone cut for a referral, the wildcard for a synthesized answer, and
//! none for errors. Names are given as 32-bit tags that cost answering nothing more:
//! the name tags ([`tern_zone::hash`]) of the query name and of the zone, which locating
//! the zone computed, and for a wildcard or a cut the zone's tag mixed with the node's
//! number. Answering only notes the class and the node; the tag is worked out when a
//! report is asked for ([`crate::Engine::answer_reported`]).

use crate::cookie::CookieSeen;

/// The class a response is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResponseClass {
    /// Records of the type asked for (or a CNAME chain), from the name's own node.
    Positive,
    /// An answer synthesized from a wildcard (RFC 4592).
    Wildcard,
    /// NXDOMAIN.
    NxDomain,
    /// NOERROR without records of the type asked for.
    NoData,
    /// A referral to a zone cut below the zone.
    Referral,
    /// Any other RCODE (REFUSED, SERVFAIL, FORMERR, NOTIMP, BADVERS, …), and answers
    /// from no zone (CHAOS identity, a request for a server cookie).
    Error,
}

impl ResponseClass {
    /// Every class, in declaration order.
    pub const ALL: [ResponseClass; 6] = [
        ResponseClass::Positive,
        ResponseClass::Wildcard,
        ResponseClass::NxDomain,
        ResponseClass::NoData,
        ResponseClass::Referral,
        ResponseClass::Error,
    ];

    /// The class's name in logs and configuration.
    pub fn name(self) -> &'static str {
        match self {
            ResponseClass::Positive => "positive",
            ResponseClass::Wildcard => "wildcard",
            ResponseClass::NxDomain => "nxdomain",
            ResponseClass::NoData => "nodata",
            ResponseClass::Referral => "referral",
            ResponseClass::Error => "error",
        }
    }
}

/// What the server's defences need to know about one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// Its class.
    pub class: ResponseClass,
    /// The name (and for positive answers the type) it is counted under, as a tag; 0
    /// for errors.
    pub tag: u32,
    /// What the query's cookie showed.
    pub cookie: CookieSeen,
}

impl Report {
    /// An error answer (or one the engine does not classify) to a query whose cookie
    /// showed `cookie`.
    pub fn error(cookie: CookieSeen) -> Report {
        Report { class: ResponseClass::Error, tag: 0, cookie }
    }
}

/// The tag of an answer counted under node `node` of the zone tagged `zone`: node
/// numbers are fixed within a version of a zone, which is as long as a counter needs.
#[inline]
pub(crate) fn node_tag(zone: u32, node: u32) -> u32 {
    zone ^ node.wrapping_add(1).wrapping_mul(0x85EB_CA6B)
}

/// The tag of a positive answer: the query name's tag mixed with the type asked for, so
/// that each type of a name is counted apart (as BIND counts identical responses).
#[inline]
pub(crate) fn positive_tag(name: u32, qtype: u16) -> u32 {
    name ^ u32::from(qtype).wrapping_mul(0x9E37_79B9)
}
