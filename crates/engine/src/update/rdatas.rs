//! The records of one RRset in an update's working copy (`work`), found by their
//! canonical form (RFC 4034 §6.2) without comparing each record with every other.
//!
//! Records keep the order they came in: it is the order of the changeset, and so of
//! the zone. A deleted record leaves a hole, so the others keep their places (the
//! working copy tells the records an update left alone by their place, see
//! `work::diff`). A set of a few records is searched record by record; once it holds
//! more than [`SMALL`] records and has been searched [`SCANS`] times, its records are
//! indexed by canonical form in an ordered map — RFC 4034 §6.3's canonical order of
//! RDATA, as left-justified octet sequences — so that each search, addition and
//! deletion costs O(log n), and an edit of n records to one RRset O(n log n) instead of
//! the O(n²) of issue 49 (50,000 records in one API PATCH took two minutes). A single
//! change to a large RRset does not pay for the index: a few scans cost less.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;

use tern_wire::Rtype;
use tern_zone::records::canonical_eq;

/// Records searched one by one at most, whatever the number of searches.
pub(super) const SMALL: usize = 16;

/// Searches of a larger set made record by record before it is indexed: a change of
/// a few records to a large RRset scans it a few times rather than index it.
pub(super) const SCANS: u32 = 8;

/// A record's canonical form: the index's key, in RFC 4034 §6.3's order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key<'a>(Cow<'a, [u8]>);

impl Ord for Key<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        counted();
        self.0.as_ref().cmp(other.0.as_ref())
    }
}

impl PartialOrd for Key<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The canonical form of `rdata` (RFC 4034 §6.2 as amended by RFC 6840 §5.1: the names
/// of the listed types lower-cased): `rdata` itself for every other type, and for
/// RDATA without an upper-case letter. RDATA that cannot be read is its own form.
pub(super) fn canonical(rtype: Rtype, rdata: &[u8]) -> Cow<'_, [u8]> {
    if !rtype.shape().canonical_lowercase || !rdata.iter().any(u8::is_ascii_uppercase) {
        return Cow::Borrowed(rdata);
    }
    let mut out = Vec::with_capacity(rdata.len());
    match tern_wire::rdata::canonical_wire(rtype, rdata, &mut out) {
        Ok(()) => Cow::Owned(out),
        Err(_) => Cow::Borrowed(rdata),
    }
}

/// One RRset's records (see the module comment). Every record is RDATA of the RRset's
/// type, which each method is given; no two are equal in canonical form.
#[derive(Debug, Clone, Default)]
pub(super) struct Rdatas<'a> {
    /// The records in order; `None` where one was deleted.
    list: Vec<Option<&'a [u8]>>,
    /// Records in `list`.
    live: usize,
    /// Each record's place in `list` by canonical form, once built.
    index: Option<BTreeMap<Key<'a>, usize>>,
    /// Searches made record by record.
    scans: u32,
}

impl<'a> FromIterator<&'a [u8]> for Rdatas<'a> {
    fn from_iter<I: IntoIterator<Item = &'a [u8]>>(records: I) -> Rdatas<'a> {
        let list: Vec<Option<&'a [u8]>> = records.into_iter().map(Some).collect();
        Rdatas { live: list.len(), list, index: None, scans: 0 }
    }
}

impl<'a> Rdatas<'a> {
    /// Records held.
    pub(super) fn len(&self) -> usize {
        self.live
    }

