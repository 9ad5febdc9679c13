//! The index of the zones served and of the files they use, that zone-add and
//! zone-remove check a change against ([`Index`]), and where the main thread keeps it
//! ([`IndexSlot`]).
//!
//! It keeps no name and no path of its own: a zone is its plan's position in
//! `Config::resolved`, found by the hash of its name and told apart by comparing the
//! plan's name; a zone file is the position of the one zone that uses it, the same way,
//! and only a file that several zones read keeps its path and their count. That is
//! about 10 bytes a zone (20 when every zone has a file of its own: two hash tables of
//! 4-byte positions), where a map of name and path copies took 100 to 300; at a
//! million zones, 10 to 20 MB.
//!
//! The hashing is keyed ([`RandomState`]): names and files come from the control socket
//! and the API too, and must not be chosen to collide.
//!
//! A start or a reload has the index built on a thread of its own ([`IndexSlot::build`],
//! half a second at a million zones on a busy machine: mostly a cache miss for each
//! plan and name), so that the first change does not build it. A change that comes
//! before it is ready waits for it, and takes it only when it was built from the very
//! zones served now; otherwise it builds one itself ([`IndexSlot::in_step`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use hashbrown::HashTable;
use tern_wire::Name;

use crate::config::{files, Config, Resolved, ZonePlan};

/// Zones indexed between two looks at the flag that stops a build no longer wanted.
const STOP_EVERY: usize = 1 << 16;

/// The zones served by name, and who uses which zone file (see the module comment).
/// Positions are `u32`: a configuration holds far fewer than 2^32 zones (each plan alone
/// takes more than 100 bytes).
#[derive(Debug, Default)]
pub struct Index {
    /// The keys of the hashes.
    hasher: RandomState,
    /// Each zone: its plan's position, by the hash of its name.
    at: HashTable<u32>,
    /// Each file one zone uses: that zone's position, by the hash of the path.
    files: HashTable<u32>,
    /// Each file more than one zone read (a secondary's kept copy is its own).
    shared: HashMap<PathBuf, Shared>,
}

/// The zones that read one file.
#[derive(Debug)]
struct Shared {
    /// How many.
    readers: usize,
    /// One of them, for messages (`None` once that one is gone).
    reader: Option<u32>,
}

/// The zones that use one file, as a change sees them.
#[derive(Debug, Default, Clone, Copy)]
struct Users<'z> {
    /// The secondary that writes it (then the only user).
    writer: Option<&'z Name>,
    /// Primaries that read it.
    readers: usize,
    /// One of them, when known.
    reader: Option<&'z Name>,
}

/// The plan at `at` of `zones`.
fn plan_at(zones: &[Arc<ZonePlan>], at: u32) -> Option<&ZonePlan> {
    zones.get(at as usize).map(|plan| &**plan)
}

impl Index {
    /// The index of `config`'s zones.
    pub fn of(config: &Config) -> Index {
        Index::build(&config.resolved.zones, &AtomicBool::new(false)).unwrap_or_default()
    }

    /// The index of `zones`, or `None` when `stop` is set before it is done.
    fn build(zones: &[Arc<ZonePlan>], stop: &AtomicBool) -> Option<Index> {
        let mut index = Index { at: HashTable::with_capacity(zones.len()), ..Index::default() };
        for (at, n) in (0..zones.len()).zip(0u32..) {
            if at % STOP_EVERY == 0 && stop.load(Ordering::Relaxed) {
                return None;
            }
            index.insert(zones, n);
        }
        Some(index)
    }

    /// True when the index was built for `config`'s zones (a cheap check: the count).
    pub fn fits(&self, config: &Config) -> bool {
        self.at.len() == config.resolved.zones.len()
    }

    /// The bytes the index takes (its tables; the paths of shared files aside).
    pub fn bytes(&self) -> usize {
        let shared = self.shared.capacity() * std::mem::size_of::<(PathBuf, Shared)>();
        self.at.allocation_size() + self.files.allocation_size() + shared
    }

