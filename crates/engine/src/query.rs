//! Reading the query: what the response must echo, and whether it can be answered at
//! all (RFC 1035 §4.1, RFC 6891 §6.1, RFC 8906 §3).
//!
//! Nearly every query is one uncompressed question and at most an OPT record; those are
//! read in place by [`fast`] (the QNAME is borrowed from the packet, nothing is copied).
//! Anything else goes through the general [`MessageReader`], which decompresses names
//! (into the caller's scratch buffer, which the query then borrows) and reports exactly
//! what is wrong.

use tern_wire::edns::{Edns, OptionCode};
use tern_wire::message::{Flags, Header, MessageReader, Section, HEADER_LEN};
use tern_wire::{Class, Dname, Error, NameBuf, Opcode, Rcode, Rtype};

use crate::cookie::QueryCookie;

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

/// The one question of a query.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    /// QNAME, in the spelling the sender used: in the packet, or in the scratch buffer
    /// when it had to be decompressed.
    pub name: &'a Dname,
    /// QTYPE.
    pub qtype: Rtype,
    /// QCLASS.
    pub qclass: Class,
}

impl<'a> Question<'a> {
    /// QNAME.
    #[inline]
    pub fn qname(&self) -> &'a Dname {
        self.name
    }
}

/// A query as far as it could be read.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// Message ID.
    pub id: u16,
    /// Header flags (opcode included).
    pub flags: Flags,
    /// The question, when there is exactly one and it could be read.
    pub question: Option<Question<'a>>,
    /// The OPT record, when present and well-formed.
    pub edns: Option<EdnsInfo>,
    /// Set when the message breaks the format: answer FORMERR (RFC 1035 §4.1.1), or
    /// NOTIMP for an opcode of another layout ([`precheck`]).
    pub malformed: bool,
    /// Offset of the TSIG record, when the query is signed (RFC 8945).
    pub tsig: Option<usize>,
    /// The COOKIE option (RFC 7873), checked before the query is answered.
    pub(crate) cookie: QueryCookie<'a>,
}

impl Query<'_> {
    /// True for what the common query path does not handle: TSIG-signed messages,
    /// NOTIFY, UPDATE, and zone transfer questions (one test on the common path).
    #[inline]
    pub fn is_special(&self) -> bool {
        let transfer = self.question.is_some_and(|q| matches!(q.qtype, Rtype::AXFR | Rtype::IXFR));
        // NOTIFY (4) and UPDATE (5) differ in the opcode's lowest bit only: one test.
        let notify_or_update = self.flags.opcode().0 & !1 == tern_wire::Opcode::NOTIFY.0;
        self.tsig.is_some() || notify_or_update || transfer
    }

    /// What the server counts of a query: the type asked for (0 without a question)
    /// and whether it set the DO bit.
    #[inline]
    pub fn counted(&self) -> (Rtype, bool) {
        let qtype = self.question.as_ref().map_or(Rtype(0), |q| q.qtype);
        (qtype, self.edns.is_some_and(|e| e.dnssec_ok))
    }
}

/// Reads a query. `None` means no answer at all: shorter than a header, or a response
/// (answering responses invites loops). Bytes after the last record make the query
/// malformed (FORMERR), but what came before them is still echoed, as Knot DNS does
/// (for the opcodes whose layout is known; see [`precheck`]).
/// A compressed question name is decompressed into `scratch`.
pub fn parse<'a>(message: &'a [u8], scratch: &'a mut Option<NameBuf>) -> Option<Query<'a>> {
    let header = Header::from_wire(message).ok()?;
    if header.flags.has(Flags::QR) {
        return None;
    }
    if let Some(query) = fast(message, &header) {
        return Some(query);
    }
    let mut read = general(message, &header);
    if let Some(end) = read.trailing_at {
        read = general(message.get(..end)?, &header);
        read.query.malformed = true;
    }
    if read.query.malformed && !known_layout(header.flags.opcode()) {
        // Not a query misread but another opcode's layout (DSO: TLVs after an empty
        // header, RFC 8490 §5.4): NOTIMP with the header alone, as NSD answers.
        read.question = None;
        read.query.edns = None;
    }
    let mut query = read.query;
    if let Some((name, qtype, qclass)) = read.question {
        query.question = Some(Question { name: scratch.insert(name), qtype, qclass });
    }
    Some(query)
}

/// Opcodes whose messages have the layout of RFC 1035 §4.1: QUERY, NOTIFY (RFC 1996
/// §3.3) and UPDATE (RFC 2136 §2, its zone section in place of the question).
fn known_layout(opcode: Opcode) -> bool {
    matches!(opcode, Opcode::QUERY | Opcode::NOTIFY | Opcode::UPDATE)
}

