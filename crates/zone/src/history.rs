//! A zone's recent changes, for incremental transfers (IXFR, RFC 1995): the changesets
//! that led to the current version, oldest first, bounded by count and by bytes.
//!
//! The history travels with the snapshot it leads to ([`ZoneContents::history`]), so an
//! IXFR is answered from one consistent version even while the zone changes. Adding a
//! change makes a new history that shares every changeset with the old one.
//!
//! [`condensed`](History::condensed) joins the changes from a client's serial to the
//! current one into one difference (RFC 1995 §5 allows this): a record added and later
//! removed is in neither list.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tern_wire::{rdata, Rtype};

use crate::changeset::{Changeset, RecordData};
use crate::contents::ZoneContents;

/// How much history a zone keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryLimits {
    /// Most changesets kept (0 keeps none).
    pub max_changes: usize,
    /// Most bytes of changesets kept (about; see [`Changeset::size`]).
    pub max_bytes: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        HistoryLimits { max_changes: 100, max_bytes: 64 << 20 }
    }
}

/// What [`ZoneContents::history`] gives for a version that keeps no history.
static NO_HISTORY: History = History { changes: VecDeque::new(), bytes: 0 };

/// The changesets that led to a version of a zone, oldest first; each starts where the
/// one before ends.
#[derive(Debug, Clone, Default)]
pub struct History {
    changes: VecDeque<Arc<Changeset>>,
    bytes: usize,
}

impl History {
    /// The history with `change` appended and the oldest changes dropped until `limits`
    /// hold. A change that does not continue the last one (another starting serial)
    /// starts a new history.
    pub fn push(&self, change: Arc<Changeset>, limits: HistoryLimits) -> History {
        let mut next = self.clone();
        next.append(change, limits);
        next
    }

    /// Appends `change` to this history itself, as [`History::push`] does to a copy.
    pub fn append(&mut self, change: Arc<Changeset>, limits: HistoryLimits) {
        let continues = self.changes.back().is_none_or(|last| {
            last.to_serial().is_some() && last.to_serial() == change.from_serial()
        });
        if !continues {
            *self = History::default();
        }
        self.bytes += change.size();
        self.changes.push_back(change);
        while self.changes.len() > limits.max_changes || self.bytes > limits.max_bytes {
            let Some(dropped) = self.changes.pop_front() else { break };
            self.bytes = self.bytes.saturating_sub(dropped.size());
        }
    }

    /// The changesets kept, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Changeset>> + '_ {
        self.changes.iter()
    }

    /// Number of changesets kept.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// True when no change is kept.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Bytes kept, about.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The oldest serial the history reaches back to.
    pub fn first_serial(&self) -> Option<u32> {
        self.changes.front().and_then(|c| c.from_serial())
    }

    /// The changes from serial `from` up to serial `to`, in order; `None` when the
    /// history does not hold that path.
    pub fn path(&self, from: u32, to: u32) -> Option<Vec<&Changeset>> {
        let start = self.changes.iter().position(|c| c.from_serial() == Some(from))?;
        let mut path = Vec::new();
        for change in self.changes.iter().skip(start) {
            path.push(&**change);
            if change.to_serial() == Some(to) {
                return Some(path);
            }
        }
        None
    }

    /// The changes from `from` to `to` joined into one (see the module comment).
    pub fn condensed(&self, from: u32, to: u32) -> Option<Changeset> {
        let path = self.path(from, to)?;
        Some(Changeset::joined(path.into_iter().cloned()))
    }
}

impl Changeset {
    /// `changes`, applied one after the other, as one changeset: a record added and
    /// removed again (or removed and added back) is in neither list; it goes from the
    /// first SOA any of them starts from to the last one any of them reaches (changes
    /// without an SOA, such as `UpdateRequest::changes_unnumbered` gives, add none).
    pub fn joined(changes: impl IntoIterator<Item = Changeset>) -> Changeset {
        let changes: Vec<Changeset> = changes.into_iter().collect();
        let records = changes.iter().map(|c| c.removed.len() + c.added.len()).sum();
        let mut net = Net { records: HashMap::with_capacity(records) };
        let mut joined = Changeset::default();
        for change in changes {
            change.removed.into_iter().for_each(|r| net.count(r, -1));
            change.added.into_iter().for_each(|r| net.count(r, 1));
            if joined.soa_from.is_none() {
                joined.soa_from = change.soa_from;
            }
            if change.soa_to.is_some() {
                joined.soa_to = change.soa_to;
            }
        }
        for (record, count) in net.records.into_values() {
            match count {
                c if c < 0 => joined.removed.push(record),
                c if c > 0 => joined.added.push(record),
                _ => {}
            }
        }
        joined
    }
}

/// Records and how many times they were added (positive) or removed (negative).
#[derive(Default)]
struct Net {
    records: HashMap<Vec<u8>, (RecordData, i32)>,
}

impl Net {
    fn count(&mut self, record: RecordData, delta: i32) {
        match self.records.entry(key(&record)) {
            Entry::Occupied(mut seen) => {
                let seen = seen.get_mut();
                seen.1 += delta;
                if delta > 0 {
                    // An addition after a removal brings the record back as added now.
                    seen.0 = record;
                }
            }
            Entry::Vacant(new) => drop(new.insert((record, delta))),
        }
    }
}

