//! Domain names (RFC 1034 §3.1, RFC 1035 §2.3.4 and §3.1).
//!
//! Three shapes of the same thing, like `str`/`String`:
//! * [`Dname`] — a borrowed, validated, uncompressed wire-form name (`&Dname`).
//! * [`Name`] — an owned name on the heap: wire form plus its label offsets in one
//!   allocation.
//! * [`NameBuf`] — an owned name on the stack (256 bytes), for hot paths that must not
//!   allocate; built with [`NameBuilder`]. [`parse_text_onto`] appends a name read from
//!   text straight to a wire-form buffer instead.
//!
//! Comparison is case-insensitive (RFC 4343) while the original spelling is kept for output.
//! [`Dname::canonical_cmp`] is the DNSSEC canonical order of RFC 4034 §6.1, and
//! [`LookupKey`] is a byte string whose plain byte order equals that canonical order, so a
//! zone can be kept in any ordered byte-keyed structure.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use crate::bytes::{splat, zero_bytes};
use crate::error::{Error, Result};

/// Longest name in wire form, root label included (RFC 1035 §2.3.4).
pub const MAX_NAME_LEN: usize = 255;
/// Longest label (RFC 1035 §2.3.4).
pub const MAX_LABEL_LEN: usize = 63;
/// Most labels a name can have, root excluded.
pub const MAX_LABELS: usize = 127;

/// A validated, uncompressed domain name in wire form, borrowed.
///
/// Invariant: a sequence of labels, each a length byte 1..=63 followed by that many bytes,
/// ended by the zero-length root label, 255 bytes at most. No compression pointers.
#[repr(transparent)]
pub struct Dname([u8]);

impl Dname {
    /// The root name `.`.
    pub const ROOT: &'static Dname = Dname::from_valid(&[0]);

    /// Wraps bytes already known to be a valid name.
    const fn from_valid(wire: &[u8]) -> &Dname {
        // SAFETY: `Dname` is `repr(transparent)` over `[u8]`, so the pointer cast keeps
        // layout and metadata; callers only pass validated wire names.
        unsafe { &*(wire as *const [u8] as *const Dname) }
    }

    /// Reads an uncompressed name at the start of `bytes`; returns it and its length.
    /// Pointers are refused: this is for storage formats and rdata that must not be
    /// compressed.
    pub fn from_wire_prefix(bytes: &[u8]) -> Result<(&Dname, usize)> {
        let len = valid_prefix_len(bytes)?;
        let wire = bytes.get(..len).ok_or(Error::Truncated { offset: bytes.len() })?;
        Ok((Dname::from_valid(wire), len))
    }

    /// A name that a store validated when it kept it (a zone node's owner, the RDATA
    /// name of a stored record): O(1), only the length and the final root byte are
    /// checked (in full in debug builds). Bytes that were never validated give a wrong
    /// name, never an out-of-bounds read: every method reads through checked slices.
    #[inline]
    pub fn from_stored(bytes: &[u8]) -> Option<&Dname> {
        let plausible = bytes.len() <= MAX_NAME_LEN && bytes.last() == Some(&0);
        debug_assert!(!plausible || Dname::from_wire(bytes).is_ok(), "not a name: {bytes:?}");
        plausible.then(|| Dname::from_valid(bytes))
    }

    /// Reads an uncompressed name that must fill `bytes` exactly.
    pub fn from_wire(bytes: &[u8]) -> Result<&Dname> {
        let (name, len) = Dname::from_wire_prefix(bytes)?;
        if len != bytes.len() {
            return Err(Error::TrailingData { offset: len });
        }
        Ok(name)
    }

    /// The wire form, root label included.
    pub fn as_wire(&self) -> &[u8] {
        &self.0
    }

    /// Length of the wire form (1 for the root).
    #[allow(clippy::len_without_is_empty)] // a name is never empty: the root has length 1
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the root name.
    pub fn is_root(&self) -> bool {
        self.0.len() == 1
    }

    /// Number of labels, not counting the root (`www.example.` has 2).
    pub fn label_count(&self) -> usize {
        self.labels().count()
    }

