//! The canonical order of a zone's names (RFC 4034 §6.1), kept for NSEC denial: node ids
//! sorted by owner name, in runs shared copy-on-write between snapshots.
//!
//! A run holds up to [`MAX_RUN`] ids. Adding or removing a name copies the one run it
//! falls in (and the list of run pointers), so a change costs in proportion to itself
//! and a run's length, not to the zone: a run that outgrows [`MAX_RUN`] is split in two,
//! one that shrinks below [`MIN_RUN`] is joined to its neighbour.
//!
//! The order does not know names: every search takes `cmp`, which compares a node's
//! owner with the name sought ([`Ordering::Less`] when the node sorts before it).

use std::cmp::Ordering;
use std::sync::Arc;

use crate::node::NodeId;

/// Ids per run when the order is built.
const RUN: usize = 1024;
/// Most ids in a run: past it, the run is split.
const MAX_RUN: usize = 2 * RUN;
/// Fewest ids in a run that has a neighbour: below it, the run is joined to one.
const MIN_RUN: usize = RUN / 4;

/// Node ids in canonical order of their owners (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct CanonicalOrder {
    runs: Vec<Arc<[NodeId]>>,
    len: usize,
}

/// A place in the order: a run and an offset in it. The end is (number of runs, 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    run: usize,
    at: usize,
}

/// The neighbours of a name in the order, wrapping around at both ends (RFC 4034 §4.1.1:
/// the last NSEC points back to the apex).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neighbours {
    /// The id just before.
    pub prev: NodeId,
    /// The id just after.
    pub next: NodeId,
}

impl CanonicalOrder {
    /// The order of `ids`, already sorted.
    pub fn from_sorted(ids: &[NodeId]) -> CanonicalOrder {
        CanonicalOrder { runs: ids.chunks(RUN).map(Arc::from).collect(), len: ids.len() }
    }

