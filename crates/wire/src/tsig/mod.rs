//! Transaction signatures (TSIG, RFC 8945) with HMAC-MD5, HMAC-SHA1 and HMAC-SHA-2
//! (224/256/384/512): `aws-lc-rs` for the SHA family, RustCrypto for MD5 (the private
//! `hmac` module).
//!
//! * [`Key`]: a named shared secret and its algorithm; [`Keyring`] finds keys by name.
//! * [`TsigRecord`]: the TSIG record of a received message, found with
//!   [`TsigRecord::find`] (it must be the last record, RFC 8945 §5.1).
//! * Signing ([`sign`]): requests, responses (covering the request MAC), error responses
//!   following §5.3.2, and multi-message sequences (§5.3.1).
//! * Verification ([`verify`]): on the received bytes — the TSIG record is left out of
//!   the digest, ARCOUNT is decremented and the original ID put back (§4.3) — with the
//!   checks of §5.2 in order: key, MAC (truncation rules of §5.2.2.1), time, truncation
//!   policy. Outcomes (BADKEY, BADSIG, BADTIME, BADTRUNC) are values ([`TsigStatus`]);
//!   only a malformed TSIG is an error ([`Error::BadTsig`], FORMERR). A server checks
//!   requests with [`verify_request`], which caps the fudge the client chose.
//! * Replays ([`replay`]): the signatures of requests accepted lately, so that a
//!   captured request sent again inside the time window is told apart.
//!
//! Time is always an argument (seconds since the epoch); nothing here reads a clock.

mod hmac;
pub mod replay;
pub mod sign;
pub mod verify;

use std::fmt;

use crate::error::{Error, Result};
use crate::message::decompress::read_name;
use crate::message::MessageReader;
use crate::name::{Dname, Name, NameBuf};
use crate::rdata::RdataReader;
use crate::types::{Class, Rcode};

pub use replay::{Replays, Seen};
pub use sign::{record_len, SequenceSigner, TsigFields};
pub use verify::{
    verify_message, verify_request, SequenceStep, SequenceVerifier, TsigOutcome, TsigStatus,
};

/// The fudge Tern uses when signing (RFC 8945 §10 recommends 300 seconds).
pub const DEFAULT_FUDGE: u16 = 300;
/// Largest MAC of a supported algorithm (HMAC-SHA512).
pub const MAX_MAC_LEN: usize = 64;

/// A TSIG algorithm Tern implements (RFC 8945 §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// `hmac-md5.sig-alg.reg.int.` (optional; for old peers only).
    HmacMd5,
    /// `hmac-sha1.` (RFC 4635; MAY be supported).
    HmacSha1,
    /// `hmac-sha224.` (optional).
    HmacSha224,
    /// `hmac-sha256.` (mandatory).
    HmacSha256,
    /// `hmac-sha384.`
    HmacSha384,
    /// `hmac-sha512.`
    HmacSha512,
}

