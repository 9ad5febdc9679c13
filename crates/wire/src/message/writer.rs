//! [`MessageWriter`]: builds a message in a caller's buffer, with name compression.
//!
//! The writer never allocates. It writes into a borrowed `&mut [u8]` up to a size limit
//! (512 for plain UDP, the EDNS payload size, 65535 for TCP) and keeps the header counts
//! current after every item, so the buffer always holds a well-formed message.
//!
//! * Items go in section order; a record that does not fit is not written at all and the
//!   call returns [`Error::NoSpace`] with the message unchanged.
//! * [`mark`](MessageWriter::mark) / [`rollback`](MessageWriter::rollback) undo a group
//!   of records, so truncation drops whole RRsets (RFC 2181 §9).
//! * Space can be [`reserve`](MessageWriter::reserve)d for what is appended last: the OPT
//!   record (RFC 6891 §7) and the TSIG record (RFC 8945 §5.3) may use it, other records
//!   may not.
//! * Names in RDATA are compressed only for the RFC 1035 types (`Shape::compress`, RFC
//!   3597 §4); every name written in full becomes a compression target.

use std::num::NonZeroU16;

use crate::error::{Error, Result};
use crate::message::anchor::Anchor;
use crate::message::compress::{
    hash_label, pointer_bytes, CompressionTable, Suffix, MAX_POINTER, ROOT_HASH,
};
use crate::message::header::{Flags, Header, Section, HEADER_LEN};
use crate::message::prepared::PreparedRrset;
use crate::name::{Dname, LabelOffsets};
use crate::rdata::Field;
use crate::types::{Class, Rcode, Rtype};

/// Largest DNS message (TCP length prefix, RFC 1035 §4.2.2).
pub const MAX_MESSAGE_LEN: usize = 65535;

/// A point to return to with [`MessageWriter::rollback`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    len: usize,
    counts: [u16; 4],
    section: Section,
    opt_ttl_at: Option<usize>,
}

/// Writes one message into a borrowed buffer. See the module documentation.
#[derive(Debug)]
pub struct MessageWriter<'b> {
    buf: &'b mut [u8],
    table: &'b mut CompressionTable,
    len: usize,
    limit: usize,
    reserved: usize,
    counts: [u16; 4],
    /// The section of the last item written.
    section: Section,
    rcode: Rcode,
    /// Offset of the OPT record's TTL field, to patch the extended RCODE.
    opt_ttl_at: Option<usize>,
    /// Where the owner of the last record written decodes from (a pointer target).
    last_owner_at: Option<u16>,
    /// Where the first name in the last record's RDATA decodes from (a pointer target).
    last_rdata_name_at: Option<u16>,
    /// In anchor mode, the name that names are compressed against (see [`Compression`]).
    anchor: Option<Anchor>,
    mode: Compression,
}

/// The owner of the records [`MessageWriter::push_rrset`] writes.
#[derive(Debug, Clone, Copy)]
pub enum Owner<'n> {
    /// Already in the message at this offset: every record points there.
    At(u16),
    /// Not in the message yet: the first record writes it (compressed), the others
    /// point to it.
    Name(&'n Dname),
    /// Not in the message yet, but its tail is: the first record writes these leading
    /// labels (wire form, no root) and a pointer to the tail at this offset, the others
    /// point to it. For names the caller knows end in a name already written, such as
    /// an NSEC3 owner under the zone's apex in the question: no compression lookup. The
    /// caller vouches that the labels and the tail make a name of at most 255 bytes.
    Under(&'n [u8], u16),
}

/// A name as anchor mode writes it ([`MessageWriter::anchored`]).
struct Anchored<'n> {
    /// The leading bytes written in full: labels, or the whole name.
    inline: &'n [u8],
    /// Where the rest is in the anchor, if anywhere.
    pointer: Option<u16>,
}

impl Anchored<'_> {
    /// Where the name written at `start` decodes from, if that can be pointed to: the
    /// pointer's target for a pointer alone, nowhere for the root (never worth one).
    fn decodes_from(&self, start: usize) -> Option<u16> {
        match (self.inline, self.pointer) {
            ([], Some(target)) => Some(target),
            ([0], None) => None, // the root written in full
            _ => u16::try_from(start).ok().filter(|&s| usize::from(s) <= MAX_POINTER),
        }
    }
}

impl Owner<'_> {
    /// Where the owner already is, when it is.
    #[inline]
    pub fn at(&self) -> Option<u16> {
        match *self {
            Owner::At(at) => Some(at),
            Owner::Name(_) | Owner::Under(..) => None,
        }
    }
}

/// How the writer compresses names (RFC 1035 §4.1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Against every name written, through the [`CompressionTable`] (the default).
    Table,
    /// Only against the question's name, without the table: a label comparison per name
    /// instead of hashing and probing (see the `anchor` module). The engine's choice for
    /// answers, where names mostly end in the query name's zone.
    Anchor,
}