    /// Number of ids.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Every id, in order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.runs.iter().flat_map(|run| run.iter().copied())
    }

    /// The id just before the first one that does not sort before the name `cmp` looks
    /// for, wrapping to the last: the name's canonical predecessor (or the name itself's
    /// predecessor when it is present). `None` when the order is empty.
    pub fn predecessor(&self, cmp: impl Fn(NodeId) -> Ordering) -> Option<NodeId> {
        let place = self.lower_bound(cmp);
        self.before(place)
    }

    /// Inserts `id` where `cmp` (comparing with `id`'s own owner) places it; returns its
    /// neighbours after the insertion (itself both ways when it is alone). An id already
    /// present is not inserted again.
    pub fn insert(&mut self, id: NodeId, cmp: impl Fn(NodeId) -> Ordering) -> Neighbours {
        let place = self.lower_bound(cmp);
        if self.get(place) == Some(id) {
            let prev = self.before(place).unwrap_or(id);
            return Neighbours { prev, next: self.after(place).unwrap_or(id) };
        }
        let prev = self.before(place).unwrap_or(id);
        let next = self.get(place).or_else(|| self.first()).unwrap_or(id);
        self.insert_at(place, id);
        Neighbours { prev, next }
    }

    /// Removes `id`, found where `cmp` (comparing with `id`'s owner) places it; returns
    /// the neighbours it had (`None` when it was not there).
    pub fn remove(&mut self, id: NodeId, cmp: impl Fn(NodeId) -> Ordering) -> Option<Neighbours> {
        let place = self.lower_bound(cmp);
        if self.get(place) != Some(id) {
            return None;
        }
        let neighbours = Neighbours { prev: self.before(place)?, next: self.after(place)? };
        self.remove_at(place);
        Some(neighbours)
    }

    /// Number of runs.
    #[cfg(test)]
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Number of runs shared with `other` at the same place.
    #[cfg(test)]
    pub fn shared_runs(&self, other: &CanonicalOrder) -> usize {
        self.runs.iter().zip(&other.runs).filter(|(a, b)| Arc::ptr_eq(a, b)).count()
    }

    fn first(&self) -> Option<NodeId> {
        self.runs.first()?.first().copied()
    }

    /// The place of the first id that does not sort before the name `cmp` looks for.
    fn lower_bound(&self, cmp: impl Fn(NodeId) -> Ordering) -> Place {
        let first_below = |run: &Arc<[NodeId]>| run.first().is_some_and(|&id| cmp(id).is_lt());
        let runs_below = self.runs.partition_point(first_below);
        let Some(run) = runs_below.checked_sub(1) else { return Place { run: 0, at: 0 } };
        let ids = self.runs.get(run).map_or(&[][..], |r| &r[..]);
        let at = ids.partition_point(|&id| cmp(id).is_lt());
        if at < ids.len() {
            Place { run, at }
        } else {
            Place { run: runs_below, at: 0 }
        }
    }

    fn get(&self, place: Place) -> Option<NodeId> {
        self.runs.get(place.run)?.get(place.at).copied()
    }

    /// The id before `place`, wrapping to the last.
    fn before(&self, place: Place) -> Option<NodeId> {
        if place.at > 0 {
            return self.get(Place { run: place.run, at: place.at - 1 });
        }
        let run = if place.run == 0 { self.runs.last() } else { self.runs.get(place.run - 1) };
        run?.last().copied()
    }

    /// The id after `place`, wrapping to the first.
    fn after(&self, place: Place) -> Option<NodeId> {
        let run = self.runs.get(place.run)?;
        if place.at + 1 < run.len() {
            return run.get(place.at + 1).copied();
        }
        let next = self.runs.get(place.run + 1).or(self.runs.first());
        next?.first().copied()
    }

    fn insert_at(&mut self, place: Place, id: NodeId) {
        // At the end, the id joins the last run.
        let (run, at) = match self.runs.len().checked_sub(1) {
            None => {
                self.runs.push(Arc::from([id]));
                self.len = 1;
                return;
            }
            Some(last) if place.run > last => (last, self.runs.get(last).map_or(0, |r| r.len())),
            Some(_) => (place.run, place.at),
        };
        let Some(old) = self.runs.get(run) else { return };
        let mut ids = old.to_vec();
        ids.insert(at.min(ids.len()), id);
        self.len += 1;
        self.replace(run, 1, ids);
    }

    fn remove_at(&mut self, place: Place) {
        let Some(old) = self.runs.get(place.run) else { return };
        if place.at >= old.len() {
            return;
        }
        let mut ids = old.to_vec();
        ids.remove(place.at);
        self.len -= 1;
        if ids.len() >= MIN_RUN || self.runs.len() == 1 {
            self.replace(place.run, 1, ids);
            return;
        }
        // A short run is joined to its successor, or, when last, to its predecessor.
        if let Some(next) = self.runs.get(place.run + 1) {
            ids.extend_from_slice(next);
            self.replace(place.run, 2, ids);
        } else if let Some(prev) = place.run.checked_sub(1).and_then(|p| self.runs.get(p)) {
            let mut joined = prev.to_vec();
            joined.extend_from_slice(&ids);
            self.replace(place.run - 1, 2, joined);
        }
    }

    /// Replaces `count` runs from `start` with `ids`, as one run or two halves.
    fn replace(&mut self, start: usize, count: usize, ids: Vec<NodeId>) {
        let new: Vec<Arc<[NodeId]>> = if ids.is_empty() {
            Vec::new()
        } else if ids.len() > MAX_RUN {
            let (a, b) = ids.split_at(ids.len() / 2);
            vec![Arc::from(a), Arc::from(b)]
        } else {
            vec![Arc::from(ids)]
        };
        let end = (start + count).min(self.runs.len());
        self.runs.splice(start..end, new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids are their own keys here: `cmp` compares numbers.
    fn cmp_with(target: NodeId) -> impl Fn(NodeId) -> Ordering {
        move |id| id.cmp(&target)
    }

    fn wrapped(model: &[NodeId], i: usize, forward: bool) -> NodeId {
        let n = model.len();
        if forward {
            model[(i + 1) % n]
        } else {
            model[(i + n - 1) % n]
        }
    }

    /// Random insertions and removals, the order checked against a sorted list after
    /// each: contents, neighbours, predecessors of absent keys, run lengths within
    /// bounds; an earlier snapshot is left as it was.
    #[test]
    fn changes_agree_with_a_sorted_list() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |below: u32| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % u64::from(below)) as u32
        };
        let start: Vec<NodeId> = (0..3000).map(|i| i * 4).collect();
        let mut order = CanonicalOrder::from_sorted(&start);
        let mut model = start;
        let first = order.clone();
        for step in 0..6000 {
            // Grow, then shrink to a handful, then grow again.
            let remove = (2000..4500).contains(&step) || next(3) == 0;
            let key = next(20_000);
            match model.binary_search(&key) {
                Ok(i) if remove && model.len() > 1 => {
                    let (prev, after) = (wrapped(&model, i, false), wrapped(&model, i, true));
                    let n = order.remove(key, cmp_with(key)).unwrap();
                    assert_eq!((n.prev, n.next), (prev, after), "remove {key}");
                    model.remove(i);
                }
                Err(i) if !remove => {
                    let n = order.insert(key, cmp_with(key));
                    model.insert(i, key);
                    let at = model.binary_search(&key).unwrap();
                    let expect = (wrapped(&model, at, false), wrapped(&model, at, true));
                    assert_eq!((n.prev, n.next), expect, "insert {key}");
                }
                Ok(_) | Err(_) => {
                    assert!(order.remove(key | 1 << 30, cmp_with(key | 1 << 30)).is_none());
                    let at = model.partition_point(|&id| id < key);
                    let expect = if at == 0 { *model.last().unwrap() } else { model[at - 1] };
                    assert_eq!(order.predecessor(cmp_with(key)), Some(expect));
                }
            }
            assert_eq!(order.len(), model.len());
            if step % 250 == 0 {
                assert!(order.iter().eq(model.iter().copied()), "step {step}");
                let runs = order.runs.len();
                assert!(order.runs.iter().all(|r| r.len() <= MAX_RUN && !r.is_empty()));
                assert!(runs == 1 || order.runs.iter().all(|r| r.len() >= MIN_RUN / 2), "{runs}");
            }
        }
        assert!(order.iter().eq(model.iter().copied()));
        assert!(first.iter().eq((0..3000).map(|i| i * 4)), "the first snapshot is unchanged");
    }

    #[test]
    fn an_empty_order_takes_its_first_id() {
        let mut order = CanonicalOrder::default();
        assert_eq!(order.predecessor(cmp_with(5)), None);
        let n = order.insert(5, cmp_with(5));
        assert_eq!((n.prev, n.next), (5, 5));
        assert_eq!(order.predecessor(cmp_with(1)), Some(5));
        assert_eq!(order.remove(5, cmp_with(5)).map(|n| (n.prev, n.next)), Some((5, 5)));
        assert_eq!(order.len(), 0);
    }
}