    /// True when no record is left.
    pub(super) fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The records, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.list.iter().flatten().copied()
    }

    /// The places in order, holes (deleted records) included.
    pub(super) fn places(&self) -> &[Option<&'a [u8]>] {
        &self.list
    }

    /// The place of the record equal to `rdata` in canonical form, if any.
    pub(super) fn find(&mut self, rtype: Rtype, rdata: &'a [u8]) -> Option<usize> {
        if let Some(index) = self.indexed(rtype) {
            return index.get(&Key(canonical(rtype, rdata))).copied();
        }
        self.list.iter().position(|rd| {
            rd.is_some_and(|rd| {
                counted();
                canonical_eq(rtype, rd, rdata)
            })
        })
    }

    /// The place of the WKS record with the address and protocol of `rdata` (its first
    /// five bytes; RFC 2136 §3.4.2.2) that comes first in canonical order, if any.
    pub(super) fn find_wks(&mut self, rdata: &'a [u8]) -> Option<usize> {
        let prefix = rdata.get(..5)?;
        if let Some(index) = self.indexed(Rtype::WKS) {
            let from = Key(Cow::Borrowed(prefix));
            let (key, &at) = index.range((Bound::Included(from), Bound::Unbounded)).next()?;
            return key.0.starts_with(prefix).then_some(at);
        }
        let same = self.list.iter().enumerate().filter_map(|(at, rd)| {
            counted();
            rd.filter(|rd| rd.get(..5) == Some(prefix)).map(|rd| (at, rd))
        });
        same.min_by(|a, b| a.1.cmp(b.1)).map(|(at, _)| at)
    }

    /// Adds a record (not equal to any held) after the others.
    pub(super) fn push(&mut self, rtype: Rtype, rdata: &'a [u8]) {
        self.list.push(Some(rdata));
        self.live += 1;
        let at = self.list.len() - 1;
        if let Some(index) = &mut self.index {
            index.insert(Key(canonical(rtype, rdata)), at);
        }
    }

    /// Deletes the record at `at` (its place stays empty).
    pub(super) fn remove(&mut self, rtype: Rtype, at: usize) {
        let Some(rdata) = self.list.get_mut(at).and_then(Option::take) else { return };
        self.live -= 1;
        if let Some(index) = &mut self.index {
            index.remove(&Key(canonical(rtype, rdata)));
        }
    }

    /// Puts `rdata` (not equal to any other held) in the place of the record at `at`.
    pub(super) fn replace(&mut self, rtype: Rtype, at: usize, rdata: &'a [u8]) {
        self.remove(rtype, at);
        let Some(place) = self.list.get_mut(at) else { return };
        *place = Some(rdata);
        self.live += 1;
        if let Some(index) = &mut self.index {
            index.insert(Key(canonical(rtype, rdata)), at);
        }
    }

    /// The index, built when the set is too large and searched too often to scan.
    fn indexed(&mut self, rtype: Rtype) -> Option<&BTreeMap<Key<'a>, usize>> {
        if self.index.is_none() {
            if self.live <= SMALL || self.scans < SCANS {
                self.scans += 1;
                return None;
            }
            let places = self.list.iter().enumerate();
            let keyed = places.filter_map(|(at, rd)| Some((Key(canonical(rtype, (*rd)?)), at)));
            self.index = Some(keyed.collect());
        }
        self.index.as_ref()
    }
}

#[cfg(test)]
thread_local! {
    /// RDATA comparisons made on this thread, in searches and in the index (tests count
    /// them to pin the cost of large edits).
    pub(super) static COMPARISONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one RDATA comparison (in tests).
#[inline(always)]
pub(super) fn counted() {
    #[cfg(test)]
    COMPARISONS.with(|c| c.set(c.get() + 1));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mx(pref: u8, host: &str) -> Vec<u8> {
        tern_wire::rdata::parse_str(Rtype::MX, &format!("{pref} {host}"), None).unwrap()
    }

    /// Searches find records equal in canonical form, before and after the set is
    /// indexed, and deleted records leave their places empty.
    #[test]
    fn found_by_canonical_form_scanned_or_indexed() {
        let records: Vec<Vec<u8>> = (0..40).map(|n| mx(10, &format!("Host{n}.Example."))).collect();
        let lower: Vec<Vec<u8>> = (0..40).map(|n| mx(10, &format!("host{n}.example."))).collect();
        let mut set: Rdatas<'_> = records.iter().map(Vec::as_slice).collect();
        for (n, rd) in lower.iter().enumerate() {
            assert_eq!(set.find(Rtype::MX, rd), Some(n), "search {n}");
        }
        assert!(set.index.is_some(), "indexed after {SCANS} searches of a large set");
        set.remove(Rtype::MX, 3);
        assert_eq!((set.find(Rtype::MX, &lower[3]), set.len()), (None, 39));
        assert_eq!(set.places()[3], None);
        let other = mx(20, "host3.example.");
        set.push(Rtype::MX, &other);
        assert_eq!(set.find(Rtype::MX, &other), Some(40));
        assert_eq!(set.iter().count(), 40);
    }

    /// WKS: the record with the same address and protocol that is first in canonical
    /// order, found alike in a small and an indexed set.
    #[test]
    fn wks_is_found_by_address_and_protocol() {
        let records: Vec<Vec<u8>> = (0..30u8).map(|n| vec![192, 0, 2, n, 6, 1]).collect();
        let mut set: Rdatas<'_> = records.iter().map(Vec::as_slice).collect();
        let other = [192, 0, 2, 7, 17, 1];
        set.push(Rtype::WKS, &other);
        let wanted = [192, 0, 2, 7, 6, 0xff];
        let small = set.find_wks(&wanted);
        (0..SCANS).for_each(|_| assert_eq!(set.find(Rtype::WKS, &records[0]), Some(0)));
        assert!(set.index.is_some());
        assert_eq!((small, set.find_wks(&wanted)), (Some(7), Some(7)));
        assert_eq!(set.find_wks(&[192, 0, 2, 99, 6, 1]), None);
        assert_eq!(set.find_wks(&[192, 0, 2]), None, "too short to have an address");
        set.replace(Rtype::WKS, 7, &wanted);
        assert_eq!(set.find(Rtype::WKS, &wanted), Some(7));
        assert_eq!(set.find(Rtype::WKS, &records[7]), None);
    }
}