    /// The labels from left to right, root excluded, without their length bytes.
    pub fn labels(&self) -> Labels<'_> {
        Labels { rest: &self.0 }
    }

    /// The first (leftmost) label, or `None` for the root.
    pub fn first_label(&self) -> Option<&[u8]> {
        self.labels().next()
    }

    /// True when the first label is `*` (RFC 4592 §2.1.1).
    pub fn is_wildcard(&self) -> bool {
        self.first_label() == Some(b"*")
    }

    /// The name without its first label; `None` for the root.
    pub fn parent(&self) -> Option<&Dname> {
        let first = usize::from(*self.0.first()?);
        if first == 0 {
            return None;
        }
        self.0.get(first + 1..).map(Dname::from_valid)
    }

    /// The suffix of this name that has `count` labels (root excluded); `None` if the
    /// name has fewer.
    pub fn suffix(&self, count: usize) -> Option<&Dname> {
        let mut offsets = LabelOffsets::default();
        self.label_offsets_into(&mut offsets);
        let total = offsets.len();
        if count > total {
            return None;
        }
        let start = match count {
            0 => self.len() - 1,
            _ => usize::from(offsets.get(total - count)?),
        };
        self.0.get(start..).map(Dname::from_valid)
    }

    /// The suffix starting at byte `offset`, which must be where a label starts (an offset
    /// from [`Dname::label_offsets`], or the root's). O(1): the offset is trusted, not
    /// re-validated; a wrong one gives a wrong name but never reads out of bounds.
    #[inline]
    pub fn suffix_at(&self, offset: usize) -> Option<&Dname> {
        self.0.get(offset..).filter(|s| !s.is_empty()).map(Dname::from_valid)
    }

    /// Byte offsets of each label's length byte, left to right, root excluded.
    pub fn label_offsets(&self) -> LabelOffsets {
        let mut offsets = LabelOffsets::default();
        self.label_offsets_into(&mut offsets);
        offsets
    }

    /// [`label_offsets`](Self::label_offsets) into `offsets` (what it held is replaced),
    /// where they stay: a table returned by value is copied whole, 16 bytes at a time, right
    /// after its offsets were stored one byte at a time, and each of those loads waits
    /// for the stores (a sixth of a name's compression in a zone transfer).
    #[inline]
    pub fn label_offsets_into(&self, offsets: &mut LabelOffsets) {
        offsets.count = 0;
        let mut pos = 0usize;
        while let Some(&len) = self.0.get(pos) {
            if len == 0 {
                break;
            }
            if let Some(slot) = offsets.offsets.get_mut(usize::from(offsets.count)) {
                // A valid name is at most 255 bytes, so every offset fits a byte.
                *slot = pos as u8;
                offsets.count += 1;
            }
            pos += usize::from(len) + 1;
        }
    }

    /// Case-insensitive equality (RFC 4343).
    pub fn eq_ignore_case(&self, other: &Dname) -> bool {
        // Length bytes are at most 63, below b'A', so lower-casing the whole wire form
        // only touches label contents.
        crate::ascii::eq_ignore_case(&self.0, &other.0)
    }

    /// True when this name equals `ancestor` or lies below it (label-wise, any case).
    pub fn ends_with(&self, ancestor: &Dname) -> bool {
        let Some(skip) = self.len().checked_sub(ancestor.len()) else {
            return false;
        };
        let mut pos = 0usize;
        while pos < skip {
            match self.0.get(pos) {
                Some(&len) if len != 0 => pos += usize::from(len) + 1,
                _ => return false,
            }
        }
        pos == skip
            && self.0.get(skip..).is_some_and(|s| crate::ascii::eq_ignore_case(s, &ancestor.0))
    }

    /// True when this name lies strictly below `ancestor`.
    pub fn is_below(&self, ancestor: &Dname) -> bool {
        self.len() > ancestor.len() && self.ends_with(ancestor)
    }

    /// DNSSEC canonical order (RFC 4034 §6.1): labels compared from the root down as
    /// lower-cased octet strings, a name sorting before its descendants.
    pub fn canonical_cmp(&self, other: &Dname) -> Ordering {
        let (mut a, mut b) = (LabelOffsets::default(), LabelOffsets::default());
        self.label_offsets_into(&mut a);
        other.label_offsets_into(&mut b);
        let (mut i, mut j) = (a.len(), b.len());
        while i > 0 && j > 0 {
            i -= 1;
            j -= 1;
            let la = self.label_at(a.get(i));
            let lb = other.label_at(b.get(j));
            let ord = cmp_ignore_case(la, lb);
            if ord != Ordering::Equal {
                return ord;
            }
        }
        i.cmp(&j)
    }

    /// The label whose length byte is at `offset` (an offset from [`Self::label_offsets`]).
    fn label_at(&self, offset: Option<u8>) -> &[u8] {
        let start = usize::from(offset.unwrap_or(0));
        let len = usize::from(self.0.get(start).copied().unwrap_or(0));
        self.0.get(start + 1..start + 1 + len).unwrap_or(&[])
    }

    /// The lookup key: labels from the root down, lower-cased, each followed by a zero
    /// byte, with bytes 0x00 and 0x01 escaped as 0x01 0x01 and 0x01 0x02. Byte order of
    /// keys equals canonical name order, and an ancestor's key is a prefix of its
    /// descendants' keys. The root's key is empty.
    pub fn lookup_key(&self) -> LookupKey {
        let mut key = LookupKey { len: 0, bytes: [0; LookupKey::CAPACITY] };
        let mut offsets = LabelOffsets::default();
        self.label_offsets_into(&mut offsets);
        for i in (0..offsets.len()).rev() {
            key.push_label(self.label_at(offsets.get(i)));
        }
        key
    }

    /// The first 16 bytes of the [lookup key](Self::lookup_key) past the key of the name's
    /// last `skip` labels (its ancestor of `skip` labels), padded with zeros, as a
    /// big-endian integer. Of two names below the same ancestor of `skip` labels, the one
    /// with the lesser integer sorts first in canonical order; equal integers tell
    /// nothing (then the names are compared whole). A sort key made without a buffer.
    pub fn lookup_key_prefix(&self, skip: usize) -> u128 {
        let mut offsets = LabelOffsets::default();
        self.label_offsets_into(&mut offsets);
        let (mut bytes, mut len) = ([0u8; 16], 0);
        for i in (0..offsets.len().saturating_sub(skip)).rev() {
            push_key_label(self.label_at(offsets.get(i)), &mut |b| {
                if let Some(slot) = bytes.get_mut(len) {
                    *slot = b;
                    len += 1;
                }
            });
            if len == bytes.len() {
                break;
            }
        }
        u128::from_be_bytes(bytes)
    }

    /// Copies this name into a new owned [`Name`].
    pub fn to_name(&self) -> Name {
        Name::from_dname(self)
    }

    /// Writes the wire form with ASCII letters lower-cased (RFC 4034 §6.2).
    pub fn write_lowercase(&self, out: &mut Vec<u8>) {
        out.extend(self.0.iter().map(u8::to_ascii_lowercase));
    }

    /// Hashes the name case-insensitively without allocating.
    fn hash_ignore_case<H: Hasher>(&self, state: &mut H) {
        let mut lower = [0u8; MAX_NAME_LEN];
        let len = self.0.len().min(MAX_NAME_LEN);
        for (dst, src) in lower.iter_mut().zip(&self.0) {
            *dst = src.to_ascii_lowercase();
        }
        state.write(lower.get(..len).unwrap_or(&[]));
    }
}

/// Validates an uncompressed name at the start of `bytes`; returns its wire length.
fn valid_prefix_len(bytes: &[u8]) -> Result<usize> {
    let mut pos = 0usize;
    loop {
        let len = *bytes.get(pos).ok_or(Error::Truncated { offset: pos })?;
        match len & 0xC0 {
            0x00 => {}
            0xC0 => return Err(Error::BadPointer { offset: pos }),
            _ => return Err(Error::BadLabelType { offset: pos }),
        }
        let next = pos + 1 + usize::from(len);
        if next > MAX_NAME_LEN {
            return Err(Error::NameTooLong { offset: pos });
        }
        if len == 0 {
            return Ok(next);
        }
        if next > bytes.len() {
            return Err(Error::Truncated { offset: bytes.len() });
        }
        pos = next;
    }
}