impl Algorithm {
    /// All supported algorithms.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::HmacMd5,
        Algorithm::HmacSha1,
        Algorithm::HmacSha224,
        Algorithm::HmacSha256,
        Algorithm::HmacSha384,
        Algorithm::HmacSha512,
    ];

    /// The algorithm's name in wire form, lower case (the form used in digests).
    pub fn name(self) -> &'static Dname {
        let wire: &'static [u8] = match self {
            Algorithm::HmacMd5 => b"\x08hmac-md5\x07sig-alg\x03reg\x03int\x00",
            Algorithm::HmacSha1 => b"\x09hmac-sha1\x00",
            Algorithm::HmacSha224 => b"\x0bhmac-sha224\x00",
            Algorithm::HmacSha256 => b"\x0bhmac-sha256\x00",
            Algorithm::HmacSha384 => b"\x0bhmac-sha384\x00",
            Algorithm::HmacSha512 => b"\x0bhmac-sha512\x00",
        };
        Dname::from_wire(wire).unwrap_or(Dname::ROOT)
    }

    /// The algorithm named `name` (any case), if supported.
    pub fn from_name(name: &Dname) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The algorithm named in presentation format, as BIND and Knot DNS configurations
    /// write it: `hmac-sha256` (any case, trailing dot optional), and `hmac-md5` for
    /// `hmac-md5.sig-alg.reg.int`.
    pub fn from_text(text: &str) -> Option<Algorithm> {
        if text.trim_end_matches('.').eq_ignore_ascii_case("hmac-md5") {
            return Some(Algorithm::HmacMd5);
        }
        let name: Name = text.parse().ok()?;
        Algorithm::from_name(&name)
    }

    /// The short name configurations use (`hmac-md5`, `hmac-sha256`, …).
    pub fn config_name(self) -> &'static str {
        match self {
            Algorithm::HmacMd5 => "hmac-md5",
            Algorithm::HmacSha1 => "hmac-sha1",
            Algorithm::HmacSha224 => "hmac-sha224",
            Algorithm::HmacSha256 => "hmac-sha256",
            Algorithm::HmacSha384 => "hmac-sha384",
            Algorithm::HmacSha512 => "hmac-sha512",
        }
    }

    /// Length of the full MAC.
    pub fn mac_len(self) -> usize {
        match self {
            Algorithm::HmacMd5 => 16,
            Algorithm::HmacSha1 => 20,
            Algorithm::HmacSha224 => 28,
            Algorithm::HmacSha256 => 32,
            Algorithm::HmacSha384 => 48,
            Algorithm::HmacSha512 => 64,
        }
    }

    /// Shortest MAC accepted at all: the larger of 10 bytes and half the full length
    /// (RFC 8945 §5.2.2.1).
    pub fn min_mac_len(self) -> usize {
        (self.mac_len() / 2).max(10)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.name().fmt(f)
    }
}

/// A TSIG key: name, algorithm and secret.
#[derive(Clone)]
pub struct Key {
    name: Name,
    algorithm: Algorithm,
    hmac: hmac::HmacKey,
    min_mac_len: usize,
}

impl Key {
    /// A key accepting any MAC truncation RFC 8945 §5.2.2.1 allows.
    pub fn new(name: Name, algorithm: Algorithm, secret: &[u8]) -> Key {
        let hmac = hmac::HmacKey::new(algorithm, secret);
        Key { name, algorithm, hmac, min_mac_len: algorithm.min_mac_len() }
    }

    /// A key whose secret is written in base64, as BIND's and Knot DNS's configurations
    /// write it (white space inside is ignored). An empty secret is refused.
    pub fn from_base64(
        name: Name,
        algorithm: Algorithm,
        secret: &str,
    ) -> std::result::Result<Key, &'static str> {
        let text: Vec<u8> = secret.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        let mut bytes = Vec::new();
        crate::rdata::encoding::decode_base64(&text, &mut bytes)?;
        if bytes.is_empty() {
            return Err("the secret is empty");
        }
        Ok(Key::new(name, algorithm, &bytes))
    }

    /// Local truncation policy (RFC 8945 §5.2.4): MACs shorter than `len` bytes (but
    /// allowed by §5.2.2.1) are answered with BADTRUNC.
    #[must_use]
    pub fn with_min_mac_len(mut self, len: usize) -> Key {
        self.min_mac_len = len.clamp(self.algorithm.min_mac_len(), self.algorithm.mac_len());
        self
    }

    /// The key name.
    pub fn name(&self) -> &Dname {
        &self.name
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The shortest MAC the local policy accepts.
    pub fn min_mac_len(&self) -> usize {
        self.min_mac_len
    }

    pub(crate) fn context(&self) -> hmac::Context {
        self.hmac.context()
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({} {})", self.name, self.algorithm)
    }
}

/// A secret in base64, as a key's configuration carries it (`ternd keygen`).
pub fn secret_to_base64(secret: &[u8]) -> String {
    let mut out = String::new();
    crate::rdata::encoding::write_base64(secret, &mut out);
    out
}

/// Finds keys by name.
pub trait Keyring {
    /// The key called `name` (case-insensitive), if known.
    fn find(&self, name: &Dname) -> Option<&Key>;
}

