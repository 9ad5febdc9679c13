//! Reading the query: what the response must echo, and whether it can be answered at
//! all (RFC 1035 §4.1, RFC 6891 §6.1, RFC 8906 §3).

use tern_wire::edns::OptionCode;
use tern_wire::message::{Flags, MessageReader, Question, Section};
use tern_wire::Rcode;

/// What the response needs to know about the query's OPT record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdnsInfo {
    /// The requestor's UDP payload size.
    pub udp_payload: u16,
    /// The EDNS version.
    pub version: u8,
    /// DNSSEC OK (RFC 3225).
    pub dnssec_ok: bool,
    /// The query asked for the server's NSID (RFC 5001).
    pub nsid: bool,
    /// The query carried an edns-tcp-keepalive option (RFC 7828 §3.2.1).
    pub keepalive: bool,
}

/// A query as far as it could be read.
#[derive(Debug, Clone)]
pub struct Query {
    /// Message ID.
    pub id: u16,
    /// Header flags (opcode included).
    pub flags: Flags,
    /// The question, when there is exactly one and it could be read.
    pub question: Option<Question>,
    /// The OPT record, when present and well-formed.
    pub edns: Option<EdnsInfo>,
    /// Set when the message breaks the format: answer FORMERR (RFC 1035 §4.1.1).
    pub malformed: bool,
}

/// Reads a query. `None` means no answer at all: shorter than a header, or a response
/// (answering responses invites loops).
pub fn parse(message: &[u8]) -> Option<Query> {
    let mut reader = MessageReader::new(message).ok()?;
    let header = *reader.header();
    if header.flags.has(Flags::QR) {
        return None;
    }
    let mut query =
        Query { id: header.id, flags: header.flags, question: None, edns: None, malformed: false };
    if header.count(Section::Question) != 1 {
        query.malformed = true;
    }
    match reader.question() {
        Ok(Some(q)) if !query.malformed => query.question = Some(q),
        Ok(_) => {}
        Err(_) => {
            query.malformed = true;
            return Some(query);
        }
    }
    if reader.finish().is_err() {
        query.malformed = true;
    }
    query.edns = reader.edns().map(|e| EdnsInfo {
        udp_payload: e.udp_payload_size(),
        version: e.version,
        dnssec_ok: e.dnssec_ok(),
        nsid: e.option(OptionCode::NSID).is_some(),
        keepalive: e.option(OptionCode::TCP_KEEPALIVE).is_some(),
    });
    Some(query)
}

/// The response code for queries the engine refuses before looking at zones.
pub fn precheck(query: &Query) -> Option<Rcode> {
    if query.malformed || query.question.is_none() {
        return Some(Rcode::FORMERR);
    }
    if query.edns.is_some_and(|e| e.version > 0) {
        return Some(Rcode::BADVERS); // RFC 6891 §6.1.3
    }
    None
}
