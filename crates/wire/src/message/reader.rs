//! [`MessageReader`]: walks a received message item by item without allocating.
//!
//! The header is decoded up front; questions and records are then read in wire order.
//! Names are decompressed into a stack [`NameBuf`]; the RDATA of types whose shape says
//! `decompress` is expanded into a caller-provided buffer, other RDATA is returned as a
//! slice of the message. The reader remembers where each section starts, where the OPT
//! and TSIG records sit, and rejects what RFC 6891 §6.1.1 and RFC 8945 §5.1 forbid (a
//! second OPT, OPT outside the additional section or with a non-root owner, a TSIG that
//! is not the last record) with [`Error::BadOpt`] / [`Error::BadTsig`]. Once the last
//! record is read, bytes left after it are an error ([`Error::TrailingData`]).

use crate::edns::Edns;
use crate::error::{Error, Result};
use crate::message::decompress::{expand_rdata, read_name, read_name_in, CountSink, SliceSink};
use crate::message::header::{Header, Section, HEADER_LEN};
use crate::name::{Dname, NameBuf, NameBuilder};
use crate::types::{Class, Rtype};

/// One entry of the question section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// QNAME, decompressed, in the spelling the sender used.
    pub name: NameBuf,
    /// QTYPE.
    pub qtype: Rtype,
    /// QCLASS.
    pub qclass: Class,
    /// Offset of the question's first byte in the message.
    pub offset: usize,
    /// Offset just after QCLASS.
    pub end: usize,
}

/// One resource record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'r> {
    /// The section the record came from.
    pub section: Section,
    /// Offset of the record's first byte (its owner name) in the message.
    pub offset: usize,
    /// The owner name, decompressed.
    pub owner: NameBuf,
    /// TYPE.
    pub rtype: Rtype,
    /// CLASS (the UDP payload size for OPT).
    pub class: Class,
    /// TTL (extended RCODE, version and flags for OPT).
    pub ttl: u32,
    /// Uncompressed RDATA: expanded into the caller's buffer, or a slice of the message.
    pub rdata: &'r [u8],
    /// Offset of the first RDATA byte in the message.
    pub rdata_offset: usize,
    /// Offset just after the record.
    pub end: usize,
}

/// One resource record read with [`MessageReader::record_in`]: as [`Record`], but the
/// owner is borrowed from the caller's [`NameBuilder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordIn<'r, 'n> {
    /// The section the record came from.
    pub section: Section,
    /// Offset of the record's first byte (its owner name) in the message.
    pub offset: usize,
    /// The owner name, decompressed.
    pub owner: &'n Dname,
    /// TYPE.
    pub rtype: Rtype,
    /// CLASS.
    pub class: Class,
    /// TTL.
    pub ttl: u32,
    /// Uncompressed RDATA: expanded into the caller's buffer, or a slice of the message.
    pub rdata: &'r [u8],
    /// Offset of the first RDATA byte in the message.
    pub rdata_offset: usize,
    /// Offset just after the record.
    pub end: usize,
    /// True when reading the RDATA checked all of it: it was expanded as a type whose
    /// shape [reads all](crate::rdata::shape::Shape::read_checks_all), so
    /// [`rdata::validate`](crate::rdata::validate) has nothing left to find.
    pub rdata_checked: bool,
}

/// The fixed fields between a record's owner and its RDATA.
struct Fixed {
    rtype: Rtype,
    class: Class,
    ttl: u32,
    rdlength: usize,
}

/// Reads a message in wire order. See the module documentation.
#[derive(Debug, Clone)]
pub struct MessageReader<'a> {
    msg: &'a [u8],
    header: Header,
    pos: usize,
    section: Section,
    /// Items left to read in `section`.
    left: u16,
    /// Offset where each section starts, once reached.
    starts: [Option<usize>; 4],
    edns: Option<Edns<'a>>,
    opt_offset: Option<usize>,
    tsig_offset: Option<usize>,
    done: bool,
}

impl<'a> MessageReader<'a> {
    /// Decodes the header and positions the reader on the first question.
    pub fn new(msg: &'a [u8]) -> Result<MessageReader<'a>> {
        let header = Header::from_wire(msg)?;
        let mut reader = MessageReader {
            msg,
            header,
            pos: HEADER_LEN,
            section: Section::Question,
            left: header.count(Section::Question),
            starts: [Some(HEADER_LEN), None, None, None],
            edns: None,
            opt_offset: None,
            tsig_offset: None,
            done: false,
        };
        reader.advance_section()?;
        Ok(reader)
    }

    /// The decoded header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The whole message.
    pub fn message(&self) -> &'a [u8] {
        self.msg
    }