impl Keyring for [Key] {
    fn find(&self, name: &Dname) -> Option<&Key> {
        self.iter().find(|k| k.name() == name)
    }
}

impl Keyring for Key {
    fn find(&self, name: &Dname) -> Option<&Key> {
        (self.name() == name).then_some(self)
    }
}

/// A MAC, on the stack.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Mac {
    len: u8,
    bytes: [u8; MAX_MAC_LEN],
}

impl Mac {
    /// An empty MAC (unsigned error responses).
    pub const EMPTY: Mac = Mac { len: 0, bytes: [0; MAX_MAC_LEN] };

    /// Copies up to 64 bytes.
    pub fn from_slice(bytes: &[u8]) -> Mac {
        let mut mac = Mac::EMPTY;
        let len = bytes.len().min(MAX_MAC_LEN);
        if let (Some(dst), Some(src)) = (mac.bytes.get_mut(..len), bytes.get(..len)) {
            dst.copy_from_slice(src);
        }
        mac.len = len as u8;
        mac
    }

    /// The MAC bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

impl fmt::Debug for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mac(")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

/// Compares two byte strings in time that depends only on their lengths.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The TSIG record of a received message (RFC 8945 §4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsigRecord<'a> {
    /// Offset of the record in the message (where the digest stops).
    pub offset: usize,
    /// The key name (owner).
    pub key_name: NameBuf,
    /// CLASS (must be ANY).
    pub class: Class,
    /// TTL (must be 0).
    pub ttl: u32,
    /// The algorithm name, as sent.
    pub algorithm: &'a Dname,
    /// Time Signed, seconds since the epoch (48 bits).
    pub time_signed: u64,
    /// Fudge: seconds of error permitted in `time_signed`.
    pub fudge: u16,
    /// The MAC.
    pub mac: &'a [u8],
    /// The ID of the message as first signed.
    pub original_id: u16,
    /// The TSIG error (BADSIG = 16, BADKEY = 17, BADTIME = 18, BADTRUNC = 22).
    pub error: Rcode,
    /// Other Data (the server's time in BADTIME responses).
    pub other: &'a [u8],
}

impl<'a> TsigRecord<'a> {
    /// Validates the whole message and returns its TSIG record, or `None` if unsigned.
    pub fn find(msg: &'a [u8]) -> Result<Option<TsigRecord<'a>>> {
        let mut reader = MessageReader::new(msg)?;
        reader.finish()?;
        reader.tsig_offset().map(|offset| TsigRecord::parse_at(msg, offset)).transpose()
    }

    /// Decodes the TSIG record starting at `offset` (its owner name).
    pub fn parse_at(msg: &'a [u8], offset: usize) -> Result<TsigRecord<'a>> {
        let bad = |reason| Error::BadTsig { offset, reason };
        let (key_name, after) = read_name(msg, offset)?;
        let fixed = msg.get(after..after + 10).ok_or(bad("record cut short"))?;
        let mut fields = RdataReader::new(fixed);
        let _rtype = fields.u16()?;
        let class = Class(fields.u16()?);
        let ttl = fields.u32()?;
        let rdlength = usize::from(fields.u16()?);
        let start = after + 10;
        let rdata = msg.get(start..start + rdlength).ok_or(bad("RDATA cut short"))?;
        let mut r = RdataReader::new(rdata);
        let record = (|| {
            let algorithm = r.name()?;
            let time_signed = r.u48()?;
            let fudge = r.u16()?;
            let mac_len = usize::from(r.u16()?);
            let mac = r.bytes(mac_len)?;
            let original_id = r.u16()?;
            let error = Rcode(r.u16()?);
            let other_len = usize::from(r.u16()?);
            let other = r.bytes(other_len)?;
            r.finish()?;
            Ok(TsigRecord {
                offset,
                key_name,
                class,
                ttl,
                algorithm,
                time_signed,
                fudge,
                mac,
                original_id,
                error,
                other,
            })
        })();
        record.map_err(|_: Error| bad("malformed TSIG RDATA"))
    }
}

#[cfg(test)]
mod tests;