/// Lexicographic comparison of lower-cased bytes; a prefix sorts first.
fn cmp_ignore_case(a: &[u8], b: &[u8]) -> Ordering {
    let common = a.iter().zip(b).map(|(x, y)| x.to_ascii_lowercase().cmp(&y.to_ascii_lowercase()));
    for ord in common {
        if ord != Ordering::Equal {
            return ord;
        }
    }
    a.len().cmp(&b.len())
}

impl PartialEq for Dname {
    fn eq(&self, other: &Self) -> bool {
        self.eq_ignore_case(other)
    }
}
impl Eq for Dname {}

impl Hash for Dname {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.hash_ignore_case(state);
    }
}

impl PartialOrd for Dname {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Dname {
    fn cmp(&self, other: &Self) -> Ordering {
        self.canonical_cmp(other)
    }
}

impl fmt::Display for Dname {
    /// Presentation format (RFC 1035 §5.1), absolute with a trailing dot.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_root() {
            return f.write_str(".");
        }
        for label in self.labels() {
            write_label_text(label, f)?;
            f.write_str(".")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Dname {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dname({self})")
    }
}

impl ToOwned for Dname {
    type Owned = Name;
    fn to_owned(&self) -> Name {
        Name::from_dname(self)
    }
}

/// Writes one label in presentation format, escaping what would not read back the same.
pub fn write_label_text(label: &[u8], out: &mut impl fmt::Write) -> fmt::Result {
    // Runs of bytes shown as they are go out in one write each.
    let mut run = 0;
    for (at, &b) in label.iter().enumerate() {
        let special = matches!(b, b'.' | b'\\' | b'"' | b'(' | b')' | b';' | b'@' | b'$');
        if !special && (0x21..=0x7E).contains(&b) {
            continue;
        }
        write_plain(label.get(run..at).unwrap_or_default(), out)?;
        run = at + 1;
        match special {
            true => {
                out.write_char('\\')?;
                out.write_char(char::from(b))?;
            }
            false => write!(out, "\\{b:03}")?,
        }
    }
    write_plain(label.get(run..).unwrap_or_default(), out)
}

/// Writes printable ASCII bytes as they are.
fn write_plain(bytes: &[u8], out: &mut impl fmt::Write) -> fmt::Result {
    out.write_str(std::str::from_utf8(bytes).map_err(|_| fmt::Error)?)
}

/// Iterator over a name's labels, left to right, root excluded.
#[derive(Debug, Clone)]
pub struct Labels<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Labels<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        let len = usize::from(*self.rest.first()?);
        if len == 0 {
            return None;
        }
        let label = self.rest.get(1..1 + len)?;
        self.rest = self.rest.get(1 + len..)?;
        Some(label)
    }
}

/// Offsets of a name's labels, on the stack.
#[derive(Clone)]
pub struct LabelOffsets {
    count: u8,
    offsets: [u8; MAX_LABELS],
}

impl Default for LabelOffsets {
    fn default() -> LabelOffsets {
        LabelOffsets { count: 0, offsets: [0; MAX_LABELS] }
    }
}

impl LabelOffsets {
    /// Number of labels (root excluded).
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }
    /// True for the root name.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Offset of the length byte of label `i` (0 = leftmost).
    pub fn get(&self, i: usize) -> Option<u8> {
        self.as_slice().get(i).copied()
    }
    /// All offsets, left to right.
    pub fn as_slice(&self) -> &[u8] {
        self.offsets.get(..self.len()).unwrap_or(&[])
    }
}

impl fmt::Debug for LabelOffsets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// A name's lookup key (see [`Dname::lookup_key`]), on the stack.
#[derive(Clone)]
pub struct LookupKey {
    len: u16,
    bytes: [u8; LookupKey::CAPACITY],
}

impl LookupKey {
    /// Enough for the longest possible key: 254 label bytes all escaped, plus separators.
    pub const CAPACITY: usize = 512;

    /// The key bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Appends one label (lower-cased, escaped) and its separator.
    fn push_label(&mut self, label: &[u8]) {
        push_key_label(label, &mut |b| self.push(b));
    }

    fn push(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(usize::from(self.len)) {
            *slot = b;
            self.len += 1;
        }
    }
}

/// Gives `push` the bytes a label adds to a lookup key: the label lower-cased, bytes 0x00
/// and 0x01 escaped as 0x01 0x01 and 0x01 0x02, then the separator 0x00.
#[inline]
fn push_key_label(label: &[u8], push: &mut impl FnMut(u8)) {
    for &b in label {
        match b.to_ascii_lowercase() {
            b @ (0 | 1) => {
                push(1);
                push(b + 1);
            }
            b => push(b),
        }
    }
    push(0);
}

impl fmt::Debug for LookupKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LookupKey({:?})", self.as_bytes().escape_ascii().to_string())
    }
}

/// An owned domain name: wire form followed by label offsets, in one shared,
/// reference-counted allocation. A clone shares it: a zone's name is held by its
/// configuration, its slot and its versions, and a server may have a million zones.
#[derive(Clone)]
pub struct Name {
    /// `wire_len` bytes of wire form, then one offset byte per label.
    buf: Arc<[u8]>,
    wire_len: u8,
}

impl Name {
    /// The root name.
    pub fn root() -> Name {
        Name::from_dname(Dname::ROOT)
    }

    /// Copies a borrowed name.
    pub fn from_dname(name: &Dname) -> Name {
        let mut offsets = LabelOffsets::default();
        name.label_offsets_into(&mut offsets);
        // One allocation: the iterator's length is known.
        let buf = name.as_wire().iter().chain(offsets.as_slice()).copied().collect();
        // A valid name is at most 255 bytes.
        Name { buf, wire_len: name.len() as u8 }
    }

    /// Parses and copies an uncompressed wire-form name filling `bytes`.
    pub fn from_wire(bytes: &[u8]) -> Result<Name> {
        Dname::from_wire(bytes).map(Name::from_dname)
    }

    /// Parses presentation format (see [`NameBuilder::parse_text`]).
    pub fn parse_text(text: &[u8], origin: Option<&Dname>) -> Result<Name, &'static str> {
        NameBuilder::parse_text(text, origin).map(|n| n.to_name())
    }

    /// Byte offsets of each label's length byte, left to right.
    pub fn stored_label_offsets(&self) -> &[u8] {
        self.buf.get(usize::from(self.wire_len)..).unwrap_or(&[])
    }
}

