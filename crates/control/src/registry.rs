//! The zones' writers, by zone name, as everyone else finds them: the control plane
//! (which starts and stops them), the control socket (status, commands), and the data
//! plane, which puts each accepted update straight into its zone's writer's inbox.
//!
//! The map is an immutable snapshot behind an `ArcSwap`: readers take it without a
//! lock; the control plane changes a copy and swaps it in (one change at a time). The
//! copy shares all it does not change with the snapshot ([`NameMap`]), so adding or
//! removing one writer beside a million copies a few chunks of the map, not the map. An
//! update thus costs the query worker a lookup and a queue push, and wakes the control
//! plane only when its writer waits idle: a writer gathering a batch (`COMMIT_GAP`)
//! is not woken for each update that joins it.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use tern_ctl::proto::ZoneStatus;
use tern_wire::{Dname, Name};
use tern_zone::NameMap;
use tracing::warn;

use crate::event::WriterInbox;
use crate::updates::{UpdateSink, UpdateTask};

/// A running writer.
#[derive(Debug, Clone)]
pub struct Handle {
    /// Its events and updates.
    pub inbox: Arc<WriterInbox>,
    /// What it last showed of the zone.
    pub status: Arc<Mutex<ZoneStatus>>,
}

/// The writers by zone name: each entry the zone's name and its writer's handle.
pub type WriterMap = NameMap<(Name, Handle)>;

/// The writers (see the module comment).
#[derive(Debug, Default)]
pub struct Writers {
    map: ArcSwap<WriterMap>,
    /// Held while a copy is changed, so that two changes never lose one another.
    changing: Mutex<()>,
    /// Updates dropped for want of a writer or of room, logged at most once a second.
    dropped: Dropped,
}

impl Writers {
    /// The writers now.
    pub fn load(&self) -> Arc<WriterMap> {
        self.map.load_full()
    }

    /// `zone`'s writer, if it has one.
    pub fn get(&self, zone: &Dname) -> Option<Handle> {
        self.map.load().get(zone).map(|(_, handle)| handle.clone())
    }

    /// Changes the map with `f` (on a copy, swapped in after); returns what `f` did.
    pub fn change<R>(&self, f: impl FnOnce(&mut WriterMap) -> R) -> R {
        let _one_at_a_time = self.changing.lock().unwrap_or_else(|p| p.into_inner());
        let mut map = WriterMap::clone(&self.map.load());
        let out = f(&mut map);
        self.map.store(Arc::new(map));
        out
    }
}

impl UpdateSink for Writers {
    /// Queues `task` for its zone's writer; without one, or with its queue full, the
    /// task is dropped, which answers SERVFAIL.
    fn submit(&self, task: UpdateTask) {
        let Some(zone) = task.request().map(|r| r.zone()) else { return };
        let map = self.map.load();
        let Some((_, handle)) = map.get(zone) else {
            return self.dropped.note("update for a zone without a writer: SERVFAIL", zone);
        };
        if let Err(task) = handle.inbox.try_send_update(task) {
            if let Some(request) = task.request() {
                let why = "update answered SERVFAIL: the zone's writer is behind";
                self.dropped.note(why, request.zone());
            }
        }
    }
}

/// A log of dropped updates that a flood of them cannot fill: one line a second at most,
/// with how many were dropped since the last.
#[derive(Debug, Default)]
struct Dropped {
    second: AtomicU64,
    count: AtomicU64,
}

impl Dropped {
    fn note(&self, what: &str, zone: &tern_wire::Dname) {
        let now = crate::clock::unix_now(); // the log's pace, not the zone's time
        let count = self.count.fetch_add(1, Relaxed) + 1;
        if self.second.swap(now, Relaxed) != now {
            self.count.fetch_sub(count, Relaxed);
            warn!(zone = %zone, dropped = count, "{what}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_seen_by_the_next_load_and_not_by_one_taken_before() {
        let writers = Writers::default();
        let before = writers.load();
        let name: Name = "example.".parse().unwrap_or_else(|_| unreachable!());
        let (inbox, _receiver) = crate::inbox::inbox(4);
        let status = Arc::new(Mutex::new(ZoneStatus::default()));
        writers.change(|map| map.insert((name.clone(), Handle { inbox, status })));
        assert!(before.get(&name).is_none());
        assert!(writers.get(&name).is_some());
        assert!(writers.change(|map| map.remove(&name)).is_some());
        assert!(writers.get(&name).is_none());
    }
}