    /// The position of zone `name` in `zones`.
    pub(super) fn position(&self, zones: &[Arc<ZonePlan>], name: &Name) -> Option<usize> {
        let named = |&at: &u32| plan_at(zones, at).is_some_and(|plan| plan.name == *name);
        self.at.find(self.hasher.hash_one(name), named).map(|&at| at as usize)
    }

    /// Takes the zone at `at` of `zones`, its name and its file, into the index.
    pub(super) fn insert(&mut self, zones: &[Arc<ZonePlan>], at: u32) {
        let Some(plan) = plan_at(zones, at) else { return };
        let hasher = &self.hasher;
        let rehash = |&p: &u32| plan_at(zones, p).map_or(0, |plan| hasher.hash_one(&plan.name));
        self.at.insert_unique(hasher.hash_one(&plan.name), at, rehash);
        if let Some(path) = files::normal_file(plan) {
            self.take_file(zones, at, &path);
        }
    }

    /// Takes zone `name` out of the index (its plan still in `zones`): its position.
    pub(super) fn remove(&mut self, zones: &[Arc<ZonePlan>], name: &Name) -> Option<usize> {
        let named = |&at: &u32| plan_at(zones, at).is_some_and(|plan| plan.name == *name);
        let (at, _) = self.at.find_entry(self.hasher.hash_one(name), named).ok()?.remove();
        self.release_file(zones, at);
        Some(at as usize)
    }

    /// The zone at `from` is now at `to` of `zones` (the last one took the place of one
    /// removed).
    pub(super) fn moved(&mut self, zones: &[Arc<ZonePlan>], from: usize, to: usize) {
        let (Ok(from), Ok(to)) = (u32::try_from(from), u32::try_from(to)) else { return };
        let Some(plan) = plan_at(zones, to) else { return };
        if let Some(at) = self.at.find_mut(self.hasher.hash_one(&plan.name), |&at| at == from) {
            *at = to;
        }
        let Some(path) = files::normal_file(plan) else { return };
        match self.shared.get_mut(&*path) {
            Some(shared) if shared.reader == Some(from) => shared.reader = Some(to),
            Some(_) => {}
            None => {
                if let Some(at) = self.files.find_mut(self.path_hash(&path), |&at| at == from) {
                    *at = to;
                }
            }
        }
    }

    /// Checks that `plans`, new zones, can use their files beside the zones indexed (of
    /// `zones`) and one another, as [`files::claim`] does: a file one of them writes (a
    /// secondary's kept copy) is its own.
    pub(super) fn check_files(
        &self,
        zones: &[Arc<ZonePlan>],
        plans: &[Arc<ZonePlan>],
        storage: &Path,
    ) -> Result<(), String> {
        let mut batch: HashMap<PathBuf, Users<'_>> = HashMap::new();
        for plan in plans {
            let name = &plan.name;
            let path =
                files::zone_file(plan, storage).map_err(|why| format!("zone {name}: {why}"))?;
            let Some(path) = path else { continue };
            let writes = files::writes(plan);
            let users = match batch.get(&path) {
                Some(users) => *users,
                None => self.users(zones, &path),
            };
            if let Some(other) = conflict(&users, writes) {
                return Err(format!(
                    "zone {name}: file {}: {other} uses it too, and a secondary's kept copy must be its own",
                    path.display()
                ));
            }
            batch.insert(path, users.with(name, writes));
        }
        Ok(())
    }

