//! EDNS(0) (RFC 6891): the OPT pseudo-record and its options.
//!
//! [`Edns`] is a view of a received OPT record: UDP payload size, extended RCODE, version,
//! flags (DO, RFC 3225) and the raw option list, whose TLV framing is checked when the
//! view is made (RFC 6891 §6.1.2). Options are read with [`Edns::options`] and decoded on
//! demand by the typed parsers of [`EdnsOption`]: NSID (RFC 5001), COOKIE (RFC 7873, with
//! RFC 9018 server cookies in [`cookie`]), EDNS Client Subnet (RFC 7871, [`subnet`]), TCP
//! keepalive (RFC 7828), padding (RFC 7830 / RFC 8467) and Extended DNS Errors (RFC 8914,
//! [`ede`]). Unknown options are kept as raw bytes. Building an OPT record for a response
//! is [`OptBuilder`] (from [`MessageWriter::push_opt`](crate::message::MessageWriter)).

pub mod build;
pub mod cookie;
pub mod ede;
pub mod subnet;

use std::fmt;

use crate::error::{Error, Result};
use crate::message::Flags;
use crate::types::{Class, Rcode};

pub use build::{padding_len, OptBuilder};
pub use cookie::{Cookie, CookieStatus, ServerSecret};
pub use ede::{EdeCode, ExtendedError};
pub use subnet::ClientSubnet;

/// The EDNS version Tern speaks (RFC 6891 §6.1.3).
pub const VERSION: u8 = 0;
/// Smallest UDP payload size a requestor may advertise; smaller values mean 512
/// (RFC 6891 §6.2.5).
pub const MIN_UDP_PAYLOAD: u16 = 512;

/// An EDNS option code (IANA "DNS EDNS0 Option Codes (OPT)").
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct OptionCode(pub u16);

impl OptionCode {
    /// Name server identifier (RFC 5001).
    pub const NSID: OptionCode = OptionCode(3);
    /// DNSSEC algorithms understood (RFC 6975).
    pub const DAU: OptionCode = OptionCode(5);
    /// DS hash understood (RFC 6975).
    pub const DHU: OptionCode = OptionCode(6);
    /// NSEC3 hash understood (RFC 6975).
    pub const N3U: OptionCode = OptionCode(7);
    /// Client subnet (RFC 7871).
    pub const CLIENT_SUBNET: OptionCode = OptionCode(8);
    /// Zone expiry (RFC 7314).
    pub const EXPIRE: OptionCode = OptionCode(9);
    /// DNS cookie (RFC 7873).
    pub const COOKIE: OptionCode = OptionCode(10);
    /// TCP keepalive (RFC 7828).
    pub const TCP_KEEPALIVE: OptionCode = OptionCode(11);
    /// Padding (RFC 7830).
    pub const PADDING: OptionCode = OptionCode(12);
    /// CHAIN query (RFC 7901).
    pub const CHAIN: OptionCode = OptionCode(13);
    /// Key tag (RFC 8145).
    pub const KEY_TAG: OptionCode = OptionCode(14);
    /// Extended DNS error (RFC 8914).
    pub const EXTENDED_ERROR: OptionCode = OptionCode(15);
    /// Report channel (RFC 9567).
    pub const REPORT_CHANNEL: OptionCode = OptionCode(18);
    /// Zone version (RFC 9660).
    pub const ZONEVERSION: OptionCode = OptionCode(19);

    /// The registry mnemonic, if the code has one Tern knows.
    pub fn mnemonic(self) -> Option<&'static str> {
        Some(match self.0 {
            3 => "NSID",
            5 => "DAU",
            6 => "DHU",
            7 => "N3U",
            8 => "ECS",
            9 => "EXPIRE",
            10 => "COOKIE",
            11 => "TCP-KEEPALIVE",
            12 => "PADDING",
            13 => "CHAIN",
            14 => "KEY-TAG",
            15 => "EDE",
            18 => "REPORT-CHANNEL",
            19 => "ZONEVERSION",
            _ => return None,
        })
    }
}

impl fmt::Display for OptionCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mnemonic() {
            Some(m) => f.write_str(m),
            None => write!(f, "OPT{}", self.0),
        }
    }
}

impl fmt::Debug for OptionCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A received OPT record (RFC 6891 §6.1.2–§6.1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edns<'a> {
    /// The requestor's UDP payload size, as sent (see [`Edns::udp_payload_size`]).
    pub udp_payload: u16,
    /// The upper 8 bits of the 12-bit RCODE.
    pub extended_rcode: u8,
    /// The EDNS version.
    pub version: u8,
    /// The flags word (DO is the top bit; the rest must be zero, RFC 6891 §6.1.4).
    pub flags: u16,
    options: &'a [u8],
    /// Offset of the option list in the message (0 when not read from a message).
    offset: usize,
}

