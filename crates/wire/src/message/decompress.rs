//! Reading compressed names and expanding RDATA that may contain them.
//!
//! Decompression cannot loop (ARCHITECTURE.md §5): a limit starts at the name's own
//! offset, every pointer must point strictly below it, and following a pointer lowers the
//! limit to the target. Reserved label types 0x40/0x80 (RFC 6891 §5 retired extended
//! labels), names over 255 bytes (RFC 1035 §2.3.4) and reads past the end are errors, each
//! with the byte offset where the message went wrong.

use crate::error::{Error, Result};
use crate::name::{Dname, NameBuf, NameBuilder, MAX_NAME_LEN};
use crate::rdata::{Field, Shape};

/// Longest RDATA a record can carry (RDLENGTH is 16 bits). Expanded RDATA longer than
/// this could not be written again and is rejected.
pub const MAX_RDATA_LEN: usize = 65535;

/// Reads a possibly compressed name starting at `start`. Returns the name and the offset
/// just after the name's bytes at `start` (after its first pointer or its root label).
pub fn read_name(msg: &[u8], start: usize) -> Result<(NameBuf, usize)> {
    let mut builder = NameBuilder::new();
    let (end, root) = read_labels(&mut builder, msg, start)?;
    let name = builder.finish().map_err(|_| Error::NameTooLong { offset: root })?;
    Ok((name, end))
}

/// [`read_name`] into `builder`, started afresh: the name is built where it stays and
/// borrowed from there, instead of a 256-byte [`NameBuf`] moved out (a zone transfer
/// reads millions of names).
pub fn read_name_in<'b>(
    builder: &'b mut NameBuilder,
    msg: &[u8],
    start: usize,
) -> Result<(&'b Dname, usize)> {
    builder.clear();
    let (end, root) = read_labels(builder, msg, start)?;
    let name = builder.finish_in(Dname::ROOT).map_err(|_| Error::NameTooLong { offset: root })?;
    Ok((name, end))
}

/// Where a name's labels go as they are followed: a name being built, or expanded RDATA.
trait Labels {
    /// Bytes of labels appended so far.
    fn len(&self) -> usize;
    /// Appends `msg[from..to]`, whole labels already checked.
    fn push(&mut self, msg: &[u8], from: usize, to: usize) -> Result<()>;
}

impl Labels for NameBuilder {
    fn len(&self) -> usize {
        NameBuilder::len(self)
    }
    fn push(&mut self, msg: &[u8], from: usize, to: usize) -> Result<()> {
        push_run(self, msg, from, to)
    }
}

/// A name's labels appended to expanded RDATA, counted from where the name starts.
struct Expanded<'o, S: Sink> {
    out: &'o mut S,
    start: usize,
}

impl<S: Sink> Labels for Expanded<'_, S> {
    fn len(&self) -> usize {
        self.out.len() - self.start
    }
    fn push(&mut self, msg: &[u8], from: usize, to: usize) -> Result<()> {
        let labels = msg.get(from..to).ok_or(Error::Truncated { offset: msg.len() })?;
        emit(self.out, labels, from)
    }
}

/// Follows the name at `start` into `builder` (labels only, no root); returns the offset
/// just after its bytes at `start` and where its root label is.
fn read_labels(builder: &mut impl Labels, msg: &[u8], start: usize) -> Result<(usize, usize)> {
    let mut pos = start;
    let mut limit = start;
    let mut run_start = start;
    let mut end = None;
    loop {
        let len = *msg.get(pos).ok_or(Error::Truncated { offset: msg.len() })?;
        match len & 0xC0 {
            0x00 if len == 0 => {
                builder.push(msg, run_start, pos)?;
                return Ok((end.unwrap_or(pos + 1), pos));
            }
            0x00 => {
                let next = pos + 1 + usize::from(len);
                if builder.len() + (next - run_start) >= MAX_NAME_LEN {
                    return Err(Error::NameTooLong { offset: pos });
                }
                pos = next;
            }
            0xC0 => {
                let low = *msg.get(pos + 1).ok_or(Error::Truncated { offset: msg.len() })?;
                let target = usize::from(len & 0x3F) << 8 | usize::from(low);
                if target >= limit {
                    return Err(Error::BadPointer { offset: pos });
                }
                builder.push(msg, run_start, pos)?;
                end.get_or_insert(pos + 2);
                limit = target;
                pos = target;
                run_start = target;
            }
            _ => return Err(Error::BadLabelType { offset: pos }),
        }
    }
}

/// Appends the labels `msg[from..to]` (already length-checked) to the name being built.
fn push_run(builder: &mut NameBuilder, msg: &[u8], from: usize, to: usize) -> Result<()> {
    let labels = msg.get(from..to).ok_or(Error::Truncated { offset: msg.len() })?;
    builder.push_wire_labels(labels).map_err(|_| Error::NameTooLong { offset: from })
}

/// Where expanded RDATA goes: a caller's buffer, or nowhere (validation only).
pub(crate) trait Sink {
    /// Appends bytes; fails when the destination is full.
    fn put(&mut self, bytes: &[u8]) -> Result<()>;
    /// Bytes appended so far.
    fn len(&self) -> usize;
}

