//! What a query must be to be answered on DoQ; anything else is a protocol error that
//! closes the connection (RFC 9250 §4.3.3).
//!
//! * Its message ID is 0 (§4.2.1): the stream says which answer is whose.
//! * It carries no edns-tcp-keepalive option (§5.5.2): QUIC has its own idle timeout.
//!
//! The common shape (one question, then at most an OPT record) is read in place;
//! anything else goes through tern-wire's message reader. A message that does not read
//! is left to the handler (which answers FORMERR): only a keepalive option read in full
//! is refused here.

use tern_wire::edns::{Edns, OptionCode};
use tern_wire::message::MessageReader;
use tern_wire::{Class, Rtype};

use super::early::question_end;

/// Whether `message` (a DNS message, ID first) may be answered on DoQ.
pub fn acceptable(message: &[u8]) -> bool {
    message.get(..2) == Some(&[0, 0]) && !asks_keepalive(message)
}

/// Whether the OPT record of `message` carries an edns-tcp-keepalive option.
fn asks_keepalive(message: &[u8]) -> bool {
    let Some(&[_, _, _, _, 0, 1, an0, an1, ns0, ns1, ar0, ar1]) = message.get(..12) else {
        return false;
    };
    match ([an0, an1, ns0, ns1], [ar0, ar1]) {
        (_, [0, 0]) => false,
        ([0, 0, 0, 0], [0, 1]) => match opt_alone(message) {
            Some(edns) => has_keepalive(&edns),
            None => general(message),
        },
        _ => general(message),
    }
}

/// The options of the OPT record that ends `message` right after its one question, if
/// that is its shape.
fn opt_alone(message: &[u8]) -> Option<Edns<'_>> {
    let rest = message.get(question_end(message)?..)?;
    let (head, options) = rest.split_at_checked(11)?;
    let [0, t0, t1, c0, c1, l0, l1, l2, l3, r0, r1] = *head else { return None };
    if Rtype(u16::from_be_bytes([t0, t1])) != Rtype::OPT
        || usize::from(u16::from_be_bytes([r0, r1])) != options.len()
    {
        return None;
    }
    let ttl = u32::from_be_bytes([l0, l1, l2, l3]);
    Edns::from_record(Class(u16::from_be_bytes([c0, c1])), ttl, options).ok()
}

/// Any other shape: the OPT record as the message reader finds it.
fn general(message: &[u8]) -> bool {
    let Ok(mut reader) = MessageReader::new(message) else { return false };
    let _ = reader.finish();
    reader.edns().is_some_and(has_keepalive)
}

fn has_keepalive(edns: &Edns<'_>) -> bool {
    edns.options().any(|option| option.code == OptionCode::TCP_KEEPALIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query for `example.` A with ID `id`, and an OPT record with `options` if some.
    fn query(id: u16, options: Option<&[u8]>) -> Vec<u8> {
        let mut m = id.to_be_bytes().to_vec();
        m.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0, u8::from(options.is_some())]);
        m.extend_from_slice(b"\x07example\x00\x00\x01\x00\x01");
        if let Some(options) = options {
            m.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0]);
            m.extend_from_slice(&(options.len() as u16).to_be_bytes());
            m.extend_from_slice(options);
        }
        m
    }

    #[test]
    fn id_zero_and_no_keepalive() {
        assert!(acceptable(&query(0, None)));
        assert!(acceptable(&query(0, Some(b""))));
        assert!(acceptable(&query(0, Some(b"\x00\x03\x00\x00"))), "NSID");
        assert!(!acceptable(&query(7, None)), "ID 7");
        assert!(!acceptable(&query(0, Some(b"\x00\x0b\x00\x00"))), "keepalive");
        assert!(
            !acceptable(&query(0, Some(b"\x00\x03\x00\x00\x00\x0b\x00\x00"))),
            "NSID, keepalive"
        );
    }

    #[test]
    fn other_shapes_are_read_in_full() {
        // The OPT record after a record of the authority section (an odd query).
        let mut m = query(0, None);
        m[9] = 1;
        m.extend_from_slice(
            b"\x07example\x00\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\xc0\x00\x02\x01",
        );
        let plain = m.clone();
        m[11] = 1;
        m.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 4, 0, 11, 0, 0]);
        assert!(!acceptable(&m), "keepalive after an authority record");
        let mut without = plain;
        without[11] = 1;
        without.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0]);
        assert!(acceptable(&without));
        // Not a message that reads: left to the handler.
        let mut cut = query(0, Some(b"\x00\x0b\x00\x00"));
        cut.truncate(cut.len() - 3);
        assert!(acceptable(&cut));
    }
}
