//! Dropping duplicate records from an RRset (RFC 2181 §5: an RRset holds no two identical
//! records), in O(n log n).
//!
//! Two records are the same when their RDATA are equal in DNSSEC canonical form
//! (RFC 4034 §6.2): byte for byte, except that names in the types listed there compare
//! case-insensitively. A small RRset — nearly every one — compares each record with the
//! ones kept before it. A big one sorts its records by canonical RDATA (the order of
//! RFC 4034 §6.3), then by position, so that the copies of a record are side by side and
//! the first one in the file leads; each later copy is dropped, and the rest keep their
//! file order. A million-record RRset thus takes one sort, not 5·10^11 comparisons.

use tern_wire::rdata::canonical_wire;
use tern_wire::Rtype;

use super::{kept, Member, Pending};
use crate::records::canonical_eq;

/// RRsets up to this size compare each record with the ones kept before it.
const SMALL: usize = 16;

/// Scratch space reused from RRset to RRset.
#[derive(Debug, Default)]
pub(super) struct Unique {
    /// Canonical forms of the records, for types with names to lower-case.
    keys: Vec<u8>,
    /// Each record's canonical form in `keys`.
    spans: Vec<(usize, usize)>,
    /// Record positions, sorted.
    order: Vec<u32>,
    /// Which positions are later copies.
    duplicate: Vec<bool>,
}

impl Unique {
    /// Itself, emptied, to keep for later (each buffer as [`kept`] keeps it).
    pub(super) fn kept(self) -> Unique {
        Unique {
            keys: kept(self.keys),
            spans: kept(self.spans),
            order: kept(self.order),
            duplicate: kept(self.duplicate),
        }
    }

    /// Copies `records` (all of one type) into `kept` in order, without duplicates, and
    /// calls `dropped` with each duplicate.
    pub(super) fn retain(
        &mut self,
        arena: &[u8],
        records: &[Member],
        kept: &mut Vec<Member>,
        mut dropped: impl FnMut(&Member),
    ) {
        kept.clear();
        if records.len() <= SMALL {
            for m in records {
                let (p, rdata) = (&m.1, rdata_of(arena, &m.1));
                if kept.iter().any(|k| canonical_eq(p.rtype, rdata_of(arena, &k.1), rdata)) {
                    dropped(m);
                } else {
                    kept.push(*m);
                }
            }
            return;
        }
        self.mark_duplicates(arena, records);
        for (p, &duplicate) in records.iter().zip(&self.duplicate) {
            if duplicate {
                dropped(p);
            } else {
                kept.push(*p);
            }
        }
    }

    /// Sets `duplicate[i]` for each record equal to an earlier one.
    fn mark_duplicates(&mut self, arena: &[u8], records: &[Member]) {
        let rtype = records.first().map_or(Rtype::A, |m| m.1.rtype);
        let lower = rtype.shape().canonical_lowercase;
        self.keys.clear();
        self.spans.clear();
        if lower {
            for (_, p) in records {
                let start = self.keys.len();
                let rdata = rdata_of(arena, p);
                if canonical_wire(rtype, rdata, &mut self.keys).is_err() {
                    self.keys.extend_from_slice(rdata); // malformed: compared as it is
                }
                self.spans.push((start, self.keys.len()));
            }
        }
        let (keys, spans) = (&self.keys, &self.spans);
        let key = |i: u32| -> &[u8] {
            if lower {
                let span = spans.get(i as usize).copied().unwrap_or_default();
                keys.get(span.0..span.1).unwrap_or_default()
            } else {
                records.get(i as usize).map_or(&[], |m| rdata_of(arena, &m.1))
            }
        };
        self.order.clear();
        self.order.extend(0..records.len() as u32);
        self.order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
        self.duplicate.clear();
        self.duplicate.resize(records.len(), false);
        for pair in self.order.windows(2) {
            if let [first, next] = *pair {
                if key(first) == key(next) {
                    if let Some(d) = self.duplicate.get_mut(next as usize) {
                        *d = true;
                    }
                }
            }
        }
    }
}

/// A pending record's RDATA in the builder's arena.
pub(super) fn rdata_of<'r>(arena: &'r [u8], p: &Pending) -> &'r [u8] {
    arena.get(p.rdata_at..p.rdata_at + usize::from(p.len)).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NO_NODE;

    /// Pending records of `rtype` over `rdatas`, laid out in one arena.
    fn pending(rtype: Rtype, rdatas: &[Vec<u8>]) -> (Vec<u8>, Vec<Member>) {
        let mut arena = Vec::new();
        let mut records = Vec::new();
        for (number, rd) in (0..).zip(rdatas) {
            let p = Pending {
                rdata_at: arena.len(),
                node: 0,
                ttl: 0,
                target: NO_NODE,
                len: rd.len() as u16,
                rtype,
            };
            arena.extend_from_slice(rd);
            records.push((number, p));
        }
        (arena, records)
    }

    /// What `retain` keeps and drops, as RDATA.
    fn run(rtype: Rtype, rdatas: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let (arena, records) = pending(rtype, rdatas);
        let (mut kept, mut dropped) = (Vec::new(), Vec::new());
        Unique::default()
            .retain(&arena, &records, &mut kept, |m| dropped.push(rdata_of(&arena, &m.1).to_vec()));
        (kept.iter().map(|m| rdata_of(&arena, &m.1).to_vec()).collect(), dropped)
    }

    fn wire(name: &str) -> Vec<u8> {
        name.parse::<tern_wire::Name>().unwrap().as_wire().to_vec()
    }

    #[test]
    fn small_and_big_rrsets_agree() {
        // The same records, in the same order, with the same duplicates, below and above
        // the size where sorting takes over.
        for n in [3usize, SMALL, SMALL + 1, 200] {
            let mut rdatas: Vec<Vec<u8>> =
                (0..n).map(|i| wire(&format!("h{i}.example."))).collect();
            rdatas.push(wire("H0.EXAMPLE.")); // a copy of the first, in other case
            rdatas.insert(1, wire(&format!("h{}.Example.", n - 1))); // of the last
            let (kept, dropped) = run(Rtype::NS, &rdatas);
            assert_eq!(kept.len(), n, "n = {n}");
            assert_eq!(kept[0], wire("h0.example."));
            assert_eq!(kept[1], wire(&format!("h{}.Example.", n - 1)), "the first spelling stays");
            assert_eq!(dropped, [wire(&format!("h{}.example.", n - 1)), wire("H0.EXAMPLE.")]);
        }
    }

    #[test]
    fn case_matters_outside_names() {
        let rdatas: Vec<Vec<u8>> = (0..40)
            .map(|i| if i % 2 == 0 { b"\x01a".to_vec() } else { b"\x01A".to_vec() })
            .collect();
        let (kept, dropped) = run(Rtype::TXT, &rdatas);
        assert_eq!(kept, [b"\x01a".to_vec(), b"\x01A".to_vec()]);
        assert_eq!(dropped.len(), 38);
    }
}