/// A record's identity: owner lower-cased, type, TTL and canonical RDATA (RFC 4034 §6.2).
fn key(record: &RecordData) -> Vec<u8> {
    let owner = record.owner.as_wire();
    let mut key = Vec::with_capacity(owner.len() + 6 + record.rdata.len());
    key.extend(owner.iter().map(u8::to_ascii_lowercase));
    key.extend_from_slice(&record.rtype.0.to_be_bytes());
    key.extend_from_slice(&record.ttl.to_be_bytes());
    if rdata::canonical_wire(record.rtype, &record.rdata, &mut key).is_err() {
        key.extend_from_slice(&record.rdata); // left as it was
    }
    key
}

impl ZoneContents {
    /// The changes that led to this version.
    pub fn history(&self) -> &History {
        self.history.as_deref().unwrap_or(&NO_HISTORY)
    }

    /// This version with `history` attached (an empty one is not kept: see
    /// [`history`](Self::history)).
    pub fn set_history(&mut self, history: Arc<History>) {
        self.history = (!history.is_empty()).then_some(history);
    }

    /// True when the SOA is the only record of that type at the apex and it reads well
    /// (helper for callers that need the SOA's numbers).
    pub fn soa_numbers(&self) -> Option<crate::records::SoaNumbers> {
        let soa = self.apex()?.rrset(Rtype::SOA)?;
        crate::records::soa_numbers(soa.rdatas().next()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Name;

    fn soa(serial: u32) -> RecordData {
        let text = format!("ns. h. {serial} 1 1 1 1");
        let rdata = rdata::parse_str(Rtype::SOA, &text, None).unwrap();
        RecordData { owner: "example.".parse().unwrap(), rtype: Rtype::SOA, ttl: 60, rdata }
    }

    fn a(owner: &str, ip: &str) -> RecordData {
        let rdata = rdata::parse_str(Rtype::A, ip, None).unwrap();
        let owner: Name = owner.parse().unwrap();
        RecordData { owner, rtype: Rtype::A, ttl: 60, rdata }
    }

    fn change(
        from: u32,
        to: u32,
        removed: Vec<RecordData>,
        added: Vec<RecordData>,
    ) -> Arc<Changeset> {
        Arc::new(Changeset { removed, added, ..Changeset::between(soa(from), soa(to)) })
    }

    #[test]
    fn paths_and_condensing() {
        let limits = HistoryLimits::default();
        let h = History::default()
            .push(change(1, 2, vec![], vec![a("x.example.", "192.0.2.1")]), limits)
            .push(
                change(
                    2,
                    3,
                    vec![a("x.example.", "192.0.2.1")],
                    vec![a("y.Example.", "192.0.2.2")],
                ),
                limits,
            )
            .push(change(3, 4, vec![a("old.example.", "192.0.2.9")], vec![]), limits);
        assert_eq!(h.len(), 3);
        assert_eq!(h.first_serial(), Some(1));
        assert_eq!(h.path(2, 4).map(|p| p.len()), Some(2));
        assert!(h.path(5, 6).is_none() && h.path(1, 9).is_none());
        let c = h.condensed(1, 4).unwrap();
        assert_eq!((c.from_serial(), c.to_serial()), (Some(1), Some(4)));
        assert_eq!(c.added, vec![a("y.Example.", "192.0.2.2")], "x came and went");
        assert_eq!(c.removed, vec![a("old.example.", "192.0.2.9")]);
    }

    #[test]
    fn joined_changes_without_an_soa_take_the_soas_of_those_with_one() {
        let plain = |removed, added| Changeset { removed, added, ..Changeset::default() };
        let x = || a("x.example.", "192.0.2.1");
        let joined = Changeset::joined([
            plain(vec![], vec![x()]),
            plain(vec![a("old.example.", "192.0.2.9")], vec![]),
            plain(vec![x()], vec![]),
            plain(vec![], vec![x()]),
            Changeset::between(soa(7), soa(8)),
        ]);
        assert_eq!((joined.from_serial(), joined.to_serial()), (Some(7), Some(8)));
        assert_eq!(joined.added, vec![x()], "added, removed, added again: added");
        assert_eq!(joined.removed, vec![a("old.example.", "192.0.2.9")]);
        let none = Changeset::joined([plain(vec![], vec![x()])]);
        assert_eq!((none.soa_from, none.soa_to), (None, None));
    }

    #[test]
    fn bounded_by_count_and_bytes_and_restarted_by_a_gap() {
        let few = HistoryLimits { max_changes: 2, max_bytes: usize::MAX };
        let mut h = History::default();
        for serial in 1..6 {
            h = h.push(change(serial, serial + 1, vec![], vec![]), few);
        }
        assert_eq!((h.len(), h.first_serial()), (2, Some(4)));
        let small = HistoryLimits { max_changes: 100, max_bytes: 1 };
        assert!(History::default().push(change(1, 2, vec![], vec![]), small).is_empty());
        let gap = h.push(change(9, 10, vec![], vec![]), few);
        assert_eq!((gap.len(), gap.first_serial()), (1, Some(9)));
    }
}