impl<'a> Edns<'a> {
    /// The DNSSEC OK flag (RFC 3225, RFC 6891 §6.1.4).
    pub const DO: u16 = 0x8000;

    /// Reads the OPT record's CLASS, TTL and RDATA, checking the option framing. Error
    /// offsets are relative to the RDATA.
    pub fn from_record(class: Class, ttl: u32, rdata: &'a [u8]) -> Result<Edns<'a>> {
        let [extended_rcode, version, f0, f1] = ttl.to_be_bytes();
        let edns = Edns {
            udp_payload: class.0,
            extended_rcode,
            version,
            flags: u16::from_be_bytes([f0, f1]),
            options: rdata,
            offset: 0,
        };
        let mut options = edns.options();
        for _ in options.by_ref() {}
        match options.error {
            Some(offset) => Err(Error::BadOpt { offset, reason: "option runs past the OPT RDATA" }),
            None => Ok(edns),
        }
    }

    /// The same view, with option offsets counted from `offset` in the message.
    pub(crate) fn with_offset(self, offset: usize) -> Edns<'a> {
        Edns { offset, ..self }
    }

    /// True when the DO bit is set.
    pub fn dnssec_ok(&self) -> bool {
        self.flags & Edns::DO != 0
    }

    /// The UDP payload size to honour: values below 512 count as 512 (RFC 6891 §6.2.5).
    pub fn udp_payload_size(&self) -> u16 {
        self.udp_payload.max(MIN_UDP_PAYLOAD)
    }

    /// The full 12-bit RCODE, given the header's flags (RFC 6891 §6.1.3).
    pub fn rcode(&self, header: Flags) -> Rcode {
        Rcode::from_parts(header.rcode_bits(), self.extended_rcode)
    }

    /// The raw option list.
    pub fn raw_options(&self) -> &'a [u8] {
        self.options
    }

    /// The options in wire order.
    pub fn options(&self) -> Options<'a> {
        Options { rest: self.options, offset: self.offset, error: None }
    }

    /// The first option with `code` (RFC 7873 §5.2: only the first COOKIE counts).
    pub fn option(&self, code: OptionCode) -> Option<EdnsOption<'a>> {
        self.options().find(|o| o.code == code)
    }
}

/// Iterator over the options of an OPT record.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    rest: &'a [u8],
    offset: usize,
    /// Set when the framing broke, at that offset.
    error: Option<usize>,
}

impl<'a> Iterator for Options<'a> {
    type Item = EdnsOption<'a>;

    fn next(&mut self) -> Option<EdnsOption<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let parsed = self.rest.split_first_chunk::<4>().and_then(|([c0, c1, l0, l1], tail)| {
            let len = usize::from(u16::from_be_bytes([*l0, *l1]));
            let (data, rest) = tail.split_at_checked(len)?;
            Some((OptionCode(u16::from_be_bytes([*c0, *c1])), data, rest))
        });
        let Some((code, data, rest)) = parsed else {
            self.error = Some(self.offset);
            self.rest = &[];
            return None;
        };
        let option = EdnsOption { code, data, offset: self.offset + 4 };
        self.offset += 4 + data.len();
        self.rest = rest;
        Some(option)
    }
}

/// One EDNS option: its code and raw data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdnsOption<'a> {
    /// The option code.
    pub code: OptionCode,
    /// The option data (OPTION-LENGTH bytes).
    pub data: &'a [u8],
    /// Offset of the data in the message (relative to the OPT RDATA if not from a
    /// message), for error reports.
    pub offset: usize,
}

impl<'a> EdnsOption<'a> {
    /// Decodes a COOKIE option (RFC 7873 §4, length rules of §5.2.2).
    pub fn cookie(&self) -> Result<Cookie<'a>> {
        Cookie::parse(self.data).map_err(|reason| self.error(reason))
    }

    /// Decodes an EDNS Client Subnet option (RFC 7871 §6).
    pub fn client_subnet(&self) -> Result<ClientSubnet> {
        ClientSubnet::parse(self.data).map_err(|reason| self.error(reason))
    }

    /// Decodes a TCP keepalive option (RFC 7828 §3.1): no data in queries, a timeout in
    /// units of 100 ms in responses. Other lengths are malformed.
    pub fn tcp_keepalive(&self) -> Result<Option<u16>> {
        match *self.data {
            [] => Ok(None),
            [a, b] => Ok(Some(u16::from_be_bytes([a, b]))),
            _ => Err(self.error("TCP keepalive option length is not 0 or 2")),
        }
    }

    /// Decodes an Extended DNS Error option (RFC 8914 §2).
    pub fn extended_error(&self) -> Result<ExtendedError<'a>> {
        ExtendedError::parse(self.data).map_err(|reason| self.error(reason))
    }

    fn error(&self, reason: &'static str) -> Error {
        Error::BadOpt { offset: self.offset, reason }
    }
}

#[cfg(test)]
mod tests;