    /// Who uses `path` among the zones indexed (of `zones`).
    fn users<'z>(&self, zones: &'z [Arc<ZonePlan>], path: &Path) -> Users<'z> {
        if let Some(shared) = self.shared.get(path) {
            let reader = shared.reader.and_then(|at| plan_at(zones, at)).map(|plan| &plan.name);
            return Users { writer: None, readers: shared.readers, reader };
        }
        let same = |&at: &u32| same_file(zones, at, path);
        let one = self.files.find(self.path_hash(path), same).and_then(|&at| plan_at(zones, at));
        one.map_or_else(Users::default, |plan| {
            Users::default().with(&plan.name, files::writes(plan))
        })
    }

    /// Takes `path`, the file of the zone at `at`, for it.
    fn take_file(&mut self, zones: &[Arc<ZonePlan>], at: u32, path: &Path) {
        if let Some(shared) = self.shared.get_mut(path) {
            shared.readers += 1;
            return;
        }
        let hash = self.path_hash(path);
        if let Ok(one) = self.files.find_entry(hash, |&p| same_file(zones, p, path)) {
            let (other, _) = one.remove();
            self.shared.insert(path.to_owned(), Shared { readers: 2, reader: Some(other) });
            return;
        }
        let hasher = &self.hasher;
        let rehash = |&p: &u32| {
            let path = plan_at(zones, p).and_then(files::normal_file);
            path.map_or(0, |path| hasher.hash_one(path.as_os_str()))
        };
        self.files.insert_unique(hash, at, rehash);
    }

    /// Gives back the file of the zone at `at` (still in `zones`).
    fn release_file(&mut self, zones: &[Arc<ZonePlan>], at: u32) {
        let Some(path) = plan_at(zones, at).and_then(files::normal_file) else { return };
        if let Some(shared) = self.shared.get_mut(&*path) {
            shared.readers = shared.readers.saturating_sub(1);
            if shared.reader == Some(at) {
                shared.reader = None;
            }
            if shared.readers == 0 {
                self.shared.remove(&*path);
            }
            return;
        }
        if let Ok(one) = self.files.find_entry(self.path_hash(&path), |&p| p == at) {
            one.remove();
        }
    }

    /// The hash of a normal path, as bytes (for normal paths, that is as paths).
    fn path_hash(&self, path: &Path) -> u64 {
        self.hasher.hash_one(path.as_os_str())
    }

    /// Each zone's position, and each file with its readers and whether it is written,
    /// in order: what two indexes of the same zones agree on.
    #[cfg(test)]
    pub(super) fn listing(
        &self,
        zones: &[Arc<ZonePlan>],
    ) -> (Vec<u32>, Vec<(PathBuf, usize, bool)>) {
        let mut at: Vec<u32> = self.at.iter().copied().collect();
        at.sort_unstable();
        let one = self.files.iter().filter_map(|&p| plan_at(zones, p)).filter_map(|plan| {
            let path = files::normal_file(plan)?.into_owned();
            Some((path, usize::from(!files::writes(plan)), files::writes(plan)))
        });
        let shared = self.shared.iter().map(|(path, s)| (path.clone(), s.readers, false));
        let mut files: Vec<_> = one.chain(shared).collect();
        files.sort();
        (at, files)
    }
}