impl Deref for Name {
    type Target = Dname;
    fn deref(&self) -> &Dname {
        Dname::from_valid(self.buf.get(..usize::from(self.wire_len)).unwrap_or(&[0]))
    }
}

impl std::borrow::Borrow<Dname> for Name {
    fn borrow(&self) -> &Dname {
        self
    }
}

impl AsRef<Dname> for Name {
    fn as_ref(&self) -> &Dname {
        self
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}
impl Eq for Name {}
impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}
impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Name {
    fn cmp(&self, other: &Self) -> Ordering {
        (**self).cmp(&**other)
    }
}
impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}
impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

impl std::str::FromStr for Name {
    type Err = Error;
    /// Parses an absolute name in presentation format (`example.com.`; the trailing dot
    /// may be left out since there is no origin to append).
    fn from_str(s: &str) -> Result<Name> {
        let root = Dname::ROOT;
        Name::parse_text(s.as_bytes(), Some(root)).map_err(|m| Error::syntax(1, 1, m))
    }
}

/// An owned, complete name on the stack (no allocation).
#[derive(Clone)]
pub struct NameBuf {
    len: u8,
    bytes: [u8; MAX_NAME_LEN],
}

impl NameBuf {
    /// The root name.
    pub fn root() -> NameBuf {
        NameBuf { len: 1, bytes: [0; MAX_NAME_LEN] }
    }

    /// Copies a borrowed name.
    pub fn from_dname(name: &Dname) -> NameBuf {
        let mut buf = NameBuf { len: 0, bytes: [0; MAX_NAME_LEN] };
        for (dst, src) in buf.bytes.iter_mut().zip(name.as_wire()) {
            *dst = *src;
        }
        buf.len = name.len() as u8;
        buf
    }

    /// Makes this buffer a copy of `name`, writing only its bytes (a [`NameBuf`] kept
    /// for reuse is not cleared or moved whole).
    pub fn set(&mut self, name: &Dname) {
        let wire = name.as_wire();
        if let Some(dst) = self.bytes.get_mut(..wire.len()) {
            crate::bytes::copy(dst, wire);
            self.len = wire.len() as u8;
        }
    }

    /// Copies into an owned heap name.
    pub fn to_name(&self) -> Name {
        Name::from_dname(self)
    }
}

impl Deref for NameBuf {
    type Target = Dname;
    fn deref(&self) -> &Dname {
        Dname::from_valid(self.bytes.get(..usize::from(self.len)).unwrap_or(&[0]))
    }
}

impl AsRef<Dname> for NameBuf {
    fn as_ref(&self) -> &Dname {
        self
    }
}

impl fmt::Display for NameBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}
impl fmt::Debug for NameBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NameBuf({self})")
    }
}
impl PartialEq for NameBuf {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}
impl Eq for NameBuf {}

/// Builds a name label by label on the stack, then completes it with the root or an
/// origin. Used by presentation parsing, message decompression and name synthesis.
#[derive(Clone, Debug)]
pub struct NameBuilder {
    buf: NameBuf,
    /// Bytes written so far (labels without the root).
    len: usize,
}