/// The common shape: one uncompressed question, no answer or authority records, and
/// either nothing more or exactly one OPT record ending the message. `None` for anything
/// else (left to `general`).
pub fn fast<'a>(message: &'a [u8], header: &Header) -> Option<Query<'a>> {
    let counts = [Section::Question, Section::Answer, Section::Authority, Section::Additional]
        .map(|s| header.count(s));
    if counts[0] != 1 || counts[1] != 0 || counts[2] != 0 || counts[3] > 1 {
        return None;
    }
    let (qname, len) = Dname::from_wire_prefix(message.get(HEADER_LEN..)?).ok()?;
    let at = HEADER_LEN + len;
    let fixed = message.get(at..at + 4)?;
    let qtype = Rtype(u16::from_be_bytes([*fixed.first()?, *fixed.get(1)?]));
    let qclass = Class(u16::from_be_bytes([*fixed.get(2)?, *fixed.get(3)?]));
    let rest = message.get(at + 4..)?;
    let (edns, cookie) = match counts[3] {
        0 if rest.is_empty() => (None, QueryCookie::Absent),
        1 => {
            let (edns, cookie) = fast_opt(rest)?;
            (Some(edns), cookie)
        }
        _ => return None,
    };
    let question = Question { name: qname, qtype, qclass };
    Some(Query {
        id: header.id,
        flags: header.flags,
        question: Some(question),
        edns,
        malformed: false,
        tsig: None,
        cookie,
    })
}

/// Just the question of a query in the common shape (one uncompressed question), for a
/// look-ahead: nothing else is checked, and `None` means "not that shape".
pub fn question_only(message: &[u8]) -> Option<(&Dname, Rtype)> {
    let header = Header::from_wire(message).ok()?;
    if header.flags.has(Flags::QR) || header.count(Section::Question) != 1 {
        return None;
    }
    let (qname, len) = Dname::from_wire_prefix(message.get(HEADER_LEN..)?).ok()?;
    let at = HEADER_LEN + len;
    let qtype = message.get(at..at + 2)?;
    Some((qname, Rtype(u16::from_be_bytes([*qtype.first()?, *qtype.get(1)?]))))
}

/// An OPT record that fills `rest` exactly: root owner, type OPT, and well-framed options.
fn fast_opt(rest: &[u8]) -> Option<(EdnsInfo, QueryCookie<'_>)> {
    let (head, options) = rest.split_at_checked(11)?;
    let [0, t0, t1, c0, c1, l0, l1, l2, l3, r0, r1] = *head else { return None };
    if u16::from_be_bytes([t0, t1]) != Rtype::OPT.0
        || usize::from(u16::from_be_bytes([r0, r1])) != options.len()
    {
        return None;
    }
    let edns = Edns::from_record(
        Class(u16::from_be_bytes([c0, c1])),
        u32::from_be_bytes([l0, l1, l2, l3]),
        options,
    )
    .ok()?;
    Some(edns_info(&edns))
}

/// What the response needs of an OPT record, and its first COOKIE option (RFC 7873
/// §5.2: only the first counts).
fn edns_info<'a>(e: &Edns<'a>) -> (EdnsInfo, QueryCookie<'a>) {
    let (mut nsid, mut keepalive, mut cookie) = (false, false, QueryCookie::Absent);
    for option in e.options() {
        nsid |= option.code == OptionCode::NSID;
        keepalive |= option.code == OptionCode::TCP_KEEPALIVE;
        if option.code == OptionCode::COOKIE && cookie == QueryCookie::Absent {
            cookie = QueryCookie::Unchecked(option.data);
        }
    }
    let info = EdnsInfo {
        udp_payload: e.udp_payload_size(),
        version: e.version,
        dnssec_ok: e.dnssec_ok(),
        nsid,
        keepalive,
    };
    (info, cookie)
}

/// What the general reader made of a query: the query without its question, the
/// question (its name decompressed), and where bytes after the last item begin.
struct General<'a> {
    query: Query<'a>,
    question: Option<(NameBuf, Rtype, Class)>,
    trailing_at: Option<usize>,
}

