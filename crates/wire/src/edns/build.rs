//! Writing the OPT record of an outgoing message (RFC 6891 §6.1.2) and its options.
//!
//! [`MessageWriter::push_opt`] appends the OPT record to the additional section using the
//! full size limit (the space a caller [`reserve`](MessageWriter::reserve)d for it), and
//! returns an [`OptBuilder`] that appends options one by one, keeping RDLENGTH right after
//! each. The extended RCODE comes from [`MessageWriter::set_rcode`], before or after.

use crate::edns::{EdeCode, OptionCode};
use crate::error::{Error, Result};
use crate::message::{MessageWriter, Section};
use crate::types::Rtype;

/// Length of an OPT record without options: root owner, type, class, TTL, RDLENGTH.
pub const OPT_FIXED_LEN: usize = 11;
/// Length of an option header (code and length).
pub const OPTION_HEADER_LEN: usize = 4;

impl<'b> MessageWriter<'b> {
    /// Appends the OPT record (one per message). `flags` is the EDNS flags word
    /// ([`Edns::DO`](super::Edns::DO) for DNSSEC OK).
    pub fn push_opt(
        &mut self,
        udp_payload: u16,
        version: u8,
        flags: u16,
    ) -> Result<OptBuilder<'_, 'b>> {
        if self.has_opt() {
            return Err(Error::Malformed { offset: self.len(), reason: "OPT already written" });
        }
        let start = self.len();
        let [t0, t1] = Rtype::OPT.0.to_be_bytes();
        let [c0, c1] = udp_payload.to_be_bytes();
        let [f0, f1] = flags.to_be_bytes();
        let rcode = self.rcode().extended_bits();
        // Root owner, TYPE, CLASS (payload size), TTL (extended RCODE, version, flags),
        // RDLENGTH 0.
        let record = [0, t0, t1, c0, c1, rcode, version, f0, f1, 0, 0];
        self.push_raw_record(Section::Additional, &record)?;
        self.set_opt_ttl_at(Some(start + 5));
        Ok(OptBuilder { writer: self, rdlength_at: start + 9, rdlength: 0 })
    }
}

/// Appends options to the OPT record just written.
#[derive(Debug)]
pub struct OptBuilder<'w, 'b> {
    writer: &'w mut MessageWriter<'b>,
    rdlength_at: usize,
    rdlength: u16,
}

impl OptBuilder<'_, '_> {
    /// Appends one option; on [`Error::NoSpace`] nothing is added.
    pub fn option(&mut self, code: OptionCode, data: &[u8]) -> Result<()> {
        self.option_parts(code, &[data])
    }

    /// Appends one option whose data is the concatenation of `parts`.
    fn option_parts(&mut self, code: OptionCode, parts: &[&[u8]]) -> Result<()> {
        let data_len: usize = parts.iter().map(|p| p.len()).sum();
        let data_len = u16::try_from(data_len).map_err(|_| Error::NoSpace)?;
        let total = data_len.checked_add(OPTION_HEADER_LEN as u16).ok_or(Error::NoSpace)?;
        let rdlength = self.rdlength.checked_add(total).ok_or(Error::NoSpace)?;
        let limit = self.writer.limit();
        if self.writer.len() + usize::from(total) > limit {
            return Err(Error::NoSpace);
        }
        let [c0, c1] = code.0.to_be_bytes();
        let [l0, l1] = data_len.to_be_bytes();
        self.writer.put(&[c0, c1, l0, l1], limit)?;
        for part in parts {
            self.writer.put(part, limit)?;
        }
        self.rdlength = rdlength;
        self.writer.patch(self.rdlength_at, &rdlength.to_be_bytes());
        Ok(())
    }

    /// NSID (RFC 5001 §2.3): the server's identifier.
    pub fn nsid(&mut self, id: &[u8]) -> Result<()> {
        self.option(OptionCode::NSID, id)
    }

    /// COOKIE (RFC 7873 §5.2): the client cookie echoed and the server cookie (8 to 32
    /// bytes, or empty).
    pub fn cookie(&mut self, client: &[u8; 8], server: &[u8]) -> Result<()> {
        if !server.is_empty() && !(8..=32).contains(&server.len()) {
            let offset = self.writer.len();
            return Err(Error::BadOpt { offset, reason: "server cookie is not 8 to 32 bytes" });
        }
        self.option_parts(OptionCode::COOKIE, &[client, server])
    }

    /// TCP keepalive (RFC 7828 §3.2.2): the idle timeout in units of 100 ms.
    pub fn tcp_keepalive(&mut self, timeout: u16) -> Result<()> {
        self.option(OptionCode::TCP_KEEPALIVE, &timeout.to_be_bytes())
    }

    /// Extended DNS Error (RFC 8914 §2) with optional UTF-8 text.
    pub fn extended_error(&mut self, code: EdeCode, text: &str) -> Result<()> {
        self.option_parts(OptionCode::EXTENDED_ERROR, &[&code.0.to_be_bytes(), text.as_bytes()])
    }

    /// Padding (RFC 7830) so that the message, plus `trailing` bytes still to come (a
    /// TSIG record), is a multiple of `block` bytes (RFC 8467 §4.1: 468 for responses,
    /// 128 for queries), without passing the size limit. Returns the padding length, or
    /// `None` when not even an empty padding option fits. Call it last.
    pub fn pad_to_block(&mut self, block: usize, trailing: usize) -> Result<Option<usize>> {
        let Some(pad) = padding_len(
            self.writer.len() + trailing,
            block,
            self.writer.limit().saturating_sub(trailing),
        ) else {
            return Ok(None);
        };
        let zeros = [0u8; 512];
        let data = zeros.get(..pad).unwrap_or(&zeros);
        self.option(OptionCode::PADDING, data).map(|()| Some(data.len()))
    }
}

/// The padding length that brings a message of `len` bytes, once a padding option header
/// is added, to a multiple of `block` without exceeding `limit` (RFC 8467 §4.1); `None`
/// when the option header itself does not fit. Capped at 512 bytes.
pub fn padding_len(len: usize, block: usize, limit: usize) -> Option<usize> {
    let with_header = len + OPTION_HEADER_LEN;
    if with_header > limit {
        return None;
    }
    let wanted = match block {
        0 => 0,
        _ => (block - with_header % block) % block,
    };
    Some(wanted.min(limit - with_header).min(512))
}