impl Default for NameBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl NameBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        NameBuilder { buf: NameBuf { len: 0, bytes: [0; MAX_NAME_LEN] }, len: 0 }
    }

    /// Bytes of labels written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Starts a new name in the same buffer (nothing is cleared: bytes are overwritten).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// True when no label has been written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one label (1..=63 bytes). Fails if the label is empty or too long, or the
    /// name would exceed 255 bytes once the root is added.
    pub fn push_label(&mut self, label: &[u8]) -> Result<(), &'static str> {
        check_label_len(label.len())?;
        let end = self.len + 1 + label.len();
        let dst = self.buf.bytes.get_mut(self.len..end).filter(|_| end < MAX_NAME_LEN);
        let Some(dst) = dst else {
            return Err("name longer than 255 bytes");
        };
        if let Some((len_byte, rest)) = dst.split_first_mut() {
            *len_byte = label.len() as u8;
            rest.copy_from_slice(label);
        }
        self.len = end;
        Ok(())
    }

    /// Appends raw wire-form labels (each with its length byte, no root), as found in a
    /// message. The caller has validated label lengths.
    pub fn push_wire_labels(&mut self, labels: &[u8]) -> Result<(), &'static str> {
        let end = self.len + labels.len();
        let dst = self.buf.bytes.get_mut(self.len..end).filter(|_| end < MAX_NAME_LEN);
        let Some(dst) = dst else {
            return Err("name longer than 255 bytes");
        };
        crate::bytes::copy(dst, labels);
        self.len = end;
        Ok(())
    }

    /// Completes the name with the root label.
    pub fn finish(self) -> Result<NameBuf, &'static str> {
        self.finish_with(Dname::ROOT)
    }

    /// Completes the name by appending `suffix` (for example the zone origin).
    pub fn finish_with(mut self, suffix: &Dname) -> Result<NameBuf, &'static str> {
        let end = self.len + suffix.len();
        let Some(dst) = self.buf.bytes.get_mut(self.len..end) else {
            return Err("name longer than 255 bytes");
        };
        crate::bytes::copy(dst, suffix.as_wire());
        self.buf.len = end as u8;
        Ok(self.buf)
    }

    /// Parses a name in presentation format (RFC 1035 §5.1): `\X` and `\DDD` escapes, `@`
    /// for the origin, `.` for the root; a name without a trailing dot is relative and
    /// gets `origin` appended (an error when there is no origin).
    pub fn parse_text(text: &[u8], origin: Option<&Dname>) -> Result<NameBuf, &'static str> {
        let mut builder = NameBuilder::new();
        builder.parse_text_in(text, origin)?;
        Ok(builder.buf)
    }

    /// [`parse_text`](Self::parse_text) into this builder, which it starts afresh: the
    /// name is built where it stays, each byte written once, and the result borrows it
    /// (a zone load parses millions of names; returning a [`NameBuf`] moves 256 bytes).
    pub fn parse_text_in(
        &mut self,
        text: &[u8],
        origin: Option<&Dname>,
    ) -> Result<&Dname, &'static str> {
        self.len = 0;
        match text {
            b"" => return Err("empty name"),
            b"@" => return self.finish_in(origin.ok_or("'@' used without an origin")?),
            b"." => return self.finish_in(Dname::ROOT),
            _ => {}
        }
        match self.plain_labels(text) {
            Some(Ok(true)) => self.finish_in(Dname::ROOT),
            Some(Ok(false)) => self.finish_in(origin.ok_or("relative name without an origin")?),
            Some(Err(e)) => Err(e),
            None => self.escaped_labels(text, origin),
        }
    }

    /// The common case of [`parse_text_in`](Self::parse_text_in): a name without escapes,
    /// short enough that its labels cannot overflow it. The labels are copied in one
    /// piece, one byte in, and each dot's place takes the next label's length. `Some`
    /// says whether the name is absolute, or gives the error the general parser would;
    /// `None` leaves the name to it.
    fn plain_labels(&mut self, text: &[u8]) -> Option<Result<bool, &'static str>> {
        let (body, absolute) = split_root(text);
        let n = body.len();
        let dst = self.buf.bytes.get_mut(..n + 1).filter(|_| n + 1 < MAX_NAME_LEN)?;
        crate::bytes::copy(dst.get_mut(1..)?, body);
        if let Err(e) = set_label_lengths(dst)? {
            return Some(Err(e));
        }
        self.len = n + 1;
        Some(Ok(absolute))
    }

    /// [`parse_text_in`](Self::parse_text_in) in general (escapes, and names that may be
    /// too long), byte by byte, from an empty builder.
    fn escaped_labels(
        &mut self,
        text: &[u8],
        origin: Option<&Dname>,
    ) -> Result<&Dname, &'static str> {
        self.len = 0;
        let mut label_len = 0usize;
        let mut rest = text;
        let mut absolute = false;
        while let Some((&c, tail)) = rest.split_first() {
            rest = tail;
            let byte = match c {
                b'\\' => {
                    let (byte, tail) = parse_escape(rest)?;
                    rest = tail;
                    byte
                }
                b'.' => {
                    self.close_label(label_len)?;
                    label_len = 0;
                    absolute = rest.is_empty();
                    continue;
                }
                _ => c,
            };
            if label_len > MAX_LABEL_LEN {
                return Err("label longer than 63 bytes");
            }
            // Past the buffer the bytes are only counted: closing the label reports the
            // name too long.
            if let Some(slot) = self.buf.bytes.get_mut(self.len + 1 + label_len) {
                *slot = byte;
            }
            label_len += 1;
        }
        if absolute {
            return self.finish_in(Dname::ROOT);
        }
        self.close_label(label_len)?;
        self.finish_in(origin.ok_or("relative name without an origin")?)
    }

    /// Ends the label whose `label_len` bytes follow the current end (room for its
    /// length byte left before them), with the checks of [`push_label`](Self::push_label).
    fn close_label(&mut self, label_len: usize) -> Result<(), &'static str> {
        check_label_len(label_len)?;
        let end = self.len + 1 + label_len;
        let len_byte = self.buf.bytes.get_mut(self.len).filter(|_| end < MAX_NAME_LEN);
        *len_byte.ok_or("name longer than 255 bytes")? = label_len as u8;
        self.len = end;
        Ok(())
    }

    /// [`finish_with`](Self::finish_with), keeping the name in the builder.
    pub fn finish_in(&mut self, suffix: &Dname) -> Result<&Dname, &'static str> {
        let end = self.len + suffix.len();
        let dst = self.buf.bytes.get_mut(self.len..end).ok_or("name longer than 255 bytes")?;
        crate::bytes::copy(dst, suffix.as_wire());
        self.buf.len = end as u8;
        Ok(&self.buf)
    }
}

/// A name's text without its trailing dot, and whether it had one (is absolute).
fn split_root(text: &[u8]) -> (&[u8], bool) {
    match text.strip_suffix(b".") {
        Some(body) => (body, true),
        None => (text, false),
    }
}

/// Turns the text of a plain name (no trailing dot), held in `dst[1..]`, into its labels
/// in wire form: the first label's length goes in `dst[0]`, each other label's in place
/// of the dot before it, with [`check_label_len`]'s checks. `None` when the text has an
/// escape (the general parser's business). The text is read eight bytes at a time: a
/// word with no dot and no backslash, the usual case, is a few instructions.
fn set_label_lengths(dst: &mut [u8]) -> Option<Result<(), &'static str>> {
    let n = dst.len().checked_sub(1)?; // the text's length
    let mut slot = 0usize; // where the length of the label being read goes
    let mut at = 0usize; // offset in the text of the word being read
    while at < n {
        let word = text_word(dst, at);
        if zero_bytes(word ^ splat(b'\\')) != 0 {
            return None;
        }
        let mut dots = zero_bytes(word ^ splat(b'.'));
        while dots != 0 {
            let dot = at + 1 + (dots.trailing_zeros() / 8) as usize; // in `dst`
            if let Err(e) = set_label_len(dst, slot, dot - slot - 1) {
                return Some(Err(e));
            }
            slot = dot;
            dots &= dots - 1; // the next dot
        }
        at += 8;
    }
    Some(set_label_len(dst, slot, n - slot))
}

/// Bytes `at..at + 8` of the text in `dst[1..]` as a little-endian word, zeros (neither
/// dot nor backslash) standing for bytes past its end. Near the end the word is the
/// text's last eight bytes shifted down past those already read (which may have been
/// overwritten by label lengths); a text shorter than a word is gathered byte by byte.
#[inline(always)]
fn text_word(dst: &[u8], at: usize) -> u64 {
    let text = dst.get(1..).unwrap_or(&[]);
    if let Some(bytes) = text.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        return u64::from_le_bytes(*bytes);
    }
    let left = text.len().saturating_sub(at); // 1..=7 when called
    match text.last_chunk::<8>() {
        Some(last) => u64::from_le_bytes(*last) >> (8 * (8 - left.min(7))),
        None => text.iter().rev().fold(0, |word, &b| (word << 8) | u64::from(b)),
    }
}