    /// The section the next item comes from (`None` once everything is read).
    pub fn section(&self) -> Option<Section> {
        (!self.done).then_some(self.section)
    }

    /// Offset where `section` starts, once the reader has reached it.
    pub fn section_offset(&self, section: Section) -> Option<usize> {
        self.starts.get(section.index()).copied().flatten()
    }

    /// The EDNS data of the OPT record, once it has been read.
    pub fn edns(&self) -> Option<&Edns<'a>> {
        self.edns.as_ref()
    }

    /// Offset of the OPT record, once it has been read.
    pub fn opt_offset(&self) -> Option<usize> {
        self.opt_offset
    }

    /// Offset of the TSIG record (always the last record), once it has been read.
    pub fn tsig_offset(&self) -> Option<usize> {
        self.tsig_offset
    }

    /// True once every counted item has been read (and no trailing bytes were found).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Reads the next question; `None` when the question section is exhausted.
    pub fn question(&mut self) -> Result<Option<Question>> {
        if self.done || self.section != Section::Question {
            return Ok(None);
        }
        let offset = self.pos;
        let (name, after) = read_name(self.msg, offset)?;
        let fixed: [u8; 4] = self
            .msg
            .get(after..after + 4)
            .and_then(|b| b.try_into().ok())
            .ok_or(self.truncated())?;
        let [t0, t1, c0, c1] = fixed;
        let question = Question {
            name,
            qtype: Rtype(u16::from_be_bytes([t0, t1])),
            qclass: Class(u16::from_be_bytes([c0, c1])),
            offset,
            end: after + 4,
        };
        self.pos = question.end;
        self.item_read()?;
        Ok(Some(question))
    }

    /// Reads the next record of the answer, authority or additional section, skipping any
    /// questions not read yet. RDATA that needs expanding goes into `scratch`
    /// ([`MAX_RDATA_LEN`](super::MAX_RDATA_LEN) bytes always suffice; a smaller buffer
    /// that turns out too small gives [`Error::NoSpace`]). `None` after the last record.
    pub fn record<'s>(&mut self, scratch: &'s mut [u8]) -> Result<Option<Record<'s>>>
    where
        'a: 's,
    {
        let mut owner = NameBuilder::new();
        Ok(self.record_in(&mut owner, scratch)?.map(|r| Record {
            section: r.section,
            offset: r.offset,
            owner: NameBuf::from_dname(r.owner),
            rtype: r.rtype,
            class: r.class,
            ttl: r.ttl,
            rdata: r.rdata,
            rdata_offset: r.rdata_offset,
            end: r.end,
        }))
    }

    /// [`record`](Self::record) with the owner decompressed into `owner` (started
    /// afresh) and borrowed from it: no 256-byte name is moved per record, which counts
    /// for readers of millions of records (zone transfers).
    pub fn record_in<'s, 'n>(
        &mut self,
        owner: &'n mut NameBuilder,
        scratch: &'s mut [u8],
    ) -> Result<Option<RecordIn<'s, 'n>>>
    where
        'a: 's,
    {
        self.skip_questions()?;
        if self.done {
            return Ok(None);
        }
        let offset = self.pos;
        let (owner, after) = read_name_in(owner, self.msg, offset)?;
        let fixed = self.fixed_fields(after)?;
        let rdata_offset = after + 10;
        let end = rdata_offset + fixed.rdlength;
        if end > self.msg.len() {
            return Err(self.truncated());
        }
        let shape = fixed.rtype.shape();
        let expanded = shape.decompress && fixed.rdlength > 0;
        let rdata: &'s [u8] = if expanded {
            let mut sink = SliceSink { out: scratch, len: 0 };
            expand_rdata(self.msg, rdata_offset, end, shape, &mut sink)?;
            let len = sink.len;
            sink.out.get(..len).unwrap_or(&[])
        } else {
            self.msg.get(rdata_offset..end).unwrap_or(&[])
        };
        let record = RecordIn {
            section: self.section,
            offset,
            owner,
            rtype: fixed.rtype,
            class: fixed.class,
            ttl: fixed.ttl,
            rdata,
            rdata_offset,
            end,
            rdata_checked: expanded && shape.read_checks_all(),
        };
        self.check_meta(&record)?;
        self.pos = end;
        self.item_read()?;
        Ok(Some(record))
    }

    /// Skips (but validates) items until the reader reaches `section` or the end.
    pub fn skip_to(&mut self, section: Section) -> Result<()> {
        while !self.done && self.section < section {
            self.skip_item()?;
        }
        Ok(())
    }

    /// Validates every remaining item and the absence of trailing bytes.
    pub fn finish(&mut self) -> Result<()> {
        while !self.done {
            self.skip_item()?;
        }
        Ok(())
    }

    /// Reads and drops one item, checking names and compressed RDATA without copying.
    fn skip_item(&mut self) -> Result<()> {
        if self.section == Section::Question {
            return self.question().map(|_| ());
        }
        let offset = self.pos;
        let (_, after) = read_name(self.msg, offset)?;
        let fixed = self.fixed_fields(after)?;
        let end = after + 10 + fixed.rdlength;
        if end > self.msg.len() {
            return Err(self.truncated());
        }
        if fixed.rtype == Rtype::OPT || fixed.rtype == Rtype::TSIG {
            // Meta records are checked in full: re-read through the normal path.
            return self.record(&mut []).map(|_| ());
        }
        let shape = fixed.rtype.shape();
        if shape.decompress && fixed.rdlength > 0 {
            expand_rdata(self.msg, after + 10, end, shape, &mut CountSink(0))?;
        }
        self.pos = end;
        self.item_read()
    }

    fn skip_questions(&mut self) -> Result<()> {
        while !self.done && self.section == Section::Question {
            self.question()?;
        }
        Ok(())
    }

    /// TYPE, CLASS, TTL and RDLENGTH at `at`.
    fn fixed_fields(&self, at: usize) -> Result<Fixed> {
        let bytes: [u8; 10] =
            self.msg.get(at..at + 10).and_then(|b| b.try_into().ok()).ok_or(self.truncated())?;
        let [t0, t1, c0, c1, l0, l1, l2, l3, r0, r1] = bytes;
        Ok(Fixed {
            rtype: Rtype(u16::from_be_bytes([t0, t1])),
            class: Class(u16::from_be_bytes([c0, c1])),
            ttl: u32::from_be_bytes([l0, l1, l2, l3]),
            rdlength: usize::from(u16::from_be_bytes([r0, r1])),
        })
    }

    /// Placement rules for OPT (RFC 6891 §6.1.1) and TSIG (RFC 8945 §5.1).
    fn check_meta(&mut self, record: &RecordIn<'_, '_>) -> Result<()> {
        let offset = record.offset;
        if self.tsig_offset.is_some() {
            return Err(Error::BadTsig { offset, reason: "TSIG is not the last record" });
        }
        match record.rtype {
            Rtype::OPT => {
                let reason = if record.section != Section::Additional {
                    "OPT outside the additional section"
                } else if self.opt_offset.is_some() {
                    "more than one OPT record"
                } else if !record.owner.is_root() {
                    "OPT owner is not the root"
                } else {
                    // OPT RDATA is never expanded: take it from the message itself.
                    let rdata = self.msg.get(record.rdata_offset..record.end).unwrap_or(&[]);
                    let edns = Edns::from_record(record.class, record.ttl, rdata)
                        .map_err(|e| e.shifted(record.rdata_offset))?;
                    self.edns = Some(edns.with_offset(record.rdata_offset));
                    self.opt_offset = Some(offset);
                    return Ok(());
                };
                Err(Error::BadOpt { offset, reason })
            }
            Rtype::TSIG => {
                if record.section != Section::Additional || self.left != 1 {
                    return Err(Error::BadTsig { offset, reason: "TSIG is not the last record" });
                }
                self.tsig_offset = Some(offset);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Counts one item as read and moves to the next non-empty section.
    fn item_read(&mut self) -> Result<()> {
        self.left = self.left.saturating_sub(1);
        self.advance_section()
    }

    fn advance_section(&mut self) -> Result<()> {
        while self.left == 0 {
            let Some(next) = self.section.next() else {
                return self.end_of_message();
            };
            self.section = next;
            self.left = self.header.count(next);
            if let Some(slot) = self.starts.get_mut(next.index()) {
                *slot = Some(self.pos);
            }
        }
        Ok(())
    }

    fn end_of_message(&mut self) -> Result<()> {
        if self.pos < self.msg.len() {
            return Err(Error::TrailingData { offset: self.pos });
        }
        self.done = true;
        Ok(())
    }

    fn truncated(&self) -> Error {
        Error::Truncated { offset: self.msg.len() }
    }
}