impl<'b> MessageWriter<'b> {
    /// Starts a message with an all-zero header in `buf`, writing at most `limit` bytes
    /// (capped by the buffer and 65535). `table` is cleared and reused.
    pub fn new(
        buf: &'b mut [u8],
        limit: usize,
        table: &'b mut CompressionTable,
    ) -> Result<MessageWriter<'b>> {
        let limit = limit.min(buf.len()).min(MAX_MESSAGE_LEN);
        let header = buf.get_mut(..HEADER_LEN).filter(|_| limit >= HEADER_LEN);
        header.ok_or(Error::NoSpace)?.fill(0);
        table.clear();
        Ok(MessageWriter {
            buf,
            table,
            len: HEADER_LEN,
            limit,
            reserved: 0,
            counts: [0; 4],
            section: Section::Question,
            rcode: Rcode::NOERROR,
            opt_ttl_at: None,
            last_owner_at: None,
            last_rdata_name_at: None,
            anchor: None,
            mode: Compression::Table,
        })
    }

    /// Chooses how names are compressed; call before writing the question.
    pub fn set_compression(&mut self, mode: Compression) {
        self.mode = mode;
    }

    /// Where the first name in the last record's RDATA decodes from, when it can be
    /// pointed to (for example an NS target, to point its glue's owner at it).
    pub fn last_rdata_name_at(&self) -> Option<u16> {
        self.last_rdata_name_at
    }

    /// The message written so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Ends writing and returns the finished message.
    pub fn finish(self) -> &'b [u8] {
        let len = self.len;
        let buf: &'b [u8] = self.buf;
        buf.get(..len).unwrap_or(&[])
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing but the header has been written.
    pub fn is_empty(&self) -> bool {
        self.len == HEADER_LEN
    }

    /// The size limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Changes the size limit (capped by the buffer and 65535); fails if the message is
    /// already longer than `limit` plus the reservation.
    pub fn set_limit(&mut self, limit: usize) -> Result<()> {
        let limit = limit.min(self.buf.len()).min(MAX_MESSAGE_LEN);
        if self.len + self.reserved > limit {
            return Err(Error::NoSpace);
        }
        self.limit = limit;
        Ok(())
    }

    /// Keeps `bytes` at the end of the limit for the OPT and TSIG records; ordinary
    /// records cannot use them. Replaces any earlier reservation.
    pub fn reserve(&mut self, bytes: usize) -> Result<()> {
        if self.len + bytes > self.limit {
            return Err(Error::NoSpace);
        }
        self.reserved = bytes;
        Ok(())
    }

    /// The current reservation.
    pub fn reserved(&self) -> usize {
        self.reserved
    }

    /// Room left for ordinary records.
    pub fn remaining(&self) -> usize {
        self.soft_limit().saturating_sub(self.len)
    }

    /// The header as written so far.
    pub fn header(&self) -> Header {
        Header::from_wire(self.as_bytes()).unwrap_or_default()
    }

    /// Sets the message ID.
    pub fn set_id(&mut self, id: u16) {
        self.patch(0, &id.to_be_bytes());
    }

    /// The flags word.
    #[inline]
    pub fn flags(&self) -> Flags {
        Flags(u16::from_be_bytes([
            self.buf.get(2).copied().unwrap_or(0),
            self.buf.get(3).copied().unwrap_or(0),
        ]))
    }

    /// Replaces the flags word (opcode and RCODE bits included).
    pub fn set_flags(&mut self, flags: Flags) {
        self.patch(2, &flags.0.to_be_bytes());
    }

    /// Sets or clears the flag bits of `mask` (see [`Flags`]).
    pub fn set_flag(&mut self, mask: u16, on: bool) {
        let mut flags = self.flags();
        flags.set(mask, on);
        self.set_flags(flags);
    }

    /// The response code set with [`set_rcode`](Self::set_rcode).
    pub fn rcode(&self) -> Rcode {
        self.rcode
    }

    /// Sets the response code: the low 4 bits go into the header, the high 8 bits into the
    /// OPT record's extended RCODE (RFC 6891 §6.1.3), now or when the OPT is written.
    pub fn set_rcode(&mut self, rcode: Rcode) {
        self.rcode = rcode;
        let mut flags = self.flags();
        flags.set_rcode_bits(rcode);
        self.set_flags(flags);
        if let Some(at) = self.opt_ttl_at {
            self.patch(at, &[rcode.extended_bits()]);
        }
    }

    /// The number of items written to `section`.
    pub fn count(&self, section: Section) -> u16 {
        self.counts.get(section.index()).copied().unwrap_or(0)
    }

    /// Remembers the current state for [`rollback`](Self::rollback).
    pub fn mark(&self) -> Mark {
        Mark {
            len: self.len,
            counts: self.counts,
            section: self.section,
            opt_ttl_at: self.opt_ttl_at,
        }
    }

    /// Returns to a mark: the length, the counts and the compression targets are as they
    /// were (targets written since are ignored from now on).
    pub fn rollback(&mut self, mark: Mark) {
        self.len = mark.len.min(self.len);
        self.counts = mark.counts;
        self.section = mark.section;
        self.opt_ttl_at = mark.opt_ttl_at;
        self.write_counts();
    }

    /// Appends a question.
    pub fn push_question(&mut self, name: &Dname, qtype: Rtype, qclass: Class) -> Result<()> {
        self.enter(Section::Question)?;
        let start = self.len;
        let limit = self.soft_limit();
        let result = self.write_question_name(name, limit).and_then(|_| {
            let [t0, t1] = qtype.0.to_be_bytes();
            let [c0, c1] = qclass.0.to_be_bytes();
            self.put(&[t0, t1, c0, c1], limit)
        });
        self.finish_item(Section::Question, start, result)
    }

    /// Appends a record. `rdata` is uncompressed wire form; its names are compressed when
    /// the type allows it (RFC 3597 §4). On [`Error::NoSpace`] nothing is written.
    pub fn push_record(
        &mut self,
        section: Section,
        owner: &Dname,
        rtype: Rtype,
        class: Class,
        ttl: u32,
        rdata: &[u8],
    ) -> Result<()> {
        let limit = self.soft_limit();
        let rr = Rr { owner, compress_owner: true, rtype, class, ttl, rdata };
        self.push_record_within(section, &rr, limit)
    }

    /// Writes a name at the current position, compressed if `compress`; its labels
    /// written in full become compression targets. Counts are not changed: this is for
    /// callers assembling a record themselves.
    pub fn write_name(&mut self, name: &Dname, compress: bool) -> Result<()> {
        let limit = self.soft_limit();
        self.write_name_within(name, compress, limit).map(drop)
    }

    /// Where the owner of the last record written decodes from: the offset to pass to
    /// [`push_record_at`](Self::push_record_at) for more records of the same owner.
    pub fn last_owner_at(&self) -> Option<u16> {
        self.last_owner_at
    }

    /// Appends a record whose owner is already in the message at `owner_at` (the
    /// question's name at 12, or [`last_owner_at`](Self::last_owner_at)): the owner is
    /// a 2-byte pointer, with no compression lookup. On [`Error::NoSpace`] nothing is
    /// written; an `owner_at` that is not below the current end is refused.
    pub fn push_record_at(
        &mut self,
        section: Section,
        owner_at: u16,
        rtype: Rtype,
        class: Class,
        ttl: u32,
        rdata: &[u8],
    ) -> Result<()> {
        self.check_target(owner_at)?;
        self.enter(section)?;
        let limit = self.soft_limit();
        let start = self.len;
        let rr = Rr { owner: Dname::ROOT, compress_owner: false, rtype, class, ttl, rdata };
        let result = self
            .put(&pointer_bytes(owner_at), limit)
            .and_then(|()| self.write_record_body(&rr, limit));
        if result.is_ok() {
            self.last_owner_at = Some(owner_at);
        }
        self.finish_item(section, start, result)
    }

    /// Appends the records of one RRset — `rdatas` in order, with the same owner, type,
    /// class and TTL — in one step: all or nothing (on [`Error::NoSpace`] the message is
    /// unchanged). Returns where the owner decodes from, for more records of that owner.
    /// `names_at[i]`, where present, receives where the first name in record `i`'s RDATA
    /// decodes from (an offset past the header, so never zero). Entries past the records
    /// written are left as they were.
    pub fn push_rrset<'r>(
        &mut self,
        section: Section,
        rrset: &RrsetHead<'_>,
        rdatas: impl IntoIterator<Item = &'r [u8]>,
        names_at: &mut [Option<NonZeroU16>],
    ) -> Result<Option<u16>> {
        self.check_owner(rrset.owner)?;
        self.enter(section)?;
        let start = self.len;
        let written = self.write_rrset(rrset, rdatas, names_at);
        self.commit_rrset(section, start, written)
    }

    /// [`push_rrset`](Self::push_rrset) and then the RRSIG records that cover the RRset
    /// (RFC 4035 §3.1.1), in one step: all or nothing. The signatures have the RRset's
    /// owner and TTL and are copied as they are (their signer's name is never
    /// compressed, RFC 4034 §3.1.7). Returns where the owner decodes from.
    pub fn push_signed_rrset<'r, 's>(
        &mut self,
        section: Section,
        rrset: &RrsetHead<'_>,
        rdatas: impl IntoIterator<Item = &'r [u8]>,
        names_at: &mut [Option<NonZeroU16>],
        sigs: impl IntoIterator<Item = &'s [u8]>,
    ) -> Result<Option<u16>> {
        self.check_owner(rrset.owner)?;
        self.enter(section)?;
        let start = self.len;
        let written = self.write_rrset(rrset, rdatas, names_at).and_then(|(count, owner_at)| {
            let owner = owner_at.map_or(rrset.owner, Owner::At);
            let head = RrsetHead { owner, rtype: Rtype::RRSIG, ..*rrset };
            let limit = self.soft_limit();
            let (signatures, _) = self.write_plain_records(&head, sigs, limit)?;
            Ok((count.checked_add(signatures).ok_or(Error::NoSpace)?, owner_at))
        });
        self.commit_rrset(section, start, written)
    }

    /// [`push_rrset`](Self::push_rrset) for a type whose RDATA is one compressible name
    /// (NS, CNAME, PTR: RFC 1035 §3.3), given as the names themselves: they are written
    /// (compressed) without parsing the RDATA again, in the same bytes `push_rrset`
    /// writes. Any other type is refused.
    pub fn push_name_rrset<'r>(
        &mut self,
        section: Section,
        rrset: &RrsetHead<'_>,
        names: impl IntoIterator<Item = &'r Dname>,
        names_at: &mut [Option<NonZeroU16>],
    ) -> Result<Option<u16>> {
        let shape = rrset.rtype.shape();
        if !shape.compress || shape.fields != [Field::Name] {
            return Err(Error::Malformed { offset: self.len, reason: "RDATA is not one name" });
        }
        self.check_owner(rrset.owner)?;
        self.enter(section)?;
        let start = self.len;
        let written = self.write_name_records(rrset, names, names_at);
        self.commit_rrset(section, start, written)
    }

    /// Counts the records of an RRset written from `start` on (how many, and where their
    /// owner decodes from), or takes them out again when writing them failed.
    fn commit_rrset(
        &mut self,
        section: Section,
        start: usize,
        written: Result<(u16, Option<u16>)>,
    ) -> Result<Option<u16>> {
        let i = section.index();
        let total = written.and_then(|(written, owner_at)| {
            let count = self.counts.get(i).ok_or(Error::NoSpace)?;
            Ok((count.checked_add(written).ok_or(Error::NoSpace)?, owner_at))
        });
        match total {
            Ok((total, owner_at)) => {
                if let Some(count) = self.counts.get_mut(i) {
                    *count = total;
                }
                self.section = section;
                self.patch(4 + 2 * i, &total.to_be_bytes());
                self.last_owner_at = owner_at;
                Ok(owner_at)
            }
            Err(e) => {
                self.len = start;
                Err(e)
            }
        }
    }

    /// The owner of a record of an RRset: a pointer to where it already is, or (for the
    /// first record) the name; `owner_at` then says where it is for the records after.
    #[inline(always)]
    fn write_owner(
        &mut self,
        owner: Owner<'_>,
        owner_at: &mut Option<u16>,
        limit: usize,
    ) -> Result<()> {
        match (*owner_at, owner) {
            (Some(at), _) => self.put(&pointer_bytes(at), limit),
            (None, Owner::Name(name)) => {
                *owner_at = self.write_name_within(name, true, limit)?;
                Ok(())
            }
            (None, Owner::Under(labels, at)) => {
                let start = self.len;
                self.put_labels_and_pointer(labels, at, limit)?;
                *owner_at = u16::try_from(start).ok().filter(|&s| usize::from(s) <= MAX_POINTER);
                Ok(())
            }
            (None, Owner::At(_)) => Err(Error::BadPointer { offset: self.len }),
        }
    }

    /// The records of [`push_name_rrset`](Self::push_name_rrset); returns how many were
    /// written and where the owner decodes from.
    fn write_name_records<'r>(
        &mut self,
        rrset: &RrsetHead<'_>,
        names: impl IntoIterator<Item = &'r Dname>,
        names_at: &mut [Option<NonZeroU16>],
    ) -> Result<(u16, Option<u16>)> {
        let limit = self.soft_limit();
        if let (Owner::At(at), Compression::Anchor) = (rrset.owner, self.mode) {
            return self.write_anchored_name_records(rrset, at, names, names_at, limit);
        }
        let [t0, t1] = rrset.rtype.0.to_be_bytes();
        let [c0, c1] = rrset.class.0.to_be_bytes();
        let [l0, l1, l2, l3] = rrset.ttl.to_be_bytes();
        let mut owner_at = rrset.owner.at();
        let mut written = 0u16;
        for (i, name) in names.into_iter().enumerate() {
            self.write_owner(rrset.owner, &mut owner_at, limit)?;
            self.put(&[t0, t1, c0, c1, l0, l1, l2, l3, 0, 0], limit)?;
            let rdata_start = self.len;
            let name_at = self.write_name_within(name, true, limit)?;
            let rdlength = u16::try_from(self.len - rdata_start).map_err(|_| Error::NoSpace)?;
            self.patch(rdata_start - 2, &rdlength.to_be_bytes());
            self.last_rdata_name_at = name_at;
            if let Some(slot) = names_at.get_mut(i) {
                *slot = name_at.and_then(NonZeroU16::new);
            }
            written = written.checked_add(1).ok_or(Error::NoSpace)?;
        }
        Ok((written, owner_at))
    }

    /// [`write_name_records`](Self::write_name_records) in anchor mode for an owner
    /// already in the message at `owner_at` (a referral's NS RRset, whose owner is in the
    /// question): each record is sized first and written in one piece, its name split
    /// against the anchor as [`write_name_anchored`](Self::write_name_anchored) splits
    /// it, so the bytes are the same.
    fn write_anchored_name_records<'r>(
        &mut self,
        rrset: &RrsetHead<'_>,
        owner_at: u16,
        names: impl IntoIterator<Item = &'r Dname>,
        names_at: &mut [Option<NonZeroU16>],
        limit: usize,
    ) -> Result<(u16, Option<u16>)> {
        let [o0, o1] = pointer_bytes(owner_at);
        let [t0, t1] = rrset.rtype.0.to_be_bytes();
        let [c0, c1] = rrset.class.0.to_be_bytes();
        let [l0, l1, l2, l3] = rrset.ttl.to_be_bytes();
        let mut written = 0u16;
        for (i, name) in names.into_iter().enumerate() {
            let parts = self.anchored(name, true);
            let pointer = parts.pointer.map(pointer_bytes);
            let rdlength = parts.inline.len() + pointer.map_or(0, |p| p.len());
            let start = self.len;
            let end = start + 12 + rdlength;
            let record =
                self.buf.get_mut(start..end).filter(|_| end <= limit).ok_or(Error::NoSpace)?;
            let (fixed, rdata) = record.split_at_mut(12);
            let [r0, r1] = u16::try_from(rdlength).map_err(|_| Error::NoSpace)?.to_be_bytes();
            fixed.copy_from_slice(&[o0, o1, t0, t1, c0, c1, l0, l1, l2, l3, r0, r1]);
            let (labels, tail) = rdata.split_at_mut(parts.inline.len());
            crate::bytes::copy(labels, parts.inline);
            if let Some(pointer) = pointer {
                tail.copy_from_slice(&pointer);
            }
            self.len = end;
            let name_at = parts.decodes_from(start + 12);
            self.last_rdata_name_at = name_at;
            if let Some(slot) = names_at.get_mut(i) {
                *slot = name_at.and_then(NonZeroU16::new);
            }
            written = written.checked_add(1).ok_or(Error::NoSpace)?;
        }
        Ok((written, Some(owner_at)))
    }

    /// The records of [`push_rrset`](Self::push_rrset); returns how many were written and
    /// where the owner decodes from.
    #[inline(always)]
    fn write_rrset<'r>(
        &mut self,
        rrset: &RrsetHead<'_>,
        rdatas: impl IntoIterator<Item = &'r [u8]>,
        names_at: &mut [Option<NonZeroU16>],
    ) -> Result<(u16, Option<u16>)> {
        let limit = self.soft_limit();
        let shape = rrset.rtype.shape();
        let plain = !shape.compress || !shape.has_names();
        if plain && names_at.is_empty() {
            return self.write_plain_records(rrset, rdatas, limit);
        }
        let [t0, t1] = rrset.rtype.0.to_be_bytes();
        let [c0, c1] = rrset.class.0.to_be_bytes();
        let [l0, l1, l2, l3] = rrset.ttl.to_be_bytes();
        let mut owner_at = rrset.owner.at();
        let mut written = 0u16;
        for (i, rdata) in rdatas.into_iter().enumerate() {
            self.write_owner(rrset.owner, &mut owner_at, limit)?;
            let rdata_start = self.len + 10;
            let name_at = if plain {
                // RDATA copied as it is: its length is known before it is written.
                let [r0, r1] =
                    u16::try_from(rdata.len()).map_err(|_| Error::NoSpace)?.to_be_bytes();
                self.put2(&[t0, t1, c0, c1, l0, l1, l2, l3, r0, r1], rdata, limit)?;
                // Only looked for when asked for.
                let wanted = i < names_at.len();
                wanted
                    .then(|| first_name_offset(shape, rdata))
                    .flatten()
                    .and_then(|at| u16::try_from(rdata_start + at).ok())
                    .filter(|&at| usize::from(at) <= MAX_POINTER)
            } else {
                self.put(&[t0, t1, c0, c1, l0, l1, l2, l3, 0, 0], limit)?;
                self.write_rdata(rrset.rtype, rdata, limit)?;
                let rdlength = u16::try_from(self.len - rdata_start).map_err(|_| Error::NoSpace)?;
                self.patch(rdata_start - 2, &rdlength.to_be_bytes());
                self.last_rdata_name_at
            };
            if let Some(slot) = names_at.get_mut(i) {
                *slot = name_at.and_then(NonZeroU16::new);
            }
            written = written.checked_add(1).ok_or(Error::NoSpace)?;
        }
        Ok((written, owner_at))
    }

    /// [`write_rrset`](Self::write_rrset) for RDATA copied as it is, no name position
    /// asked for (most RRsets: addresses, signatures, denial records): each record is
    /// its owner pointer and fixed fields in one 12-byte piece, then its RDATA.
    #[inline(always)]
    fn write_plain_records<'r>(
        &mut self,
        rrset: &RrsetHead<'_>,
        rdatas: impl IntoIterator<Item = &'r [u8]>,
        limit: usize,
    ) -> Result<(u16, Option<u16>)> {
        let [t0, t1] = rrset.rtype.0.to_be_bytes();
        let [c0, c1] = rrset.class.0.to_be_bytes();
        let [l0, l1, l2, l3] = rrset.ttl.to_be_bytes();
        let mut owner_at = rrset.owner.at();
        let mut written = 0u16;
        for rdata in rdatas {
            let [r0, r1] = u16::try_from(rdata.len()).map_err(|_| Error::NoSpace)?.to_be_bytes();
            let fields = [t0, t1, c0, c1, l0, l1, l2, l3, r0, r1];
            match owner_at {
                Some(at) => {
                    let [p0, p1] = pointer_bytes(at);
                    let [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9] = fields;
                    self.put2(&[p0, p1, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9], rdata, limit)?;
                }
                None => {
                    // The first record writes the owner; the others point to it.
                    self.write_owner(rrset.owner, &mut owner_at, limit)?;
                    self.put2(&fields, rdata, limit)?;
                }
            }
            written = written.checked_add(1).ok_or(Error::NoSpace)?;
        }
        Ok((written, owner_at))
    }

    /// Appends one record prepared in wire form, `record` then `tail` (owner to RDATA;
    /// `tail` may be empty), with a compression pointer to `target` written at each
    /// offset in `slots`: a record whose names end in a name already in the message,
    /// built once and copied into every answer. Returns where the owner decodes from
    /// when slot 0 is the owner. All or nothing; a `target` not below the current end, or
    /// a slot outside what is written, is refused.
    pub fn push_prepared(
        &mut self,
        section: Section,
        (record, tail): (&[u8], &[u8]),
        slots: &[u16],
        target: u16,
    ) -> Result<Option<u16>> {
        self.check_target(target)?;
        self.enter(section)?;
        let start = self.len;
        let limit = self.soft_limit();
        let whole = match tail {
            [] => self.put(record, limit),
            _ => self.put2(record, tail, limit),
        };
        let result = whole.and_then(|()| {
            slots.iter().try_for_each(|&slot| self.fill_pointer(start, slot, target))
        });
        self.finish_item(section, start, result)?;
        let owner_at = (slots.first() == Some(&0)).then_some(target);
        self.last_owner_at = owner_at;
        Ok(owner_at)
    }

    /// Appends a [`PreparedRrset`] whose owner sits under the name at `target`, in one
    /// step: all or nothing. The bytes are those [`push_signed_rrset`] writes for the
    /// owner [`Owner::Under`]`(labels, target)`. Returns where the owner decodes from. A
    /// `target` not below the current end or beyond pointer reach is refused, and so is
    /// an RRset of more than one record whose first owner would lie beyond pointer reach.
    ///
    /// [`push_signed_rrset`]: Self::push_signed_rrset
    pub fn push_prepared_rrset(
        &mut self,
        section: Section,
        prepared: &PreparedRrset,
        target: u16,
    ) -> Result<Option<u16>> {
        self.check_target(target)?;
        self.enter(section)?;
        let start = self.len;
        let limit = self.soft_limit();
        let written = self.put(prepared.records(), limit).and_then(|()| {
            self.fill_pointer(start, prepared.apex_slot(), target)?;
            let owner_at = u16::try_from(start).ok().filter(|&s| usize::from(s) <= MAX_POINTER);
            for slot in prepared.owner_slots() {
                let first = owner_at.ok_or(Error::BadPointer { offset: start })?;
                self.fill_pointer(start, slot, first)?;
            }
            Ok((prepared.count(), owner_at))
        });
        self.commit_rrset(section, start, written)
    }

    /// Writes a pointer to `target` at `slot` bytes past `start`, inside what is written.
    fn fill_pointer(&mut self, start: usize, slot: u16, target: u16) -> Result<()> {
        let at = start + usize::from(slot);
        let end = self.len;
        let dst = self.buf.get_mut(at..at + 2).filter(|_| at + 2 <= end);
        dst.ok_or(Error::BadPointer { offset: at })?.copy_from_slice(&pointer_bytes(target));
        Ok(())
    }

    /// Appends raw bytes at the current position (no count changes).
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        let limit = self.soft_limit();
        self.put(bytes, limit)
    }

    /// `push_record` with an explicit limit (the full limit for OPT and TSIG) and owner
    /// compression on or off.
    pub(crate) fn push_record_within(
        &mut self,
        section: Section,
        rr: &Rr<'_>,
        limit: usize,
    ) -> Result<()> {
        self.enter(section)?;
        let start = self.len;
        let result = self.write_record(rr, limit);
        self.finish_item(section, start, result)
    }

    /// Appends a record given whole in wire form, within the full limit (the OPT record,
    /// in the space reserved for it).
    pub(crate) fn push_raw_record(&mut self, section: Section, record: &[u8]) -> Result<()> {
        self.enter(section)?;
        let start = self.len;
        let result = self.put(record, self.limit);
        self.last_owner_at = None;
        self.last_rdata_name_at = None;
        self.finish_item(section, start, result)
    }

    fn write_record(&mut self, rr: &Rr<'_>, limit: usize) -> Result<()> {
        self.last_owner_at = self.write_name_within(rr.owner, rr.compress_owner, limit)?;
        self.write_record_body(rr, limit)
    }

    /// TYPE, CLASS, TTL, RDLENGTH and RDATA after an owner already written.
    fn write_record_body(&mut self, rr: &Rr<'_>, limit: usize) -> Result<()> {
        let [t0, t1] = rr.rtype.0.to_be_bytes();
        let [c0, c1] = rr.class.0.to_be_bytes();
        let [l0, l1, l2, l3] = rr.ttl.to_be_bytes();
        self.put(&[t0, t1, c0, c1, l0, l1, l2, l3, 0, 0], limit)?;
        let rdata_start = self.len;
        self.write_rdata(rr.rtype, rr.rdata, limit)?;
        let rdlength = u16::try_from(self.len - rdata_start).map_err(|_| Error::NoSpace)?;
        self.patch(rdata_start - 2, &rdlength.to_be_bytes());
        Ok(())
    }

    /// The question's name: in anchor mode it is written in full and becomes the anchor.
    fn write_question_name(&mut self, name: &Dname, limit: usize) -> Result<Option<u16>> {
        if self.mode == Compression::Anchor && self.anchor.is_none() {
            let at = self.len;
            self.put_name(name.as_wire(), limit)?;
            self.anchor = Anchor::new(name, at);
            return Ok(u16::try_from(at).ok());
        }
        self.write_name_within(name, true, limit)
    }

    /// Writes RDATA, compressing its names if the type's shape allows it.
    fn write_rdata(&mut self, rtype: Rtype, rdata: &[u8], limit: usize) -> Result<()> {
        let shape = rtype.shape();
        self.last_rdata_name_at = None;
        if shape.compress && shape.fields == [Field::Name] && !rdata.is_empty() {
            // NS, CNAME, PTR: the whole RDATA is one name (the common case of referrals).
            let name = Dname::from_wire(rdata)?;
            self.last_rdata_name_at = self.write_name_within(name, true, limit)?;
            return Ok(());
        }
        if !shape.compress || rdata.is_empty() || !shape.has_names() {
            self.last_rdata_name_at = first_name_offset(shape, rdata)
                .and_then(|at| u16::try_from(self.len + at).ok())
                .filter(|&at| usize::from(at) <= MAX_POINTER);
            return self.put(rdata, limit);
        }
        let mut pos = 0usize;
        for field in shape.fields {
            let rest = rdata.get(pos..).unwrap_or(&[]);
            let take = match *field {
                Field::Name => {
                    let (name, len) = Dname::from_wire_prefix(rest).map_err(|e| e.shifted(pos))?;
                    let at = self.write_name_within(name, true, limit)?;
                    if self.last_rdata_name_at.is_none() {
                        self.last_rdata_name_at = at;
                    }
                    pos += len;
                    continue;
                }
                Field::Bytes(n) => usize::from(n),
                Field::CharString => 1 + usize::from(rest.first().copied().unwrap_or(0)),
                Field::Rest => rest.len(),
            };
            let bytes = rest.get(..take).ok_or(Error::Truncated { offset: rdata.len() })?;
            self.put(bytes, limit)?;
            pos += take;
        }
        if pos != rdata.len() {
            return Err(Error::TrailingData { offset: pos });
        }
        Ok(())
    }

    /// Writes `name`, pointing to the longest suffix already in the message; returns the
    /// offset the name decodes from (a pointer target for later copies of it), if that
    /// offset can be pointed to.
    #[inline]
    fn write_name_within(
        &mut self,
        name: &Dname,
        compress: bool,
        limit: usize,
    ) -> Result<Option<u16>> {
        if self.mode == Compression::Anchor {
            return self.write_name_anchored(name, compress, limit);
        }
        self.write_name_tabled(name, compress, limit)
    }

    /// Table mode: the name's labels are looked up right to left, and those written in
    /// full become targets.
    #[inline(never)]
    fn write_name_tabled(
        &mut self,
        name: &Dname,
        compress: bool,
        limit: usize,
    ) -> Result<Option<u16>> {
        let wire = name.as_wire();
        let mut offsets = LabelOffsets::default();
        name.label_offsets_into(&mut offsets);
        let count = offsets.len();
        // Right to left: hash each suffix and look it up until one is missing.
        let mut rest = Suffix::Root;
        let mut hash = ROOT_HASH;
        let mut split = count;
        while split > 0 {
            let i = split - 1;
            let label = label_wire(wire, &offsets, i);
            hash = hash_label(wire, usize::from(offsets.get(i).unwrap_or(0)), hash);
            let written = self.buf.get(..self.len).unwrap_or(&[]);
            let found = if compress { self.table.find(hash, written, label, rest) } else { None };
            match found {
                Some(suffix) => rest = suffix,
                None => break,
            }
            split = i;
        }
        let start = self.len;
        let decodes_from = match rest {
            Suffix::At { offset, .. } if split == 0 => Some(offset),
            _ => u16::try_from(start).ok().filter(|&s| usize::from(s) <= MAX_POINTER),
        };
        match rest {
            Suffix::Root => self.put_name(wire, limit)?,
            Suffix::At { offset, .. } => {
                let inline = usize::from(offsets.get(split).unwrap_or(0));
                self.put_labels_and_pointer(wire.get(..inline).unwrap_or(&[]), offset, limit)?;
            }
        }
        // Labels written in full become targets; `hash` is already that of label split-1.
        for i in (0..split).rev() {
            let label_at = usize::from(offsets.get(i).unwrap_or(0));
            if i + 1 < split {
                hash = hash_label(wire, label_at, hash);
            }
            self.table.insert(hash, start + label_at, self.len);
        }
        Ok(decodes_from)
    }

    /// Anchor mode: the name's labels in common with the anchor become a pointer to it.
    #[inline]
    fn write_name_anchored(
        &mut self,
        name: &Dname,
        compress: bool,
        limit: usize,
    ) -> Result<Option<u16>> {
        let start = self.len;
        let parts = self.anchored(name, compress);
        match parts.pointer {
            Some(target) => self.put_labels_and_pointer(parts.inline, target, limit)?,
            None => self.put_name(parts.inline, limit)?,
        }
        Ok(parts.decodes_from(start))
    }

    /// How anchor mode writes `name`: its leading labels, and a pointer into the anchor
    /// for the rest when they have labels in common and `compress` allows it.
    #[inline]
    fn anchored<'n>(&self, name: &'n Dname, compress: bool) -> Anchored<'n> {
        let wire = name.as_wire();
        let written = self.buf.get(..self.len).unwrap_or(&[]);
        let split = match &self.anchor {
            Some(anchor) if compress && !name.is_root() => anchor.split(written, name),
            _ => None,
        };
        match split {
            Some((inline, target)) => {
                Anchored { inline: wire.get(..inline).unwrap_or(&[]), pointer: Some(target) }
            }
            None => Anchored { inline: wire, pointer: None },
        }
    }

    /// Checks the pointer an owner implies (see [`check_target`](Self::check_target)),
    /// and that leading labels are labels: each a length byte of 1 to 63 and its bytes.
    fn check_owner(&self, owner: Owner<'_>) -> Result<()> {
        match owner {
            Owner::At(at) => self.check_target(at),
            Owner::Name(_) => Ok(()),
            Owner::Under(labels, at) => {
                let mut pos = 0usize;
                while let Some(&len) = labels.get(pos) {
                    if len == 0 || len > 63 {
                        return Err(Error::BadLabelType { offset: self.len + pos });
                    }
                    pos += 1 + usize::from(len);
                }
                if pos != labels.len() || labels.is_empty() {
                    return Err(Error::Truncated { offset: self.len + labels.len() });
                }
                self.check_target(at)
            }
        }
    }

    /// Checks that a compression pointer to `target` may be written: after the header,
    /// below the current end, within pointer range.
    fn check_target(&self, target: u16) -> Result<()> {
        let at = usize::from(target);
        if at < HEADER_LEN || at >= self.len || at > MAX_POINTER {
            return Err(Error::BadPointer { offset: self.len });
        }
        Ok(())
    }

    /// Checks that items are written section by section.
    fn enter(&mut self, section: Section) -> Result<()> {
        if section < self.section {
            return Err(Error::Malformed {
                offset: self.len,
                reason: "records must be written section by section",
            });
        }
        Ok(())
    }

    /// Counts a written item, or undoes a failed one.
    #[inline]
    fn finish_item(&mut self, section: Section, start: usize, result: Result<()>) -> Result<()> {
        let i = section.index();
        let counted = result.and_then(|()| {
            let count = self.counts.get_mut(i).ok_or(Error::NoSpace)?;
            *count = count.checked_add(1).ok_or(Error::NoSpace)?;
            Ok(*count)
        });
        match counted {
            Ok(count) => {
                self.section = section;
                self.patch(4 + 2 * i, &count.to_be_bytes());
                Ok(())
            }
            Err(e) => {
                self.len = start;
                Err(e)
            }
        }
    }

    fn write_counts(&mut self) {
        let counts = self.counts;
        for (i, count) in counts.iter().enumerate() {
            self.patch(4 + 2 * i, &count.to_be_bytes());
        }
    }

    pub(crate) fn soft_limit(&self) -> usize {
        self.limit.saturating_sub(self.reserved)
    }

    /// Appends bytes if they fit under `limit`.
    pub(crate) fn put(&mut self, bytes: &[u8], limit: usize) -> Result<()> {
        let end = self.len + bytes.len();
        let dst = self.buf.get_mut(self.len..end).filter(|_| end <= limit);
        dst.ok_or(Error::NoSpace)?.copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    /// [`put`](Self::put) for a name or part of one: a few to a few dozen bytes of
    /// varying length, copied without a call to `memcpy` ([`crate::bytes::copy`]).
    #[inline]
    fn put_name(&mut self, bytes: &[u8], limit: usize) -> Result<()> {
        let end = self.len + bytes.len();
        let dst = self.buf.get_mut(self.len..end).filter(|_| end <= limit);
        crate::bytes::copy(dst.ok_or(Error::NoSpace)?, bytes);
        self.len = end;
        Ok(())
    }

    /// A name's first labels and the pointer to the rest, both or neither.
    fn put_labels_and_pointer(&mut self, labels: &[u8], target: u16, limit: usize) -> Result<()> {
        if self.len + labels.len() + 2 > limit {
            return Err(Error::NoSpace);
        }
        self.put_name(labels, limit)?;
        self.put(&pointer_bytes(target), limit)
    }

    /// Appends two pieces, both or neither.
    fn put2(&mut self, a: &[u8], b: &[u8], limit: usize) -> Result<()> {
        if self.len + a.len() + b.len() > limit {
            return Err(Error::NoSpace);
        }
        self.put(a, limit)?;
        self.put(b, limit)
    }

    /// Overwrites bytes already written (header fields, RDLENGTH).
    pub(crate) fn patch(&mut self, at: usize, bytes: &[u8]) {
        if let Some(dst) = self.buf.get_mut(at..at + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    /// Remembers where the OPT record's TTL field is (see [`Self::set_rcode`]).
    pub(crate) fn set_opt_ttl_at(&mut self, at: Option<usize>) {
        self.opt_ttl_at = at;
    }

    /// True once an OPT record has been written.
    pub fn has_opt(&self) -> bool {
        self.opt_ttl_at.is_some()
    }
}

/// What the records of one RRset share.
#[derive(Clone, Copy, Debug)]
pub struct RrsetHead<'n> {
    /// Where the owner already is in the message, or the name to write.
    pub owner: Owner<'n>,
    /// The type of every record.
    pub rtype: Rtype,
    /// The class of every record.
    pub class: Class,
    /// The TTL of every record.
    pub ttl: u32,
}

/// A record to write.
pub(crate) struct Rr<'r> {
    pub(crate) owner: &'r Dname,
    pub(crate) compress_owner: bool,
    pub(crate) rtype: Rtype,
    pub(crate) class: Class,
    pub(crate) ttl: u32,
    pub(crate) rdata: &'r [u8],
}

/// Where the first name starts in RDATA of this shape (fixed fields before it only).
fn first_name_offset(shape: &crate::rdata::Shape, rdata: &[u8]) -> Option<usize> {
    let mut at = 0usize;
    for field in shape.fields {
        match *field {
            Field::Name => return (at < rdata.len()).then_some(at),
            Field::Bytes(n) => at += usize::from(n),
            Field::CharString => at += 1 + usize::from(*rdata.get(at)?),
            Field::Rest => return None,
        }
    }
    None
}

/// The wire form (length byte and content) of label `i` of a name.
fn label_wire<'n>(wire: &'n [u8], offsets: &LabelOffsets, i: usize) -> &'n [u8] {
    let start = usize::from(offsets.get(i).unwrap_or(0));
    let len = usize::from(wire.get(start).copied().unwrap_or(0));
    wire.get(start..start + 1 + len).unwrap_or(&[])
}