/// Writes the length byte of a label at `dst[at]`, after [`check_label_len`].
fn set_label_len(dst: &mut [u8], at: usize, len: usize) -> Result<(), &'static str> {
    check_label_len(len)?;
    if let Some(byte) = dst.get_mut(at) {
        *byte = len as u8;
    }
    Ok(())
}

/// [`NameBuilder::parse_text`], appending the name's wire form to `out` (nothing on
/// error). A plain name is built in place at the end of `out`, with no builder to clear.
pub fn parse_text_onto(
    text: &[u8],
    origin: Option<&Dname>,
    out: &mut Vec<u8>,
) -> Result<(), &'static str> {
    let start = out.len();
    match plain_labels_onto(text, origin, out) {
        Some(Ok(())) => return Ok(()),
        Some(Err(e)) => {
            out.truncate(start);
            return Err(e);
        }
        None => out.truncate(start),
    }
    let mut builder = NameBuilder::new();
    out.extend_from_slice(builder.parse_text_in(text, origin)?.as_wire());
    Ok(())
}

/// [`NameBuilder::plain_labels`] and the suffix, at the end of `out`; `None` leaves the
/// name to the builder (escapes, names that may be too long, `@`, `.`, empty).
fn plain_labels_onto(
    text: &[u8],
    origin: Option<&Dname>,
    out: &mut Vec<u8>,
) -> Option<Result<(), &'static str>> {
    if matches!(text, b"" | b"@" | b".") {
        return None;
    }
    let (body, absolute) = split_root(text);
    let n = body.len();
    if n + 1 >= MAX_NAME_LEN {
        return None;
    }
    let start = out.len();
    out.push(0);
    out.extend_from_slice(body);
    if let Err(e) = set_label_lengths(out.get_mut(start..)?)? {
        return Some(Err(e));
    }
    let suffix = match (absolute, origin) {
        (true, _) => Dname::ROOT,
        (false, Some(origin)) => origin,
        (false, None) => return Some(Err("relative name without an origin")),
    };
    if n + 1 + suffix.len() > MAX_NAME_LEN {
        return Some(Err("name longer than 255 bytes"));
    }
    out.extend_from_slice(suffix.as_wire());
    Some(Ok(()))
}

/// A label's length checked: 1 to 63 bytes (RFC 1035 §2.3.4).
fn check_label_len(len: usize) -> Result<(), &'static str> {
    match len {
        0 => Err("empty label"),
        1..=MAX_LABEL_LEN => Ok(()),
        _ => Err("label longer than 63 bytes"),
    }
}

