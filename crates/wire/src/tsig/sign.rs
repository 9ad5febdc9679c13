//! Signing: the TSIG digest (RFC 8945 §4.3) and appending the TSIG record (§4.2).
//!
//! Digest of a request or a single response (§4.3.1–§4.3.3):
//! `[request MAC size | request MAC] message variables`, where the variables are the key
//! name and algorithm in canonical (lower-case) form, CLASS ANY, TTL 0, Time Signed,
//! Fudge, Error, Other Len and Other Data. Later messages of a sequence (§5.3.1) digest
//! `prior MAC size | prior MAC | message | Time Signed | Fudge` only.
//!
//! Error responses (§5.3.2): BADKEY and BADSIG are answered unsigned (MAC size 0);
//! BADTIME is signed, keeps the request's Time Signed and carries the server's time in
//! Other Data; BADTRUNC is signed.

use crate::error::{Error, Result};
use crate::message::writer::Rr;
use crate::message::{MessageWriter, Section};
use crate::name::{Dname, MAX_NAME_LEN};
use crate::tsig::hmac;
use crate::tsig::verify::{TsigOutcome, TsigStatus};
use crate::tsig::{Key, Mac, DEFAULT_FUDGE, MAX_MAC_LEN};
use crate::types::{Class, Rcode, Rtype};

/// The fields of a TSIG record to write, besides key and MAC.
#[derive(Debug, Clone, Copy)]
pub struct TsigFields<'p> {
    /// Time Signed (seconds since the epoch).
    pub time_signed: u64,
    /// Fudge.
    pub fudge: u16,
    /// TSIG error.
    pub error: Rcode,
    /// Other Data.
    pub other: &'p [u8],
}

impl TsigFields<'_> {
    /// Plain fields for signing at `now`.
    pub fn at(now: u64) -> TsigFields<'static> {
        TsigFields { time_signed: now, fudge: DEFAULT_FUDGE, error: Rcode::NOERROR, other: &[] }
    }
}

impl MessageWriter<'_> {
    /// Signs the message as written so far and appends the TSIG record, using the full
    /// size limit (reserve room for it). `request_mac` is the request's MAC when signing
    /// a response. Returns the MAC, the prior MAC of a following sequence message.
    pub fn sign_tsig(
        &mut self,
        key: &Key,
        request_mac: Option<&[u8]>,
        fields: &TsigFields<'_>,
    ) -> Result<Mac> {
        let mut ctx = key.context();
        if let Some(request_mac) = request_mac {
            digest_mac(&mut ctx, request_mac);
        }
        ctx.update(self.as_bytes());
        digest_variables(&mut ctx, key.name(), key.algorithm().name(), fields);
        let mac = Mac::from_slice(ctx.sign().as_ref());
        self.append_tsig(key.name(), key.algorithm().name(), &mac, fields)?;
        Ok(mac)
    }

    /// Appends the TSIG record a server's response needs after verifying the request
    /// (RFC 8945 §5.3, §5.3.2). The caller sets the RCODE (NOTAUTH for TSIG errors).
    /// Returns the MAC of a signed response.
    pub fn push_tsig_response(
        &mut self,
        outcome: &TsigOutcome<'_>,
        now: u64,
    ) -> Result<Option<Mac>> {
        let request_mac = Some(outcome.mac.as_slice());
        let signed = |error: Rcode| TsigFields { error, ..TsigFields::at(now) };
        match (outcome.status, outcome.key) {
            (TsigStatus::Ok, Some(key)) => {
                self.sign_tsig(key, request_mac, &signed(Rcode::NOERROR)).map(Some)
            }
            (TsigStatus::BadTrunc, Some(key)) => {
                self.sign_tsig(key, request_mac, &signed(Rcode::BADTRUNC)).map(Some)
            }
            (TsigStatus::BadTime, Some(key)) => {
                let other = time_bytes(now);
                let fields = TsigFields {
                    time_signed: outcome.time_signed,
                    fudge: outcome.fudge,
                    error: Rcode::BADTIME,
                    other: &other,
                };
                self.sign_tsig(key, request_mac, &fields).map(Some)
            }
            (status, _) => {
                let error = match status {
                    TsigStatus::BadSig => Rcode::BADSIG,
                    _ => Rcode::BADKEY,
                };
                let fields = TsigFields { error, fudge: outcome.fudge, ..TsigFields::at(now) };
                self.append_tsig(&outcome.key_name, &outcome.algorithm, &Mac::EMPTY, &fields)?;
                Ok(None)
            }
        }
    }

    /// Appends a TSIG record with the given MAC (original ID = this message's ID).
    fn append_tsig(
        &mut self,
        key_name: &Dname,
        algorithm: &Dname,
        mac: &Mac,
        fields: &TsigFields<'_>,
    ) -> Result<()> {
        let mut rdata = [0u8; MAX_NAME_LEN + 16 + MAX_MAC_LEN + 64];
        let other_len = u16::try_from(fields.other.len()).map_err(|_| Error::NoSpace)?;
        let id = self.header().id;
        let parts: [&[u8]; 9] = [
            algorithm.as_wire(),
            &time_bytes(fields.time_signed),
            &fields.fudge.to_be_bytes(),
            &(mac.as_slice().len() as u16).to_be_bytes(),
            mac.as_slice(),
            &id.to_be_bytes(),
            &fields.error.0.to_be_bytes(),
            &other_len.to_be_bytes(),
            fields.other,
        ];
        let mut len = 0usize;
        for part in parts {
            let dst = rdata.get_mut(len..len + part.len()).ok_or(Error::NoSpace)?;
            dst.copy_from_slice(part);
            len += part.len();
        }
        let rdata = rdata.get(..len).unwrap_or(&[]);
        let limit = self.limit();
        let rr = Rr {
            owner: key_name,
            compress_owner: false,
            rtype: Rtype::TSIG,
            class: Class::ANY,
            ttl: 0,
            rdata,
        };
        self.push_record_within(Section::Additional, &rr, limit)
    }
}

