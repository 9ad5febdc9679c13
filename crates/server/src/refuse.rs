//! The answer of a server that has no zone data to answer from: REFUSED (RFC 1035
//! §4.1.1: "the name server refuses to perform the specified operation for policy
//! reasons"), the rcode Knot DNS and NSD give for names outside their zones.
//!
//! `ternd` answers with this handler until a query engine is plugged in; it is also the
//! smallest correct [`Handler`]. The question is echoed when it can be read; responses
//! (QR set) and messages shorter than a header are dropped.

use tern_wire::{Dname, Rcode};

use crate::handler::{Handler, RequestContext};

/// Length of the DNS header (RFC 1035 §4.1.1).
const HEADER: usize = 12;

/// Answers every query with REFUSED (or FORMERR when its question cannot be read).
#[derive(Debug, Clone, Copy, Default)]
pub struct Refuser;

impl Handler for Refuser {
    type Batch = ();

    fn begin_batch(&self) {}

    fn handle(
        &self,
        _: &mut (),
        query: &[u8],
        _: &RequestContext,
        out: &mut [u8],
    ) -> Option<usize> {
        let header: &[u8; HEADER] = query.get(..HEADER)?.try_into().ok()?;
        let [id0, id1, flags0, flags1, qd0, qd1, ..] = *header;
        if flags0 & 0x80 != 0 {
            return None;
        }
        let question = match u16::from_be_bytes([qd0, qd1]) {
            1 => question_len(query.get(HEADER..)?),
            _ => None,
        };
        let rcode = if question.is_some() { Rcode::REFUSED } else { Rcode::FORMERR };
        let qlen = question.unwrap_or(0);
        let len = HEADER + qlen;
        let out = out.get_mut(..len)?;
        // QR set; opcode and RD copied; AA, TC, RA, Z, AD cleared; CD copied.
        let flags = [0x80 | (flags0 & 0x79), (flags1 & 0x10) | rcode.header_bits()];
        let qdcount = u16::from(question.is_some()).to_be_bytes();
        out.get_mut(..HEADER)?.copy_from_slice(&[
            id0, id1, flags[0], flags[1], qdcount[0], qdcount[1], 0, 0, 0, 0, 0, 0,
        ]);
        out.get_mut(HEADER..)?.copy_from_slice(query.get(HEADER..len)?);
        Some(len)
    }
}

/// Length of a question (uncompressed name, type, class) at the start of `bytes`.
fn question_len(bytes: &[u8]) -> Option<usize> {
    let (_, name_len) = Dname::from_wire_prefix(bytes).ok()?;
    let len = name_len + 4;
    (bytes.len() >= len).then_some(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::Transport;

    fn ctx() -> RequestContext {
        RequestContext {
            transport: Transport::Udp,
            client: "192.0.2.1:1234".parse().unwrap(),
            local: "192.0.2.53:53".parse().unwrap(),
            max_response: 1232,
            keepalive: None,
        }
    }

    fn answer(query: &[u8]) -> Option<Vec<u8>> {
        let mut out = [0u8; 1232];
        Refuser.handle(&mut (), query, &ctx(), &mut out).map(|len| out[..len].to_vec())
    }

    /// `www.example.com. IN A`, ID 0xbeef, RD and CD set, with an OPT record.
    const QUERY: &[u8] = b"\xbe\xef\x01\x10\x00\x01\x00\x00\x00\x00\x00\x01\
        \x03www\x07example\x03com\x00\x00\x01\x00\x01\
        \x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00";

    #[test]
    fn refuses_and_echoes_the_question() {
        let got = answer(QUERY).unwrap();
        let mut want = b"\xbe\xef\x81\x15\x00\x01\x00\x00\x00\x00\x00\x00".to_vec();
        want.extend_from_slice(b"\x03www\x07example\x03com\x00\x00\x01\x00\x01");
        assert_eq!(got, want);
    }

    #[test]
    fn unreadable_question_is_formerr() {
        let mut query = QUERY[..20].to_vec();
        query[5] = 1;
        assert_eq!(answer(&query).unwrap(), b"\xbe\xef\x81\x11\x00\x00\x00\x00\x00\x00\x00\x00");
        let mut two = QUERY.to_vec();
        two[5] = 2;
        assert_eq!(answer(&two).unwrap()[3], 0x11);
    }

    #[test]
    fn drops_responses_and_runts() {
        let mut response = QUERY.to_vec();
        response[2] |= 0x80;
        assert_eq!(answer(&response), None);
        assert_eq!(answer(&QUERY[..11]), None);
        assert_eq!(answer(b""), None);
    }

    #[test]
    fn no_room_means_no_answer() {
        let mut out = [0u8; 20];
        assert_eq!(Refuser.handle(&mut (), QUERY, &ctx(), &mut out), None);
    }
}