impl<'z> Users<'z> {
    /// These users and zone `name` (a writer when `writes`).
    fn with(mut self, name: &'z Name, writes: bool) -> Users<'z> {
        match writes {
            true => self.writer = Some(name),
            false => {
                self.readers += 1;
                self.reader.get_or_insert(name);
            }
        }
        self
    }
}

/// Who keeps a zone from using a file that `users` use (it writes it when `writes`):
/// a secondary's kept copy is its own.
fn conflict(users: &Users<'_>, writes: bool) -> Option<String> {
    match (users.writer, writes && users.readers > 0) {
        (Some(writer), _) => Some(format!("zone {writer}")),
        (None, true) => Some(users.reader.map_or_else(
            || format!("{} other zones", users.readers),
            |reader| format!("zone {reader}"),
        )),
        (None, false) => None,
    }
}

/// True when the zone at `at` of `zones` uses normal `path`.
fn same_file(zones: &[Arc<ZonePlan>], at: u32, path: &Path) -> bool {
    let file = plan_at(zones, at).and_then(files::normal_file);
    file.is_some_and(|file: Cow<'_, Path>| file.as_os_str() == path.as_os_str())
}

/// The index as the main thread keeps it: ready, being built on a thread of its own,
/// or none yet (see the module comment).
#[derive(Debug, Default)]
pub struct IndexSlot {
    /// The index, kept in step by the changes.
    ready: Option<Index>,
    /// The one being built.
    building: Option<Building>,
}

/// An index being built on a thread of its own.
#[derive(Debug)]
struct Building {
    /// The zones it is built from, held here too: while they are held, no other zones
    /// can be at their address, so the zones served are the same ones exactly when they
    /// are at this address ([`Arc::ptr_eq`]). A configuration replaced has zones of its
    /// own, and one changed in place copies them first ([`Arc::make_mut`], shared).
    zones: Arc<Resolved>,
    /// Set when the index is no longer wanted: the thread stops early.
    _stop: StopOnDrop,
    thread: JoinHandle<Option<Index>>,
}

/// Sets its flag when dropped.
#[derive(Debug)]
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl IndexSlot {
    /// Starts building the index of `config`'s zones on a thread of its own, any other
    /// forgotten. When no thread can be started, the first change builds it.
    pub fn build(&mut self, config: &Config) {
        *self = IndexSlot::default();
        let zones = Arc::clone(&config.resolved);
        let stop = Arc::new(AtomicBool::new(false));
        let (theirs, flag) = (Arc::clone(&zones), Arc::clone(&stop));
        let build = move || {
            let started = Instant::now();
            let index = Index::build(&theirs.zones, &flag)?;
            let (zones, bytes) = (theirs.zones.len(), index.bytes());
            let ms = started.elapsed().as_millis();
            tracing::debug!(zones, bytes, ms, "index of the zones served built");
            Some(index)
        };
        match std::thread::Builder::new().name("ternd-index".into()).spawn(build) {
            Ok(thread) => self.building = Some(Building { zones, _stop: StopOnDrop(stop), thread }),
            Err(e) => {
                tracing::warn!("the index of the zones served waits for the first change: {e}")
            }
        }
    }

    /// Forgets the index: the zones served are no longer those it was built for.
    pub fn forget(&mut self) {
        *self = IndexSlot::default();
    }

    /// The index of `config`, in step with it: the one kept; else the one being built
    /// when it is built from the zones served now (waited for); else one built here.
    pub fn in_step(&mut self, config: &Config) -> &mut Index {
        if let Some(building) = self.building.take() {
            self.ready = building.take(config);
        }
        if self.ready.as_ref().is_some_and(|index| !index.fits(config)) {
            self.ready = None;
        }
        self.ready.get_or_insert_with(|| Index::of(config))
    }

    /// True while an index is being built (tests).
    #[cfg(test)]
    pub(super) fn is_building(&self) -> bool {
        self.building.is_some()
    }
}

impl Building {
    /// The index, once built, when it was built from `config`'s zones as they are.
    /// The zones it held are let go before the change goes on, so that it changes them
    /// in place rather than copying them.
    fn take(self, config: &Config) -> Option<Index> {
        if !Arc::ptr_eq(&self.zones, &config.resolved) {
            return None;
        }
        let started = Instant::now();
        let index = self.thread.join().ok().flatten();
        let ms = started.elapsed().as_millis();
        tracing::debug!(ms, "the first change waited for the index of the zones served");
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Role, ZoneSource};

    fn plans(count: usize, file: impl Fn(usize) -> PathBuf) -> Vec<Arc<ZonePlan>> {
        (0..count)
            .map(|n| {
                let name: Name = format!("z{n}.example.").parse().unwrap();
                Arc::new(ZonePlan::new(name, ZoneSource::File(file(n)), Role::Primary))
            })
            .collect()
    }

    #[test]
    fn a_zone_costs_the_index_about_ten_bytes_twenty_with_a_file_of_its_own() {
        let count = 100_000;
        let shared = plans(count, |_| PathBuf::from("/zones/parked.zone"));
        let index = Index::build(&shared, &AtomicBool::new(false)).unwrap();
        let per_zone = index.bytes() / count;
        assert!(per_zone <= 12, "{per_zone} bytes a zone");
        let own = plans(count, |n| PathBuf::from(format!("/zones/z{n}.zone")));
        let index = Index::build(&own, &AtomicBool::new(false)).unwrap();
        let per_zone = index.bytes() / count;
        assert!(per_zone <= 24, "{per_zone} bytes a zone");
        let name: Name = "z777.example.".parse().unwrap();
        assert_eq!(index.position(&own, &name), Some(777));
    }

    #[test]
    fn a_build_no_longer_wanted_stops() {
        let zones = plans(10, |_| PathBuf::from("/zones/parked.zone"));
        assert!(Index::build(&zones, &AtomicBool::new(true)).is_none());
    }
}