/// Bytes a TSIG record signed with `key` takes (Other Data empty): what to
/// [`reserve`](MessageWriter::reserve) before writing a message that will be signed.
pub fn record_len(key: &Key) -> usize {
    // Owner, type, class, TTL, RDLENGTH; algorithm, time (6), fudge, MAC size, MAC,
    // original ID, error, other length.
    key.name().len() + 10 + key.algorithm().name().len() + 6 + 2 + 2 + key.algorithm().mac_len() + 6
}

/// Signs the messages of a response sequence (zone transfers, RFC 8945 §5.3.1): the
/// first covers the request MAC and all variables; each later signed one covers the prior
/// MAC, the unsigned messages sent since ([`skip`](Self::skip)), itself and the timers.
pub struct SequenceSigner {
    key: Key,
    prior: Mac,
    first: bool,
    pending: Option<hmac::Context>,
}

impl std::fmt::Debug for SequenceSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SequenceSigner")
            .field("key", &self.key)
            .field("prior", &self.prior)
            .field("first", &self.first)
            .finish()
    }
}

impl SequenceSigner {
    /// Starts a sequence answering a request whose MAC was `request_mac`.
    pub fn new(key: &Key, request_mac: &[u8]) -> SequenceSigner {
        SequenceSigner {
            key: key.clone(),
            prior: Mac::from_slice(request_mac),
            first: true,
            pending: None,
        }
    }

    /// The key signing the sequence.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// Signs the next message at `now`.
    pub fn sign(&mut self, writer: &mut MessageWriter<'_>, now: u64) -> Result<Mac> {
        let fields = TsigFields::at(now);
        let mac = if self.first {
            writer.sign_tsig(&self.key, Some(self.prior.as_slice()), &fields)?
        } else {
            let mut ctx = self.pending.take().unwrap_or_else(|| self.start());
            ctx.update(writer.as_bytes());
            digest_timers(&mut ctx, fields.time_signed, fields.fudge);
            let mac = Mac::from_slice(ctx.sign().as_ref());
            writer.append_tsig(self.key.name(), self.key.algorithm().name(), &mac, &fields)?;
            mac
        };
        self.first = false;
        self.prior = mac;
        Ok(mac)
    }

    /// Sends `msg` unsigned: it is covered by the next signed message. The first message
    /// must be signed; at most 99 in a row may be skipped (the caller counts).
    pub fn skip(&mut self, msg: &[u8]) -> Result<()> {
        if self.first {
            return Err(Error::BadTsig { offset: 0, reason: "first message must be signed" });
        }
        let mut ctx = self.pending.take().unwrap_or_else(|| self.start());
        ctx.update(msg);
        self.pending = Some(ctx);
        Ok(())
    }

    fn start(&self) -> hmac::Context {
        chained_context(&self.key, &self.prior)
    }
}

/// A digest context for a later message of a sequence: it starts with the prior MAC.
pub(crate) fn chained_context(key: &Key, prior: &Mac) -> hmac::Context {
    let mut ctx = key.context();
    digest_mac(&mut ctx, prior.as_slice());
    ctx
}

/// Digests a MAC preceded by its 2-byte length (request MAC, prior MAC).
pub(crate) fn digest_mac(ctx: &mut hmac::Context, mac: &[u8]) {
    ctx.update(&(mac.len() as u16).to_be_bytes());
    ctx.update(mac);
}

/// Digests the TSIG variables (RFC 8945 §4.3.3).
pub(crate) fn digest_variables(
    ctx: &mut hmac::Context,
    key_name: &Dname,
    algorithm: &Dname,
    fields: &TsigFields<'_>,
) {
    digest_lowercase(ctx, key_name);
    ctx.update(&Class::ANY.0.to_be_bytes());
    ctx.update(&0u32.to_be_bytes());
    digest_lowercase(ctx, algorithm);
    digest_timers(ctx, fields.time_signed, fields.fudge);
    ctx.update(&fields.error.0.to_be_bytes());
    ctx.update(&(fields.other.len() as u16).to_be_bytes());
    ctx.update(fields.other);
}

/// Digests Time Signed and Fudge.
pub(crate) fn digest_timers(ctx: &mut hmac::Context, time_signed: u64, fudge: u16) {
    ctx.update(&time_bytes(time_signed));
    ctx.update(&fudge.to_be_bytes());
}

/// Digests a name in canonical form (RFC 4034 §6.2: lower case, uncompressed).
fn digest_lowercase(ctx: &mut hmac::Context, name: &Dname) {
    let mut lower = [0u8; MAX_NAME_LEN];
    for (dst, src) in lower.iter_mut().zip(name.as_wire()) {
        *dst = src.to_ascii_lowercase();
    }
    ctx.update(lower.get(..name.len()).unwrap_or(&[]));
}

/// A 48-bit big-endian time.
pub(crate) fn time_bytes(time: u64) -> [u8; 6] {
    let [_, _, a, b, c, d, e, f] = time.to_be_bytes();
    [a, b, c, d, e, f]
}
