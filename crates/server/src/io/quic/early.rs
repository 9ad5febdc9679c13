//! Which transactions may be answered from 0-RTT data, before the handshake is complete.
//!
//! 0-RTT data can be replayed by anyone who saw it (RFC 9001 §9.2), and the client's
//! address is not validated yet. RFC 9250 §4.5 counts QUERY and NOTIFY as replayable; a
//! server must not process other opcodes received in 0-RTT at once, and may queue them
//! until the handshake is complete. Tern answers only plain queries at once: a zone
//! transfer (AXFR, IXFR) is costly and allowed by the client's address, so it waits too,
//! as do NOTIFY (it starts a refresh) and UPDATE. A replayed handshake never completes,
//! so what waits is never processed for a replay.

use tern_wire::{Opcode, Rtype};

/// Whether `message` (a DNS message, ID first) may be answered from 0-RTT data: opcode
/// QUERY, one question, not a zone transfer. Anything that does not read as such waits.
pub fn replayable(message: &[u8]) -> bool {
    let Some(&[_, _, flags, _, 0, 1]) = message.get(..6) else { return false };
    if (flags >> 3) & 0x0f != Opcode::QUERY.0 {
        return false;
    }
    matches!(qtype(message), Some(t) if t != Rtype::AXFR && t != Rtype::IXFR)
}

/// The type of the question.
fn qtype(message: &[u8]) -> Option<Rtype> {
    let at = question_end(message)? - 4;
    let &[hi, lo] = message.get(at..at + 2)? else { return None };
    Some(Rtype(u16::from_be_bytes([hi, lo])))
}

/// Where the first question of `message` ends: its name is skipped label by label (a
/// pointer ends it), then its type and class.
pub fn question_end(message: &[u8]) -> Option<usize> {
    let mut at = 12;
    loop {
        let len = *message.get(at)?;
        match len {
            0 => break at += 1,
            1..=63 => at += 1 + usize::from(len),
            0xc0..=0xff => break at += 2,
            _ => return None,
        }
    }
    (at + 4 <= message.len()).then_some(at + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message with `flags` (the third header byte) and one question for
    /// `example.` of type `qtype`.
    fn message(flags: u8, qtype: u16) -> Vec<u8> {
        let mut m = vec![0, 0, flags, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        m.extend_from_slice(b"\x07example\x00");
        m.extend_from_slice(&qtype.to_be_bytes());
        m.extend_from_slice(&[0, 1]);
        m
    }

    #[test]
    fn plain_queries_only() {
        assert!(replayable(&message(0x01, 1)), "A, RD set");
        assert!(replayable(&message(0x00, 6)), "SOA");
        assert!(!replayable(&message(0x00, 252)), "AXFR");
        assert!(!replayable(&message(0x00, 251)), "IXFR");
        assert!(!replayable(&message(5 << 3, 6)), "UPDATE");
        assert!(!replayable(&message(4 << 3 | 0x04, 6)), "NOTIFY");
        assert!(!replayable(&message(2 << 3, 1)), "STATUS");
    }

    #[test]
    fn what_does_not_read_waits() {
        let whole = message(0x00, 1);
        assert!(!replayable(&whole[..whole.len() - 3]), "cut in the type");
        assert!(!replayable(&whole[..5]), "cut in the header");
        let mut two = whole.clone();
        two[5] = 2;
        assert!(!replayable(&two), "two questions");
        let mut bad_label = whole.clone();
        bad_label[12] = 0x40;
        assert!(!replayable(&bad_label));
        // A compressed name (unusual in a question, but harmless) ends at its pointer.
        let mut pointer = whole[..12].to_vec();
        pointer.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1]);
        assert!(replayable(&pointer));
    }
}