/// Everything else, through the general reader.
fn general<'a>(message: &'a [u8], header: &Header) -> General<'a> {
    let query = Query {
        id: header.id,
        flags: header.flags,
        question: None,
        edns: None,
        malformed: false,
        tsig: None,
        cookie: QueryCookie::Absent,
    };
    let mut read = General { query, question: None, trailing_at: None };
    let Ok(mut reader) = MessageReader::new(message) else {
        read.query.malformed = true;
        return read;
    };
    // No question is for `precheck` to judge (by opcode); more than one is malformed.
    if header.count(Section::Question) > 1 {
        read.query.malformed = true;
    }
    match reader.question() {
        Ok(Some(q)) if !read.query.malformed => read.question = Some((q.name, q.qtype, q.qclass)),
        Ok(_) => {}
        Err(Error::TrailingData { offset }) => {
            read.trailing_at = Some(offset);
            return read;
        }
        Err(_) => {
            read.query.malformed = true;
            return read;
        }
    }
    match reader.finish() {
        Ok(()) => {}
        Err(Error::TrailingData { offset }) => {
            read.trailing_at = Some(offset);
            return read;
        }
        // A bad OPT record is not echoed (RFC 6891 §6.1.1: FORMERR without OPT).
        Err(Error::BadOpt { .. }) => {
            read.query.malformed = true;
            return read;
        }
        Err(_) => read.query.malformed = true,
    }
    if let Some((edns, cookie)) = reader.edns().map(edns_info) {
        read.query.edns = Some(edns);
        read.query.cookie = cookie;
    }
    read.query.tsig = reader.tsig_offset();
    read
}

/// The response code for queries the engine refuses before looking at zones.
///
/// An opcode other than QUERY, NOTIFY and UPDATE is NOTIMP (RFC 1035 §4.1.1), with or
/// without a question — DSO (6) included, which a server without it answers so (RFC
/// 8490 §5.1.1). A body that reads as a question and an OPT record is echoed and judged
/// first, as Knot DNS does (BADVERS for EDNS version 1); any other body (DSO TLVs,
/// trailing bytes, two questions) gets NOTIMP with the header alone, as NSD answers.
/// Such an opcode with a question passes here, and the caller answers NOTIMP.
///
/// With cookies on, a malformed COOKIE option is FORMERR (RFC 7873 §5.2.2), and a QUERY
/// without a question but with a cookie asks for a server cookie: NOERROR, the cookie in
/// the OPT record (RFC 7873 §5.4, as BIND answers).
pub fn precheck(query: &Query<'_>) -> Option<Rcode> {
    if query.malformed || query.question.is_none() {
        return Some(without_question(query));
    }
    if query.edns.is_some_and(|e| e.version > 0) {
        return Some(Rcode::BADVERS); // RFC 6891 §6.1.3
    }
    if matches!(query.cookie, QueryCookie::Malformed) {
        return Some(Rcode::FORMERR);
    }
    None
}

/// [`precheck`] for a query without a (readable) question.
#[cold]
fn without_question(query: &Query<'_>) -> Rcode {
    let known = known_layout(query.flags.opcode());
    if query.malformed {
        return if known { Rcode::FORMERR } else { Rcode::NOTIMP };
    }
    if query.edns.is_some_and(|e| e.version > 0) {
        Rcode::BADVERS // RFC 6891 §6.1.3
    } else if matches!(query.cookie, QueryCookie::Malformed) {
        Rcode::FORMERR
    } else if query.flags.opcode() == Opcode::QUERY && query.cookie.reply().is_some() {
        Rcode::NOERROR
    } else if known {
        Rcode::FORMERR // RFC 1035 §4.1.2: a query asks one question
    } else {
        Rcode::NOTIMP
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{query, Ask};

    #[test]
    fn common_queries_take_the_fast_path_and_agree_with_the_reader() {
        for ask in [Ask { edns: None, ..Ask::default() }, Ask::default(), crate::tests::dnssec()] {
            let q = query("www.Example.", Rtype::AAAA, ask);
            let header = Header::from_wire(&q).unwrap();
            let fast = fast(&q, &header).expect("fast path");
            let general = general(&q, &header);
            assert_eq!(general.trailing_at, None);
            let (f, (name, qtype, qclass)) = (fast.question.unwrap(), general.question.unwrap());
            assert_eq!(f.qname().as_wire(), name.as_wire());
            assert_eq!((f.qtype, f.qclass), (qtype, qclass));
            let (qname, only_type) = question_only(&q).expect("question");
            assert_eq!((qname.as_wire(), only_type), (name.as_wire(), qtype));
            assert_eq!(fast.edns, general.query.edns);
            assert!(!fast.malformed && !general.query.malformed);
        }
    }

    #[test]
    fn unusual_queries_leave_the_fast_path() {
        let mut q = query("example.", Rtype::A, Ask::default());
        q.push(0); // trailing byte
        assert!(fast(&q, &Header::from_wire(&q).unwrap()).is_none());
        let mut two = query("example.", Rtype::A, Ask { edns: None, ..Ask::default() });
        two[5] = 2;
        assert!(fast(&two, &Header::from_wire(&two).unwrap()).is_none());
        assert!(question_only(&two).is_none(), "two questions");
    }
}