/// Writes into a borrowed slice.
pub(crate) struct SliceSink<'o> {
    pub(crate) out: &'o mut [u8],
    pub(crate) len: usize,
}

impl Sink for SliceSink<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self.len + bytes.len();
        let dst = self.out.get_mut(self.len..end).ok_or(Error::NoSpace)?;
        crate::bytes::copy(dst, bytes);
        self.len = end;
        Ok(())
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// Counts bytes without keeping them.
pub(crate) struct CountSink(pub(crate) usize);

impl Sink for CountSink {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.0 += bytes.len();
        Ok(())
    }
    fn len(&self) -> usize {
        self.0
    }
}

/// Expands the RDATA at `msg[start..end]` field by field following `shape`, replacing
/// compressed names by their full wire form. Fields that run past `end`, and bytes left
/// over after the last field, are errors.
pub(crate) fn expand_rdata(
    msg: &[u8],
    start: usize,
    end: usize,
    shape: &Shape,
    out: &mut impl Sink,
) -> Result<()> {
    let mut pos = start;
    for field in shape.fields {
        pos = match *field {
            Field::Bytes(n) => copy(msg, pos, pos + usize::from(n), end, out)?,
            Field::CharString => {
                let len = *msg.get(pos).filter(|_| pos < end).ok_or(short(pos))?;
                copy(msg, pos, pos + 1 + usize::from(len), end, out)?
            }
            Field::Rest => copy(msg, pos, end, end, out)?,
            Field::Name => {
                // Straight into `out`, labels then the root: a name is built nowhere
                // else (a transfer expands millions).
                let (next, root) = read_labels(&mut Expanded { start: out.len(), out }, msg, pos)?;
                if next > end {
                    return Err(Error::BadRdata { offset: pos, reason: "name runs past RDATA" });
                }
                emit(out, &[0], root)?;
                next
            }
        };
    }
    if pos != end {
        return Err(Error::TrailingData { offset: pos });
    }
    Ok(())
}

/// Copies `msg[from..to]` (which must end by `end`); returns `to`.
fn copy(msg: &[u8], from: usize, to: usize, end: usize, out: &mut impl Sink) -> Result<usize> {
    let bytes = msg.get(from..to).filter(|_| to <= end).ok_or(short(from))?;
    emit(out, bytes, from)?;
    Ok(to)
}

/// Appends expanded bytes, refusing RDATA that would grow past 65535 bytes.
fn emit(out: &mut impl Sink, bytes: &[u8], offset: usize) -> Result<()> {
    if out.len() + bytes.len() > MAX_RDATA_LEN {
        return Err(Error::BadRdata { offset, reason: "expanded RDATA longer than 65535 bytes" });
    }
    out.put(bytes)
}