/// Reads the part of an escape after the backslash: `DDD` (0..=255) or one character.
pub fn parse_escape(rest: &[u8]) -> Result<(u8, &[u8]), &'static str> {
    match rest {
        [a, b, c, tail @ ..] if a.is_ascii_digit() && b.is_ascii_digit() && c.is_ascii_digit() => {
            let value = u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
            let byte = u8::try_from(value).map_err(|_| "escape \\DDD above 255")?;
            Ok((byte, tail))
        }
        [a, ..] if a.is_ascii_digit() => Err("escape \\DDD needs three digits"),
        [c, tail @ ..] => Ok((*c, tail)),
        [] => Err("backslash at the end"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn parses_and_prints_presentation() {
        let n = name("www.Example.COM.");
        assert_eq!(n.as_wire(), b"\x03www\x07Example\x03COM\x00");
        assert_eq!(n.to_string(), "www.Example.COM.");
        assert_eq!(n.label_count(), 3);
        assert_eq!(n.stored_label_offsets(), &[0, 4, 12]);
        assert_eq!(name(".").as_wire(), b"\x00");
        assert_eq!(name(".").to_string(), ".");
    }

    #[test]
    fn escapes_round_trip() {
        let n = name(r"a\.b.c\\d.\065\032x.");
        assert_eq!(n.as_wire(), b"\x03a.b\x03c\\d\x03A x\x00");
        assert_eq!(n.to_string(), r"a\.b.c\\d.A\032x.");
        let weird = Name::from_wire(b"\x04\x00\x01\xff@\x00").unwrap();
        assert_eq!(weird.to_string(), r"\000\001\255\@.");
        assert_eq!(name(&weird.to_string()), weird);
    }

    #[test]
    fn relative_names_and_origin() {
        let origin = name("example.com.");
        let rel = Name::parse_text(b"www", Some(&origin)).unwrap();
        assert_eq!(rel.to_string(), "www.example.com.");
        assert_eq!(Name::parse_text(b"@", Some(&origin)).unwrap(), origin);
        assert_eq!(Name::parse_text(b"www", None), Err("relative name without an origin"));
        assert_eq!(Name::parse_text(b"@", None), Err("'@' used without an origin"));
    }

    #[test]
    fn limits_are_enforced() {
        let label63 = "a".repeat(63);
        assert!(Name::parse_text(format!("{label63}.").as_bytes(), None).is_ok());
        let label64 = "a".repeat(64);
        assert_eq!(
            Name::parse_text(format!("{label64}.").as_bytes(), None),
            Err("label longer than 63 bytes")
        );
        // 4 labels of 63 = 256 bytes with length bytes, + root = 257: too long.
        let long = format!("{label63}.{label63}.{label63}.{label63}.");
        assert_eq!(Name::parse_text(long.as_bytes(), None), Err("name longer than 255 bytes"));
        // 3×64 + 62+1 + 1 = 255 exactly.
        let max = format!("{label63}.{label63}.{label63}.{}.", "a".repeat(61));
        assert_eq!(Name::parse_text(max.as_bytes(), None).unwrap().len(), 255);
        assert_eq!(Name::parse_text(b"a..b.", None), Err("empty label"));
        assert_eq!(Name::parse_text(b"\\256.", None), Err("escape \\DDD above 255"));
        assert_eq!(Name::parse_text(b"a\\", None), Err("backslash at the end"));
    }

    /// Names built in place (`parse_text_in`): a label running past the end of the
    /// buffer is still reported as too long when it is, the name too long otherwise; a
    /// builder used again starts afresh.
    #[test]
    fn parsing_in_place_keeps_the_limits() {
        let label63 = "a".repeat(63);
        let three = format!("{label63}.{label63}.{label63}.");
        let over = format!("{three}{}.", "b".repeat(64));
        assert_eq!(Name::parse_text(over.as_bytes(), None), Err("label longer than 63 bytes"));
        let past = format!("{three}{}.", "b".repeat(63));
        assert_eq!(Name::parse_text(past.as_bytes(), None), Err("name longer than 255 bytes"));
        let origin = name("example.");
        let relative = format!("{label63}.{label63}.{label63}.{}", "c".repeat(54));
        assert_eq!(
            Name::parse_text(relative.as_bytes(), Some(&origin)),
            Err("name longer than 255 bytes")
        );
        let mut builder = NameBuilder::new();
        assert_eq!(builder.parse_text_in(past.as_bytes(), None), Err("name longer than 255 bytes"));
        let www = builder.parse_text_in(b"www", Some(&origin)).unwrap();
        assert_eq!(www.as_wire(), b"\x03www\x07example\x00");
        let apex = builder.parse_text_in(b"@", Some(&origin)).unwrap();
        assert_eq!(apex.as_wire(), origin.as_wire());
        assert_eq!(builder.parse_text_in(b".", None).unwrap().as_wire(), b"\x00");
        let escaped = builder.parse_text_in(br"a\.b.\099.", None).unwrap();
        assert_eq!(escaped.as_wire(), b"\x03a.b\x01c\x00");
    }

    #[test]
    fn wire_validation_reports_offsets() {
        assert_eq!(Dname::from_wire(b"\x03www"), Err(Error::Truncated { offset: 4 }));
        assert_eq!(Dname::from_wire(b"\x01a\xc0\x00"), Err(Error::BadPointer { offset: 2 }));
        assert_eq!(Dname::from_wire(b"\x40a\x00"), Err(Error::BadLabelType { offset: 0 }));
        assert_eq!(Dname::from_wire(b"\x00\x00"), Err(Error::TrailingData { offset: 1 }));
        let mut long = Vec::new();
        for _ in 0..5 {
            long.push(63);
            long.extend_from_slice(&[b'a'; 63]);
        }
        long.push(0);
        assert_eq!(Dname::from_wire(&long), Err(Error::NameTooLong { offset: 192 }));
    }

    #[test]
    fn equality_ignores_case_and_keeps_spelling() {
        use std::collections::HashSet;
        let a = name("WWW.example.com.");
        let b = name("www.EXAMPLE.com.");
        assert_eq!(a, b);
        let set: HashSet<Name> = [a.clone()].into_iter().collect();
        assert!(set.contains(&b));
        assert_eq!(a.to_string(), "WWW.example.com.");
    }

    #[test]
    fn hierarchy() {
        let n = name("a.b.example.com.");
        let zone = name("EXAMPLE.com.");
        assert!(n.ends_with(&zone));
        assert!(n.is_below(&zone));
        assert!(zone.ends_with(&zone));
        assert!(!zone.is_below(&zone));
        assert!(!name("xexample.com.").ends_with(&zone));
        assert!(n.ends_with(Dname::ROOT));
        assert_eq!(n.parent().unwrap().to_string(), "b.example.com.");
        assert_eq!(n.suffix(2).unwrap().to_string(), "example.com.");
        assert_eq!(n.suffix(4).unwrap(), &*n);
        assert_eq!(n.suffix(0).unwrap(), Dname::ROOT);
        assert!(n.suffix(5).is_none());
        assert!(Dname::ROOT.parent().is_none());
        assert!(name("*.example.").is_wildcard());
        assert!(!name(r"\*.example.").to_string().is_empty());
    }

    /// RFC 4034 §6.1's example list, in canonical order.
    const RFC4034_ORDER: &[&str] = &[
        "example.",
        "a.example.",
        "yljkjljk.a.example.",
        "Z.a.example.",
        "zABC.a.EXAMPLE.",
        "z.example.",
        "\\001.z.example.",
        "*.z.example.",
        "\\200.z.example.",
    ];

    #[test]
    fn canonical_order_matches_rfc4034() {
        let names: Vec<Name> = RFC4034_ORDER.iter().map(|s| name(s)).collect();
        for (i, a) in names.iter().enumerate() {
            for (j, b) in names.iter().enumerate() {
                assert_eq!(a.canonical_cmp(b), i.cmp(&j), "{a} vs {b}");
                let (ka, kb) = (a.lookup_key(), b.lookup_key());
                assert_eq!(ka.as_bytes().cmp(kb.as_bytes()), i.cmp(&j), "keys {a} vs {b}");
            }
        }
    }

    /// The prefix is the key's first 16 bytes past the ancestor's, padded with zeros.
    #[test]
    fn lookup_key_prefixes() {
        let prefix = |text: &str, skip| name(text).lookup_key_prefix(skip).to_be_bytes();
        assert_eq!(&prefix("www.Example.com.", 1), b"example\0www\0\0\0\0\0");
        assert_eq!(&prefix("www.Example.com.", 2), b"www\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(&prefix("Example.com.", 2), &[0; 16]);
        assert_eq!(&prefix("a.\\000\\001b.com.", 1), b"\x01\x01\x01\x02b\0a\0\0\0\0\0\0\0\0\0");
        assert_eq!(&prefix("x.abcdefghijklmnopq.com.", 1), b"abcdefghijklmnop");
        assert_eq!(&prefix("com.", 3), &[0; 16]);
        let names =
            ["x.a.", "a\\000.", "A.", "ab.", "b.", "abcdefghijklmnop.", "x.abcdefghijklmnop."];
        for text in names {
            let n = name(text);
            let key = n.lookup_key();
            let mut expect = [0u8; 16];
            let len = key.as_bytes().len().min(16);
            expect[..len].copy_from_slice(&key.as_bytes()[..len]);
            assert_eq!(n.lookup_key_prefix(0).to_be_bytes(), expect, "{text}");
        }
    }

    #[test]
    fn lookup_key_layout() {
        assert_eq!(name("www.Example.com.").lookup_key().as_bytes(), b"com\0example\0www\0");
        assert_eq!(Dname::ROOT.lookup_key().as_bytes(), b"");
        assert_eq!(name("\\000\\001b.").lookup_key().as_bytes(), b"\x01\x01\x01\x02b\0");
        // A label holding a zero byte sorts after its shorter sibling's descendants.
        let a = name("x.a.");
        let b = name("a\\000.");
        assert_eq!(a.canonical_cmp(&b), Ordering::Less);
        assert!(a.lookup_key().as_bytes() < b.lookup_key().as_bytes());
    }

    #[test]
    fn builder_and_stack_names() {
        let mut b = NameBuilder::new();
        b.push_label(b"www").unwrap();
        let origin = name("example.");
        let n = b.finish_with(&origin).unwrap();
        assert_eq!(n.as_wire(), b"\x03www\x07example\x00");
        assert_eq!(n.to_name(), name("www.example."));
        assert_eq!(NameBuf::root().as_wire(), b"\0");
    }

    #[test]
    fn stored_names_are_taken_as_they_are() {
        let n = name("www.Example.");
        assert_eq!(Dname::from_stored(n.as_wire()).map(Dname::as_wire), Some(n.as_wire()));
        assert_eq!(Dname::from_stored(b"\0").map(Dname::is_root), Some(true));
        // What cannot be a stored name is refused outright: empty, unterminated, too long.
        assert!(Dname::from_stored(b"").is_none());
        assert!(Dname::from_stored(b"\x03www").is_none());
        assert!(Dname::from_stored(&[1u8; 256]).is_none());
    }

    /// [`set_label_lengths`] one byte at a time: the reference for its property test.
    fn set_label_lengths_bytewise(dst: &mut [u8]) -> Option<Result<(), &'static str>> {
        let mut slot = 0usize;
        for i in 1..dst.len() {
            match dst[i] {
                b'.' => {
                    if let Err(e) = set_label_len(dst, slot, i - slot - 1) {
                        return Some(Err(e));
                    }
                    slot = i;
                }
                b'\\' => return None,
                _ => {}
            }
        }
        Some(set_label_len(dst, slot, dst.len() - slot - 1))
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn arb_label() -> impl Strategy<Value = Vec<u8>> {
            prop::collection::vec(any::<u8>(), 1..=20)
        }

        fn arb_name() -> impl Strategy<Value = Name> {
            prop::collection::vec(arb_label(), 0..8).prop_map(|labels| {
                let mut b = NameBuilder::new();
                for l in &labels {
                    b.push_label(l).unwrap();
                }
                b.finish().unwrap().to_name()
            })
        }

        /// Name texts over `alphabet`, now and then after a long label (40 to 120 bytes)
        /// to reach the limits.
        fn name_text(alphabet: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
            let text = prop::collection::vec(prop::sample::select(alphabet.to_vec()), 0..80);
            (text, 0usize..4).prop_map(|(mut text, long)| {
                text.splice(0..0, std::iter::repeat_n(b'x', long * 40));
                text
            })
        }

        proptest! {
            #[test]
            fn text_round_trip(n in arb_name()) {
                let text = n.to_string();
                let back: Name = text.parse().unwrap();
                prop_assert_eq!(back.as_wire(), n.as_wire());
            }

            #[test]
            fn key_order_is_canonical_order(a in arb_name(), b in arb_name()) {
                let by_key = a.lookup_key().as_bytes().cmp(b.lookup_key().as_bytes());
                prop_assert_eq!(by_key, a.canonical_cmp(&b));
            }

            /// The fast path for plain names gives what the general parser gives, names
            /// and errors alike.
            #[test]
            fn plain_and_general_parsers_agree(
                text in name_text(b"ab.\\09"),
                origin in prop::option::of(arb_name()),
            ) {
                let origin = origin.as_deref();
                let mut fast = NameBuilder::new();
                let mut general = NameBuilder::new();
                let a = fast.parse_text_in(&text, origin).map(|n| n.as_wire().to_vec());
                let b = general.escaped_labels(&text, origin).map(|n| n.as_wire().to_vec());
                if !matches!(text.as_slice(), b"" | b"@" | b".") {
                    prop_assert_eq!(a, b);
                }
            }

            /// Appending a parsed name to a buffer gives what the builder gives, names
            /// and errors alike, and leaves the buffer as it was on error.
            #[test]
            fn parsing_onto_a_buffer_agrees_with_the_builder(
                text in name_text(b"ab.\\09@"),
                origin in prop::option::of(arb_name()),
                before in prop::collection::vec(any::<u8>(), 0..4),
            ) {
                let origin = origin.as_deref();
                let mut out = before.clone();
                let onto = parse_text_onto(&text, origin, &mut out);
                let built = NameBuilder::parse_text(&text, origin);
                let mut expected = before.clone();
                if let Ok(name) = &built {
                    expected.extend_from_slice(name.as_wire());
                }
                prop_assert_eq!(onto, built.map(|_| ()));
                prop_assert_eq!(out, expected);
            }

            /// The word-at-a-time label pass writes what a byte-by-byte one writes, over
            /// texts of every length (so dots, backslashes and the end fall on and around
            /// every 8-byte boundary), and gives up only for a backslash.
            #[test]
            fn label_pass_agrees_with_a_bytewise_one(
                text in prop::collection::vec(prop::sample::select(
                    b"aaaaaa..\\\x00\x2d\x2f\x5b\x5d\x80\xae\xdc\xff".to_vec()), 0..40),
            ) {
                let mut fast = [&[0xEE][..], &text].concat();
                let mut slow = fast.clone();
                let got = set_label_lengths(&mut fast);
                let reference = set_label_lengths_bytewise(&mut slow);
                match got {
                    Some(result) => {
                        prop_assert_eq!(Some(result), reference);
                        prop_assert_eq!(fast, slow);
                    }
                    None => prop_assert!(text.contains(&b'\\')),
                }
                if reference.is_none() {
                    prop_assert!(got.is_none());
                }
            }

            /// A reused buffer set to a name holds that name, whatever it held before.
            #[test]
            fn a_reused_name_buffer_holds_the_last_name(a in arb_name(), b in arb_name()) {
                let mut buf = NameBuf::from_dname(&a);
                buf.set(&b);
                prop_assert_eq!(buf.as_wire(), b.as_wire());
            }

            #[test]
            fn wire_round_trip(n in arb_name()) {
                let back = Name::from_wire(n.as_wire()).unwrap();
                prop_assert_eq!(back.as_wire(), n.as_wire());
                prop_assert_eq!(back.label_count(), n.stored_label_offsets().len());
            }
        }
    }
}
