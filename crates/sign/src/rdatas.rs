//! A list of records' RDATA (or of RRSIGs' RDATA) kept one after another in one buffer,
//! each after its length (two bytes, little-endian): the layout of a zone node's records
//! (`tern_zone::Rrset::rdata_bytes`), so that the records of a loaded zone are read
//! where they lie, borrowed, and those the signer makes (its RRSIGs, NSEC and NSEC3
//! records, the apex's keys) cost one allocation an RRset, not one per record and one
//! for the list. Whole-zone signing holds millions of RRsets at once.

use std::borrow::Cow;

use crate::error::{Error, Result};

/// RDATA, in the order pushed: borrowed from a zone's node (`'a`), or owned.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Rdatas<'a> {
    bytes: Cow<'a, [u8]>,
}

impl<'a> Rdatas<'a> {
    /// No RDATA, with room for `bytes` bytes (each RDATA takes its length plus two).
    pub fn with_capacity(bytes: usize) -> Rdatas<'static> {
        Rdatas { bytes: Cow::Owned(Vec::with_capacity(bytes)) }
    }

    /// The records of a stored RRset, borrowed where they lie (the layout is the same).
    pub fn stored(rrset: &tern_zone::Rrset<'a>) -> Rdatas<'a> {
        Rdatas { bytes: Cow::Borrowed(rrset.rdata_bytes()) }
    }

    /// How many RDATA there are (counted: an RRset has few).
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The RDATA, in the order pushed.
    pub fn iter(&self) -> Iter<'_> {
        Iter { rest: &self.bytes }
    }

    /// Where the bytes start, to prefetch them without reading them.
    pub fn address(&self) -> usize {
        self.bytes.as_ptr() as usize
    }

    /// True when the RDATA are borrowed from a zone's node, not held.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.bytes, Cow::Borrowed(_))
    }

    /// The RDATA held: copied when borrowed.
    pub fn into_owned(self) -> Rdatas<'static> {
        Rdatas { bytes: Cow::Owned(self.bytes.into_owned()) }
    }

    /// The first RDATA, if any.
    pub fn first(&self) -> Option<&[u8]> {
        self.iter().next()
    }

    /// The `i`th RDATA, if any.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        self.iter().nth(i)
    }

    /// Bytes held (each RDATA plus two) and bytes room is kept for (borrowed: none).
    pub fn bytes_used(&self) -> (usize, usize) {
        match &self.bytes {
            Cow::Borrowed(_) => (0, 0),
            Cow::Owned(bytes) => (bytes.len(), bytes.capacity()),
        }
    }

    /// A copy of `rdatas`, in a buffer exactly as long as they need; those longer than
    /// an RDATA can be (none read from a zone is) are left out.
    pub fn copied<'r>(rdatas: impl Iterator<Item = &'r [u8]> + Clone) -> Rdatas<'static> {
        let fitting = |rd: &'r [u8]| Some((u16::try_from(rd.len()).ok()?, rd));
        let len = rdatas.clone().filter_map(fitting).map(|(len, _)| usize::from(len) + 2).sum();
        let mut bytes = Vec::with_capacity(len);
        for (len, rdata) in rdatas.filter_map(fitting) {
            bytes.extend_from_slice(&len.to_le_bytes());
            bytes.extend_from_slice(rdata);
        }
        Rdatas { bytes: Cow::Owned(bytes) }
    }

    /// Adds `rdata`; one longer than an RDATA can be (65,535 bytes) is refused.
    pub fn push(&mut self, rdata: &[u8]) -> Result<()> {
        self.push_with(|out| {
            out.extend_from_slice(rdata);
            Ok(())
        })
    }

    /// Adds the RDATA `write` appends to the buffer it is given (written in place, not
    /// copied). When `write` fails, or writes more than an RDATA can hold, nothing is
    /// added. Borrowed RDATA are copied first (the signer never adds to those).
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Result<()> {
        let bytes = self.bytes.to_mut();
        let at = bytes.len();
        bytes.extend_from_slice(&[0, 0]);
        let written = write(bytes).and_then(|()| {
            u16::try_from(bytes.len() - at - 2).map_err(|_| Error::Zone("RDATA too long".into()))
        });
        match written {
            Ok(len) => {
                bytes.get_mut(at..at + 2).unwrap_or_default().copy_from_slice(&len.to_le_bytes());
                Ok(())
            }
            Err(e) => {
                bytes.truncate(at);
                Err(e)
            }
        }
    }
}

impl std::fmt::Debug for Rdatas<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Owned RDATA, each as long as an RDATA may be (longer ones are left out: no record
/// holds one).
impl From<Vec<Vec<u8>>> for Rdatas<'static> {
    fn from(rdatas: Vec<Vec<u8>>) -> Rdatas<'static> {
        Rdatas::copied(rdatas.iter().map(Vec::as_slice))
    }
}

impl<'r> FromIterator<&'r [u8]> for Rdatas<'static> {
    fn from_iter<I: IntoIterator<Item = &'r [u8]>>(iter: I) -> Rdatas<'static> {
        let mut rdatas = Rdatas::default();
        for rdata in iter {
            let _ = rdatas.push(rdata); // refused only when too long
        }
        rdatas
    }
}

impl<'a> IntoIterator for &'a Rdatas<'_> {
    type Item = &'a [u8];
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The RDATA of an [`Rdatas`], in order.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let (&[lo, hi], rest) = self.rest.split_first_chunk::<2>()?;
        let (rdata, rest) = rest.split_at_checked(usize::from(u16::from_le_bytes([lo, hi])))?;
        self.rest = rest;
        Some(rdata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdata_kept_in_order_with_their_lengths() {
        let mut r = Rdatas::with_capacity(16);
        assert!(r.is_empty() && r.first().is_none());
        r.push(&[1, 2, 3]).unwrap();
        r.push(&[]).unwrap();
        r.push_with(|out| {
            out.extend_from_slice(&[9, 9]);
            Ok(())
        })
        .unwrap();
        let all: Vec<&[u8]> = r.iter().collect();
        assert_eq!(all, [&[1, 2, 3][..], &[], &[9, 9]]);
        assert_eq!((r.len(), r.get(2), r.get(3)), (3, Some(&[9u8, 9][..]), None));
        assert_eq!(r.bytes_used().0, 3 + 2 + 2 + 2 + 2);
        assert_eq!(r, Rdatas::from(vec![vec![1, 2, 3], vec![], vec![9, 9]]));
        let copy = Rdatas::copied(r.iter());
        assert_eq!((&copy, copy.bytes_used().1), (&r, r.bytes_used().0));
    }

    #[test]
    fn a_failed_or_too_long_rdata_is_not_added() {
        let mut r = Rdatas::default();
        r.push(&[7]).unwrap();
        assert!(r
            .push_with(|out| {
                out.push(1);
                Err(Error::Crypto("x"))
            })
            .is_err());
        assert!(r.push(&vec![0; 65_536]).is_err());
        r.push(&vec![0; 65_535]).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r.iter().map(<[u8]>::len).collect::<Vec<_>>(), [1, 65_535]);
    }
}
