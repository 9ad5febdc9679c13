//! The 12-byte message header (RFC 1035 §4.1.1, flags from RFC 2535 §6.1 and RFC 4035
//! §3.2 for AD/CD) and the four sections it counts.

use std::fmt;

use crate::error::{Error, Result};
use crate::types::{Opcode, Rcode};

/// Length of the fixed message header.
pub const HEADER_LEN: usize = 12;

/// The sections of a message, in wire order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// The question section (QDCOUNT).
    Question = 0,
    /// The answer section (ANCOUNT); the prerequisite section of an UPDATE.
    Answer = 1,
    /// The authority section (NSCOUNT); the update section of an UPDATE.
    Authority = 2,
    /// The additional section (ARCOUNT): glue, OPT, TSIG.
    Additional = 3,
}

impl Section {
    /// All sections in wire order.
    pub const ALL: [Section; 4] =
        [Section::Question, Section::Answer, Section::Authority, Section::Additional];

    /// The index of this section's count in [`Header::counts`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The section after this one.
    pub fn next(self) -> Option<Section> {
        match self {
            Section::Question => Some(Section::Answer),
            Section::Answer => Some(Section::Authority),
            Section::Authority => Some(Section::Additional),
            Section::Additional => None,
        }
    }
}

/// The second 16-bit word of the header: QR, opcode, AA, TC, RD, RA, Z, AD, CD, RCODE.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Flags(pub u16);

impl Flags {
    /// Query (0) or response (1).
    pub const QR: u16 = 0x8000;
    /// Authoritative answer.
    pub const AA: u16 = 0x0400;
    /// Truncated.
    pub const TC: u16 = 0x0200;
    /// Recursion desired.
    pub const RD: u16 = 0x0100;
    /// Recursion available.
    pub const RA: u16 = 0x0080;
    /// The reserved bit; must be zero (RFC 1035 §4.1.1).
    pub const Z: u16 = 0x0040;
    /// Authentic data (RFC 4035 §3.2.3, RFC 6840 §5.7).
    pub const AD: u16 = 0x0020;
    /// Checking disabled (RFC 4035 §3.2.2).
    pub const CD: u16 = 0x0010;

    /// True if every bit of `mask` is set.
    pub fn has(self, mask: u16) -> bool {
        self.0 & mask == mask
    }

    /// Sets or clears the bits of `mask`.
    pub fn set(&mut self, mask: u16, on: bool) {
        if on {
            self.0 |= mask;
        } else {
            self.0 &= !mask;
        }
    }

    /// The opcode (4 bits).
    pub fn opcode(self) -> Opcode {
        Opcode(((self.0 >> 11) & 0x0F) as u8)
    }

    /// Replaces the opcode.
    pub fn set_opcode(&mut self, opcode: Opcode) {
        self.0 = (self.0 & !0x7800) | (u16::from(opcode.0 & 0x0F) << 11);
    }

    /// The four RCODE bits of the header (the OPT record may extend them).
    pub fn rcode_bits(self) -> u8 {
        (self.0 & 0x000F) as u8
    }

    /// Replaces the four header RCODE bits with the low bits of `rcode`.
    pub fn set_rcode_bits(&mut self, rcode: Rcode) {
        self.0 = (self.0 & !0x000F) | u16::from(rcode.header_bits());
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Flags({}", self.opcode())?;
        let names = [
            (Flags::QR, " qr"),
            (Flags::AA, " aa"),
            (Flags::TC, " tc"),
            (Flags::RD, " rd"),
            (Flags::RA, " ra"),
            (Flags::Z, " z"),
            (Flags::AD, " ad"),
            (Flags::CD, " cd"),
        ];
        for (mask, name) in names {
            if self.has(mask) {
                f.write_str(name)?;
            }
        }
        write!(f, " rcode={})", self.rcode_bits())
    }
}

/// A decoded message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    /// The message ID.
    pub id: u16,
    /// Flags, opcode and the low RCODE bits.
    pub flags: Flags,
    /// QDCOUNT, ANCOUNT, NSCOUNT, ARCOUNT, indexed by [`Section::index`].
    pub counts: [u16; 4],
}

impl Header {
    /// Decodes the header at the start of `msg`.
    pub fn from_wire(msg: &[u8]) -> Result<Header> {
        let bytes: [u8; HEADER_LEN] = msg
            .get(..HEADER_LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or(Error::Truncated { offset: msg.len() })?;
        let [i0, i1, f0, f1, q0, q1, a0, a1, n0, n1, r0, r1] = bytes;
        let word = u16::from_be_bytes;
        Ok(Header {
            id: word([i0, i1]),
            flags: Flags(word([f0, f1])),
            counts: [word([q0, q1]), word([a0, a1]), word([n0, n1]), word([r0, r1])],
        })
    }

    /// Encodes the header.
    pub fn to_wire(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        let words =
            [self.id, self.flags.0, self.counts[0], self.counts[1], self.counts[2], self.counts[3]];
        for (dst, word) in out.chunks_exact_mut(2).zip(words) {
            dst.copy_from_slice(&word.to_be_bytes());
        }
        out
    }

    /// The number of entries in `section`.
    pub fn count(&self, section: Section) -> u16 {
        self.counts.get(section.index()).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        // RFC 1035 §4.1.1 layout: ID 0xbeef, QR|opcode 5 (UPDATE)|AA|RD|CD, rcode 3.
        let wire = [0xbe, 0xef, 0xad, 0x13, 0, 1, 0, 2, 0, 3, 0, 4];
        let h = Header::from_wire(&wire).unwrap();
        assert_eq!(h.id, 0xbeef);
        assert!(h.flags.has(Flags::QR | Flags::AA | Flags::RD | Flags::CD));
        assert!(!h.flags.has(Flags::TC));
        assert_eq!(h.flags.opcode(), Opcode::UPDATE);
        assert_eq!(h.flags.rcode_bits(), 3);
        assert_eq!(h.counts, [1, 2, 3, 4]);
        assert_eq!(h.count(Section::Authority), 3);
        assert_eq!(h.to_wire(), wire);
        assert_eq!(Header::from_wire(&wire[..11]), Err(Error::Truncated { offset: 11 }));
    }

    #[test]
    fn flag_setters() {
        let mut f = Flags::default();
        f.set(Flags::QR | Flags::TC, true);
        f.set_opcode(Opcode::NOTIFY);
        f.set_rcode_bits(Rcode::BADVERS);
        assert_eq!(f.0, 0x8000 | 0x2000 | 0x0200);
        f.set(Flags::TC, false);
        f.set_rcode_bits(Rcode::REFUSED);
        assert_eq!(f.0, 0xA005);
        assert_eq!(format!("{f:?}"), "Flags(NOTIFY qr rcode=5)");
    }
}