fn short(offset: usize) -> Error {
    Error::BadRdata { offset, reason: "RDATA ends inside a field" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Rtype;

    /// RFC 1035 §4.1.4: F.ISI.ARPA at 20, FOO.F.ISI.ARPA at 40 pointing to 20, ARPA at 64
    /// as a pointer to 26, and the root at 92. Bytes below 20 are filler.
    fn rfc1035_example() -> Vec<u8> {
        let mut msg = vec![0u8; 20];
        msg.extend_from_slice(b"\x01F\x03ISI\x04ARPA\x00"); // 20..32
        msg.resize(40, 0);
        msg.extend_from_slice(b"\x03FOO\xc0\x14"); // 40..46
        msg.resize(64, 0);
        msg.extend_from_slice(b"\xc0\x1a"); // 64..66
        msg.resize(92, 0);
        msg.push(0); // 92
        msg
    }

    #[test]
    fn rfc1035_compression_example() {
        let msg = rfc1035_example();
        let (f, end) = read_name(&msg, 20).unwrap();
        assert_eq!(f.as_wire(), b"\x01F\x03ISI\x04ARPA\x00");
        assert_eq!(end, 32);
        let (foo, end) = read_name(&msg, 40).unwrap();
        assert_eq!(foo.to_string(), "FOO.F.ISI.ARPA.");
        assert_eq!(end, 46);
        let (arpa, end) = read_name(&msg, 64).unwrap();
        assert_eq!(arpa.to_string(), "ARPA.");
        assert_eq!(end, 66);
        let (root, end) = read_name(&msg, 92).unwrap();
        assert!(root.is_root());
        assert_eq!(end, 93);
    }

    #[test]
    fn pointers_must_point_strictly_backwards() {
        // Pointer to itself.
        let msg = b"\x00\x00\xc0\x02";
        assert_eq!(read_name(msg, 2).unwrap_err(), Error::BadPointer { offset: 2 });
        // Forward pointer.
        let msg = b"\xc0\x02\x00";
        assert_eq!(read_name(msg, 0).unwrap_err(), Error::BadPointer { offset: 0 });
        // A loop through two pointers: 4 -> 2 -> 4 (the second jump is not below 2).
        let msg = b"\x00\x00\xc0\x04\xc0\x02";
        assert_eq!(read_name(msg, 4).unwrap_err(), Error::BadPointer { offset: 2 });
        // A label then a pointer back into the same name.
        let msg = b"\x01a\xc0\x00";
        assert_eq!(read_name(msg, 0).unwrap_err(), Error::BadPointer { offset: 2 });
        // A chain that keeps going down is fine: 6 -> 4 -> 2 -> root at 0... (labels).
        let msg = b"\x00\x00\x01b\xc0\x00\x01a\xc0\x02";
        let (name, end) = read_name(msg, 6).unwrap();
        assert_eq!(name.to_string(), "a.b.");
        assert_eq!(end, 10);
    }

    #[test]
    fn reserved_label_types_and_truncation() {
        assert_eq!(read_name(b"\x41a\x00", 0).unwrap_err(), Error::BadLabelType { offset: 0 });
        assert_eq!(read_name(b"\x01a\x80", 0).unwrap_err(), Error::BadLabelType { offset: 2 });
        assert_eq!(read_name(b"\x03ab", 0).unwrap_err(), Error::Truncated { offset: 3 });
        assert_eq!(read_name(b"\x01a", 0).unwrap_err(), Error::Truncated { offset: 2 });
        assert_eq!(read_name(b"\x00\xc0", 1).unwrap_err(), Error::Truncated { offset: 2 });
        assert_eq!(read_name(b"", 0).unwrap_err(), Error::Truncated { offset: 0 });
    }

    #[test]
    fn chains_longer_than_255_bytes_are_refused() {
        // Four 63-byte labels reached through pointers: 4 * 64 + 1 = 257 bytes.
        let mut msg = Vec::new();
        msg.push(0); // root at 0
        let mut starts = vec![0usize];
        for _ in 0..4 {
            let prev = *starts.last().unwrap();
            starts.push(msg.len());
            msg.push(63);
            msg.extend_from_slice(&[b'x'; 63]);
            msg.extend_from_slice(&[0xC0 | (prev >> 8) as u8, prev as u8]);
        }
        assert_eq!(read_name(&msg, starts[3]).unwrap().0.len(), 3 * 64 + 1);
        let err = read_name(&msg, starts[4]).unwrap_err();
        assert_eq!(err, Error::NameTooLong { offset: starts[1] });
        // Without pointers: 255 is the maximum.
        let mut flat = Vec::new();
        for len in [63u8, 63, 63, 61] {
            flat.push(len);
            flat.extend(std::iter::repeat_n(b'y', usize::from(len)));
        }
        flat.push(0);
        assert_eq!(read_name(&flat, 0).unwrap().0.len(), 255);
        flat.insert(0, 1);
        flat.insert(1, b'z');
        assert_eq!(read_name(&flat, 0).unwrap_err(), Error::NameTooLong { offset: 194 });
    }

    #[test]
    fn expands_rdata_by_shape() {
        let mut msg = rfc1035_example();
        // MX 10 FOO.F.ISI.ARPA. with the exchange as a pointer to 40.
        let start = msg.len();
        msg.extend_from_slice(b"\x00\x0a\xc0\x28");
        let end = msg.len();
        let mut buf = [0u8; 64];
        let mut sink = SliceSink { out: &mut buf, len: 0 };
        expand_rdata(&msg, start, end, Rtype::MX.shape(), &mut sink).unwrap();
        let len = sink.len;
        assert_eq!(&buf[..len], b"\x00\x0a\x03FOO\x01F\x03ISI\x04ARPA\x00");
        // The same bytes with one byte missing, or one byte extra.
        let mut count = CountSink(0);
        let err = expand_rdata(&msg, start, end - 1, Rtype::MX.shape(), &mut count).unwrap_err();
        assert_eq!(err, Error::BadRdata { offset: start + 2, reason: "name runs past RDATA" });
        msg.push(7);
        let mut count = CountSink(0);
        let err = expand_rdata(&msg, start, end + 1, Rtype::MX.shape(), &mut count).unwrap_err();
        assert_eq!(err, Error::TrailingData { offset: end });
        // Expansion past 65535 bytes: a SIG-shaped RDATA (18 bytes, a name, the rest) whose
        // signer is a pointer to a 255-byte name and whose rest fills the RDATA.
        let mut big = vec![0u8; 12];
        for len in [63u8, 63, 63, 61] {
            big.push(len);
            big.extend(std::iter::repeat_n(b'q', usize::from(len)));
        }
        big.push(0);
        let sig_at = big.len();
        big.extend_from_slice(&[0u8; 18]);
        big.extend_from_slice(b"\xc0\x0c");
        big.resize(sig_at + 65535, 0);
        let mut count = CountSink(0);
        let err = expand_rdata(&big, sig_at, sig_at + 65535, Rtype::SIG.shape(), &mut count);
        assert!(matches!(err, Err(Error::BadRdata { .. })), "{err:?}");
        // A buffer too small is reported, not a panic.
        let mut tiny = [0u8; 4];
        let mut sink = SliceSink { out: &mut tiny, len: 0 };
        let err = expand_rdata(&msg, start, end, Rtype::MX.shape(), &mut sink).unwrap_err();
        assert_eq!(err, Error::NoSpace);
    }
}
