//! Zones added and removed at run time (`ternctl zone-add`, `zone-remove`).
//!
//! They are kept in the storage directory's `zones-added.toml`
//! ([`ADDED_ZONES`](crate::config::ADDED_ZONES)), an append-only log of `[[zone]]`
//! tables and removal records ([`added_file`]), read after the configuration file at
//! every start and reload ([`Config::from_file`]). A change costs what its zones cost,
//! not what the zones served do:
//!
//! * it is checked against an [`Index`] of the zones served and the files they use
//!   (lookups, not scans; built on a thread of its own after a start or a reload:
//!   [`IndexSlot`]), and only its own tables are read and resolved
//!   ([`Config::read_new_zones`]);
//! * it is appended to the file and synced before it is applied or acknowledged (a
//!   crash leaves the old set or the new one: [`added_file`]);
//! * the configuration served is changed in place ([`Config::push_added`],
//!   [`Config::swap_remove_added`]), not copied.
//!
//! An addition's new primary zones have their files loaded once off the main thread
//! before anything is kept (the caller does this, see `lifecycle::Steering::zone_add`),
//! so that a zone that would not load adds nothing — all or none. A zone that joins or
//! leaves a catalog produced here changes its producer's member list: the whole
//! configuration is then read again with the change ([`Change::Whole`]). A removed
//! zone's journal and kept copy stay on disk.
//!
//! A table arrives as text (from `ternctl` or the API) and is never written as given:
//! it is parsed, checked to hold only a zone's keys, its `file` confined to
//! `added-zone-dirs` ([`files::Confinement`]), and written again one key a line with its
//! value in TOML's inline form — so no value (a key holding a newline, a string holding
//! `[[zone]]`) can add a table or a key to the file.

mod index;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize as _;
use tern_wire::Name;

use crate::config::added_file;
use crate::config::{files, CatalogRole, Config, NewZones, Role, ZoneConfig, ZonePlan, ZoneSource};
use crate::ctl::listen::parse_zone;
pub use index::{Index, IndexSlot};

/// Tables of the file that serve nothing (zones removed, and their removal records)
/// from which, once they outweigh the zones kept, the file is rewritten with those only.
const REWRITE_AFTER: usize = 1024;

/// Zone-adds whose files are being checked on a thread of their own, kept as prepared
/// so that they are not prepared again when they go on — unless the configuration or
/// the index changed meanwhile: every change forgets them ([`Checking::changed`]).
#[derive(Debug, Default)]
pub struct Checking {
    next: u64,
    waiting: HashMap<u64, Prepared>,
}

impl Checking {
    /// Keeps `prepared` while its files are checked: the ticket to take it back with.
    pub fn keep(&mut self, prepared: Prepared) -> u64 {
        self.next += 1;
        self.waiting.insert(self.next, prepared);
        self.next
    }

    /// The add of `ticket` as prepared; `None` when something changed since (prepare it
    /// again).
    pub fn take(&mut self, ticket: u64) -> Option<Prepared> {
        self.waiting.remove(&ticket)
    }

    /// The configuration or the index changed: the adds kept are prepared again.
    pub fn changed(&mut self) {
        self.waiting.clear();
    }
}

/// Logs the change to the file of added zones that a crash left unfinished, if any
/// (ignored: it was never acknowledged; the next change cuts it off).
pub fn log_torn(config: &Config) {
    let log = &config.added_log;
    if log.len > log.committed {
        let file = config.added_zones_path().unwrap_or_default();
        tracing::warn!(
            file = %file.display(),
            bytes = log.len - log.committed,
            "the last change to the file of added zones was not finished (a crash while it was written, before it was acknowledged): ignored"
        );
    }
}

/// What a change does to the zones served.
#[derive(Debug)]
pub enum Change {
    /// These zones were added (their plans) or removed (their names), the configuration
    /// changed in place: the other zones stay untouched.
    Zones(Vec<Arc<ZonePlan>>, Vec<Name>),
    /// The whole configuration, read again with the change (a produced catalog's member
    /// list changed): apply it as a reload does.
    Whole(Box<Config>),
}

/// What `zone-add` would make of `tables`, nothing written or changed yet.
#[derive(Debug)]
pub struct Prepared {
    /// The tables as they are written, one after the other.
    body: String,
    /// How many.
    count: usize,
    /// The new zones and their plans; `None` when a new zone joins a produced catalog.
    zones: Option<NewZones>,
}

/// The most bytes of zone files a zone-add checks on the main thread, without a thread of
/// its own (see [`Prepared::checked_here`]).
pub const CHECK_HERE_BYTES: u64 = 64 * 1024;

impl Prepared {
    /// True when the new zones' files are small enough to be loaded once on the calling
    /// thread ([`CHECK_HERE_BYTES`] in all, at most): a thread of their own would cost
    /// more than they do. A file that cannot be looked at counts as small: its load
    /// fails at once.
    pub fn checked_here(&self) -> bool {
        let size = |path: &PathBuf| std::fs::metadata(path).map_or(0, |m| m.len());
        let mut total = 0u64;
        self.new_zone_files().iter().all(|(_, path)| {
            total = total.saturating_add(size(path));
            total <= CHECK_HERE_BYTES
        })
    }

    /// The zone files the new primary zones load, to check before anything is kept
    /// (none known when the whole configuration is read again: they are loaded then).
    pub fn new_zone_files(&self) -> Vec<(Name, PathBuf)> {
        let Some((_, plans)) = &self.zones else { return Vec::new() };
        plans
            .iter()
            .filter(|p| matches!(p.role, Role::Primary))
            .filter_map(|p| match &p.source {
                ZoneSource::File(path) => Some((p.name.clone(), path.clone())),
                _ => None,
            })
            .collect()
    }
}

/// What adding the zones of `tables` (all or none) would do, checked against `index` but
/// nothing written.
pub fn prepare(config: &Config, index: &mut Index, tables: &[String]) -> Result<Prepared, String> {
    if tables.is_empty() {
        return Err("no zone to add".into());
    }
    let path = added_path(config)?;
    let mut dirs = files::Confinement::new(&config.added_zone_dirs());
    let mut names = HashSet::new();
    let mut body = String::new();
    for table in tables {
        let table = checked_table(table, &mut dirs)?;
        let name = table_name(&table)?;
        if index.position(&config.resolved.zones, &name).is_some() {
            return Err(format!("{name} is served already"));
        }
        if !names.insert(name.clone()) {
            return Err(format!("{name} is given twice"));
        }
        write_table(&table, &mut body).map_err(|why| format!("zone {name}: {why}"))?;
    }
    let zones = match config.read_new_zones(&body, &path, config.producers().iter()) {
        Some(read) => Some(read.map_err(|e| e.to_string())?),
        None => None,
    };
    if let Some((_, plans)) = &zones {
        index.check_files(&config.resolved.zones, plans, &config.server.storage)?;
    }
    Ok(Prepared { body, count: tables.len(), zones })
}
/// Adds the zones of `tables` (all or none): checked ([`prepare`]), then kept
/// ([`commit`]).
pub fn add(config: &mut Config, index: &mut Index, tables: &[String]) -> Result<Change, String> {
    let prepared = prepare(config, index, tables)?;
    commit(config, index, prepared)
}

/// Keeps the zones `prepared` (by [`prepare`], from this `config` and `index`, unchanged
/// since): appended to the file and synced, then the configuration changed in place and
/// `index` with it (or, when a produced catalog gains a member, the whole configuration
/// read again).
pub fn commit(
    config: &mut Config,
    index: &mut Index,
    prepared: Prepared,
) -> Result<Change, String> {
    let path = added_path(config)?;
    let Some((zones, plans)) = prepared.zones else {
        let mut next = whole(config, &path, &prepared.body)?;
        append(config, &path, &prepared.body, prepared.count)?;
        next.added_log = config.added_log.clone();
        return Ok(Change::Whole(Box::new(next)));
    };
    index.check_files(&config.resolved.zones, &plans, &config.server.storage)?;
    let first = config.resolved.zones.len();
    let (Ok(from), Ok(to)) = (u32::try_from(first), u32::try_from(first + plans.len())) else {
        return Err(format!("no more than {} zones can be served", u32::MAX));
    };
    append(config, &path, &prepared.body, prepared.count)?;
    config.push_added(zones, &plans);
    (from..to).for_each(|at| index.insert(&config.resolved.zones, at));
    Ok(Change::Zones(plans, Vec::new()))
}

/// Removes `zones` (all or none), which must have been added at run time: the removal
/// appended to the file and synced, then the configuration changed in place (or, when
/// one is a catalog's member or producer, the whole configuration read again).
pub fn remove(config: &mut Config, index: &mut Index, zones: &[String]) -> Result<Change, String> {
    let path = added_path(config)?;
    let (mut gone, mut seen) = (Vec::new(), HashSet::new());
    for zone in zones {
        let name = parse_zone(zone)?;
        match index.position(&config.resolved.zones, &name) {
            None => return Err(format!("{name} is not served here")),
            Some(at) if at < config.zones_split().0.len() => {
                let file = config.path.as_deref().unwrap_or(Path::new("?")).display();
                return Err(format!("{name} is in {file}: remove it there and reload"));
            }
            Some(_) if !seen.insert(name.clone()) => {}
            Some(_) => gone.push(name),
        }
    }
    let body: String = gone.iter().map(added_file::removal).collect();
    let catalogued = |n: &Name| {
        let plan =
            index.position(&config.resolved.zones, n).and_then(|at| config.resolved.zones.get(at));
        plan.is_some_and(|p| p.catalog != CatalogRole::None)
    };
    if gone.iter().any(catalogued) {
        let mut next = whole(config, &path, &body)?;
        append(config, &path, &body, gone.len())?;
        next.added_log = config.added_log.clone();
        return Ok(Change::Whole(Box::new(next)));
    }
    append(config, &path, &body, gone.len())?;
    for name in &gone {
        forget(config, index, name);
    }
    rewrite_when_worn(config, &path);
    Ok(Change::Zones(Vec::new(), gone))
}

/// Takes `name` out of `config` and `index`.
fn forget(config: &mut Config, index: &mut Index, name: &Name) {
    let Some(at) = index.remove(&config.resolved.zones, name) else { return };
    if let Some((_, Some(moved))) = config.swap_remove_added(at) {
        index.moved(&config.resolved.zones, moved, at);
    }
}

/// The file of added zones of `config`, which must have been read from a file.
fn added_path(config: &Config) -> Result<PathBuf, String> {
    match (&config.path, config.added_zones_path()) {
        (Some(_), Some(path)) => Ok(path),
        _ => Err("zones can be added only to a server started with a configuration file".into()),
    }
}

/// Appends `body` (`count` tables) to the file, synced.
fn append(config: &mut Config, path: &Path, body: &str, count: usize) -> Result<(), String> {
    added_file::append(path, &mut config.added_log, body, count)
        .map_err(|e| format!("{} not written: {e}", path.display()))
}

/// The whole configuration read again, its file of added zones with `body` appended.
fn whole(config: &Config, path: &Path, body: &str) -> Result<Config, String> {
    let main_path = config.path.clone().unwrap_or_default();
    let main =
        std::fs::read_to_string(&main_path).map_err(|e| format!("{}: {e}", main_path.display()))?;
    let current =
        added_file::read_committed(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = added_file::with_change(&current, config.added_log.marked, body);
    let mut next =
        Config::read(&main, &main_path, Some((&text, path))).map_err(|e| e.to_string())?;
    next.path = config.path.clone();
    Ok(next)
}

/// Rewrites the file with the zones kept only, once the removed outweigh them (see
/// [`REWRITE_AFTER`]); a failure is logged, the file stays as it was (whole).
fn rewrite_when_worn(config: &mut Config, path: &Path) {
    let kept = config.zones_split().1.len();
    let worn = config.added_log.tables.saturating_sub(kept);
    if worn < REWRITE_AFTER || worn <= kept {
        return;
    }
    let rewritten = (|| {
        let text = added_file::read_committed(path).map_err(|e| e.to_string())?;
        let tables = read_tables(&text, path)?;
        let mut body = String::new();
        for table in &tables {
            write_table(table, &mut body)?;
        }
        added_file::rewrite(path, &mut config.added_log, &body, tables.len())
            .map_err(|e| e.to_string())
    })();
    match rewritten {
        Ok(()) => {
            tracing::info!(file = %path.display(), zones = kept, "file of added zones rewritten without the zones removed")
        }
        Err(why) => {
            tracing::warn!(file = %path.display(), "file of added zones not rewritten (it stays whole): {why}")
        }
    }
}

/// A table given to `zone-add`, checked (see the module comment): TOML holding only a
/// zone's keys, with a `file` inside `dirs` once its `%s` is filled in.
fn checked_table(text: &str, dirs: &mut files::Confinement) -> Result<toml::Table, String> {
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| format!("not a zone table: {}", e.message()))?;
    let name = table_name(&table)?;
    fill_in_stem(&mut table, &name);
    // A script runs what it names, and a failing one quotes it: only the configuration
    // file, the operator's, may name one.
    if ["script", "script-max-memory", "script-max-instructions"]
        .iter()
        .any(|k| table.contains_key(*k))
    {
        return Err(format!(
            "zone {name}: `script` is for zones of the configuration file, not zones added at run time"
        ));
    }
    // A database zone reads what an operator's `[[database]]` reaches: the same.
    if table.contains_key("database") {
        return Err(format!(
            "zone {name}: `database` is for zones of the configuration file, not zones added at run time"
        ));
    }
    ZoneConfig::deserialize(toml::Value::Table(table.clone()))
        .map_err(|e| format!("zone {name}: {}", e.message()))?;
    match table.get("file") {
        Some(toml::Value::String(file)) => drop(dirs.check(Path::new(file))?),
        Some(_) => return Err(format!("zone {name}: `file` must be a string")),
        None => {}
    }
    Ok(table)
}

/// Replaces each `%s` in the table's `file` by `zone`'s file-name stem without its
/// final dot ([`tern_journal::files::stem`]: the name itself, in lower case, for
/// ordinary names; `/`, `\` and other bytes escaped as `%XX`, so a name cannot lead
/// into another directory), as `ternctl zone-add --file` and `POST /api/v1/zones`
/// promise. Done before the file is confined, so the path checked is the path used.
fn fill_in_stem(table: &mut toml::Table, zone: &Name) {
    if let Some(toml::Value::String(file)) = table.get_mut("file") {
        if file.contains("%s") {
            let stem = tern_journal::files::stem(zone);
            *file = file.replace("%s", stem.strip_suffix('.').unwrap_or(&stem));
        }
    }
}

/// `table` as one `[[zone]]` table: one key a line, each value inline.
/// A value that would take more than one line (a string holding a newline may be
/// written as a multi-line string) is refused: a line of it could pass for a mark.
fn write_table(table: &toml::Table, out: &mut String) -> Result<(), String> {
    out.push_str("[[zone]]\n");
    for (key, value) in table {
        let bare = !key.is_empty()
            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let key = match bare {
            true => key.clone(),
            false => toml::Value::String(key.clone()).to_string(),
        };
        let line = format!("{key} = {value}");
        if line.contains(['\n', '\r']) {
            return Err(format!("`{key}`: a value on more than one line"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    Ok(())
}

/// The `[[zone]]` tables of the file of added zones that are served: each removal record
/// takes away the table of its name before it.
fn read_tables(text: &str, path: &Path) -> Result<Vec<toml::Table>, String> {
    let file: toml::Table =
        toml::from_str(text).map_err(|e| format!("{}: {}", path.display(), e.message()))?;
    let tables = match file.get("zone") {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(tables)) => tables,
        Some(_) => return Err(format!("{}: `zone` is not a list of tables", path.display())),
    };
    let mut kept: Vec<Option<toml::Table>> = Vec::with_capacity(tables.len());
    let mut at: HashMap<Name, usize> = HashMap::new();
    for table in tables {
        let Some(table) = table.as_table() else {
            return Err(format!("{}: a zone that is not a table", path.display()));
        };
        let name = table_name(table).map_err(|e| format!("{}: {e}", path.display()))?;
        if added_file::is_removal(table.keys()) {
            if let Some(slot) = at.remove(&name).and_then(|i| kept.get_mut(i)) {
                *slot = None;
            }
            continue;
        }
        at.insert(name, kept.len());
        kept.push(Some(table.clone()));
    }
    Ok(kept.into_iter().flatten().collect())
}

/// The zone a table names (its `name` key).
fn table_name(table: &toml::Table) -> Result<Name, String> {
    match table.get("name").and_then(|n| n.as_str()) {
        Some(name) => parse_zone(name),
        None => Err("the zone table has no `name`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = crate::config::ADDED_ZONES;

    fn config_in(dir: &Path) -> Config {
        let zone = dir.join("a.zone");
        std::fs::write(&zone, "@ 300 SOA ns h 1 2 3 4 5\n@ 300 NS ns\nns 300 A 192.0.2.1\n")
            .unwrap();
        let text = format!(
            "[server]\nstorage = \"{}\"\n[[remote]]\nid = \"p\"\naddress = \"192.0.2.9\"\n\
             [[zone]]\nname = \"a.example\"\nfile = \"{}\"\n",
            dir.display(),
            zone.display()
        );
        let path = dir.join("ternd.toml");
        std::fs::write(&path, text).unwrap();
        Config::from_file(&path).unwrap()
    }

    /// The configuration as a start would read it now.
    fn restarted(config: &Config) -> Config {
        Config::from_file(config.path.as_ref().unwrap()).unwrap()
    }

    fn names(config: &Config) -> Vec<String> {
        let mut names: Vec<String> =
            config.resolved.zones.iter().map(|z| z.name.to_string()).collect();
        names.sort();
        names
    }

    /// The zones `count` tables name, `z{first}.example` on, all reading `a.zone`.
    fn tables(dir: &Path, first: usize, count: usize) -> Vec<String> {
        let file = dir.join("a.zone").display().to_string();
        (first..first + count)
            .map(|n| format!("name = \"z{n}.example\"\nfile = \"{file}\""))
            .collect()
    }

    /// Every zone is found by the index at its place, as one built afresh finds it.
    fn assert_in_step(config: &Config, index: &Index) {
        let zones = &config.resolved.zones;
        assert_eq!(index.listing(zones), Index::of(config).listing(zones));
        for (at, plan) in zones.iter().enumerate() {
            assert_eq!(index.position(zones, &plan.name), Some(at));
        }
    }

    /// The index built on a thread of its own after a start is the first change's.
    #[test]
    fn the_index_built_after_a_start_is_taken_by_the_first_change() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        add(&mut config, &mut index, &tables(dir.path(), 0, 3)).unwrap();
        let mut config = restarted(&config);
        let mut slot = IndexSlot::default();
        slot.build(&config);
        assert!(slot.is_building());
        assert_in_step(&config, slot.in_step(&config));
        assert!(!slot.is_building(), "taken");
        let index = slot.in_step(&config);
        remove(&mut config, index, &["z1.example".into()]).unwrap();
        let index = slot.in_step(&config);
        add(&mut config, index, &tables(dir.path(), 9, 2)).unwrap();
        assert_in_step(&config, slot.in_step(&config));
        assert_eq!(names(&restarted(&config)), names(&config));
    }

    /// An index built from other zones than those served when the first change comes is
    /// never taken, though it counts as many: zones changed in place meanwhile, or
    /// another configuration taken.
    #[test]
    fn an_index_built_from_other_zones_is_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        add(&mut config, &mut index, &tables(dir.path(), 0, 3)).unwrap();
        let mut slot = IndexSlot::default();
        slot.build(&config);
        let mut index = Index::of(&config);
        add(&mut config, &mut index, &tables(dir.path(), 7, 1)).unwrap();
        remove(&mut config, &mut index, &["z0.example".into()]).unwrap();
        assert_in_step(&config, slot.in_step(&config));
        slot.build(&config);
        let mut other = restarted(&config);
        let mut index = Index::of(&other);
        add(&mut other, &mut index, &tables(dir.path(), 8, 1)).unwrap();
        remove(&mut other, &mut index, &["z1.example".into()]).unwrap();
        assert_eq!(other.resolved.zones.len(), config.resolved.zones.len());
        assert_in_step(&other, slot.in_step(&other));
        slot.forget();
        assert!(!slot.is_building());
        assert_in_step(&config, slot.in_step(&config));
    }

    /// Zones with files of their own, removed in whatever order: the index follows each
    /// file to the position its zone moves to.
    #[test]
    fn files_of_their_own_follow_their_zones() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        let own = |n: usize| {
            let file = dir.path().join(format!("o{n}.zone")).display().to_string();
            format!("name = \"o{n}.example\"\nfile = \"{file}\"")
        };
        add(&mut config, &mut index, &(0..12).map(own).collect::<Vec<_>>()).unwrap();
        add(&mut config, &mut index, &tables(dir.path(), 0, 4)).unwrap();
        for n in [0, 11, 5, 6] {
            remove(&mut config, &mut index, &[format!("o{n}.example")]).unwrap();
            assert_in_step(&config, &index);
        }
        let secondary = |n: usize| {
            let file = dir.path().join(format!("o{n}.zone")).display().to_string();
            format!("name = \"s{n}.example\"\nfile = \"{file}\"\nprimary = \"p\"")
        };
        let why = add(&mut config, &mut index, &[secondary(3)]).unwrap_err();
        assert!(why.contains("zone o3.example. uses it too"), "{why}");
        add(&mut config, &mut index, &[secondary(5)]).unwrap();
        assert_in_step(&config, &index);
    }

    #[test]
    fn zones_are_added_kept_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        let file = dir.path().join("a.zone").display().to_string();
        let table = format!("name = \"b.example\"\nfile = \"{file}\"");
        let Change::Zones(plans, gone) =
            add(&mut config, &mut index, std::slice::from_ref(&table)).unwrap()
        else {
            panic!("added beside the others")
        };
        assert_eq!((plans.len(), gone.len(), config.resolved.zones.len()), (1, 0, 2));
        assert_eq!(plans[0].name, "b.example.".parse::<Name>().unwrap());
        let mut again = restarted(&config);
        assert_eq!(again.resolved.zones.len(), 2, "kept across restarts");
        assert_eq!(again.added_log, config.added_log);
        let mut index = Index::of(&again);
        let why = add(&mut again, &mut index, std::slice::from_ref(&table)).unwrap_err();
        assert!(why.contains("served already"), "{why}");
        let why = remove(&mut again, &mut index, &["a.example".into()]).unwrap_err();
        assert!(why.contains("remove it there"), "{why}");
        let change = remove(&mut again, &mut index, &["b.example.".into()]).unwrap();
        let Change::Zones(plans, gone) = change else { panic!("removed alone") };
        assert!(plans.is_empty());
        assert_eq!(gone, vec!["b.example.".parse::<Name>().unwrap()]);
        assert_eq!(again.resolved.zones.len(), 1);
        let why = remove(&mut again, &mut index, &["b.example".into()]).unwrap_err();
        assert!(why.contains("not served"), "{why}");
        assert_eq!(names(&restarted(&again)), ["a.example."]);
    }

    #[test]
    fn an_add_kept_while_its_files_are_checked_goes_on_as_prepared_unless_a_change_came() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        let prepared = prepare(&config, &mut index, &tables(dir.path(), 0, 2)).unwrap();
        assert!(prepared.checked_here(), "two small files");
        assert_eq!(prepared.new_zone_files().len(), 2);
        let mut checking = Checking::default();
        let ticket = checking.keep(prepared);
        let kept = checking.take(ticket).unwrap();
        assert!(checking.take(ticket).is_none(), "taken once");
        commit(&mut config, &mut index, kept).unwrap();
        assert_eq!(config.resolved.zones.len(), 3);
        assert_in_step(&config, &index);
        let other = checking.keep(prepare(&config, &mut index, &tables(dir.path(), 5, 1)).unwrap());
        checking.changed();
        assert!(checking.take(other).is_none(), "prepared again after a change");
        assert_eq!(names(&restarted(&config)), names(&config));
    }

    #[test]
    fn large_zone_files_are_checked_on_a_thread_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let mut index = Index::of(&config);
        let big = dir.path().join("big.zone");
        let mut text = String::from("@ 300 SOA ns h 1 2 3 4 5\n@ 300 NS ns\n");
        while text.len() as u64 <= CHECK_HERE_BYTES {
            text.push_str("www 300 A 192.0.2.1\n");
        }
        std::fs::write(&big, text).unwrap();
        let table = format!("name = \"big.example\"\nfile = \"{}\"", big.display());
        let prepared = prepare(&config, &mut index, &[table]).unwrap();
        assert!(!prepared.checked_here());
    }

    #[test]
    fn many_zones_are_added_and_removed_in_one_step_all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        add(&mut config, &mut index, &tables(dir.path(), 0, 100)).unwrap();
        assert_eq!(config.resolved.zones.len(), 101);
        let twice = [tables(dir.path(), 200, 1), tables(dir.path(), 200, 1)].concat();
        assert!(add(&mut config, &mut index, &twice).unwrap_err().contains("given twice"));
        let served = [tables(dir.path(), 300, 1), tables(dir.path(), 5, 1)].concat();
        let why = add(&mut config, &mut index, &served).unwrap_err();
        assert!(why.contains("z5.example. is served already"), "{why}");
        assert_eq!(config.resolved.zones.len(), 101, "nothing of the refused batches taken");
        let mut again = restarted(&config);
        assert_eq!(again.resolved.zones.len(), 101, "nothing of the refused batches written");
        let mut index = Index::of(&again);
        let some = vec!["z1.example".to_owned(), "z2.example".into(), "nope.example".into()];
        let why = remove(&mut again, &mut index, &some).unwrap_err();
        assert!(why.contains("nope.example. is not served"), "{why}");
        let zones: Vec<String> = (0..50).map(|n| format!("z{n}.example")).collect();
        remove(&mut again, &mut index, &zones).unwrap();
        assert_eq!(again.resolved.zones.len(), 51);
        assert_in_step(&again, &index);
        assert_eq!(names(&restarted(&again)), names(&again));
    }

    /// Removals take the last zone into the hole: the index follows, and the zones,
    /// their plans and a restart agree, whatever is removed in whatever order.
    #[test]
    fn removals_keep_the_index_the_plans_and_the_file_in_step() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        for first in [0, 10, 20] {
            add(&mut config, &mut index, &tables(dir.path(), first, 10)).unwrap();
        }
        for n in [29, 0, 15, 3, 28, 16] {
            remove(&mut config, &mut index, &[format!("z{n}.example")]).unwrap();
            assert_in_step(&config, &index);
        }
        // Added again after its removal: served once, kept once.
        add(&mut config, &mut index, &tables(dir.path(), 3, 1)).unwrap();
        assert_in_step(&config, &index);
        assert_eq!(config.resolved.zones.len(), 1 + 30 - 6 + 1);
        assert_eq!(names(&restarted(&config)), names(&config));
    }

    /// A crash while a change is appended: the change was never acknowledged, a start
    /// ignores it, and the next change cuts it off; every acknowledged zone stays.
    #[test]
    fn a_torn_append_loses_no_acknowledged_zone() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        add(&mut config, &mut index, &tables(dir.path(), 0, 2)).unwrap();
        remove(&mut config, &mut index, &["z0.example".into()]).unwrap();
        let path = dir.path().join(FILE);
        let whole = std::fs::read_to_string(&path).unwrap();
        let torn = "[[zone]]\nname = \"torn.example\"\nfile = \"/x\"\n#@ 12";
        std::fs::write(&path, format!("{whole}{torn}")).unwrap();
        let mut again = restarted(&config);
        assert_eq!(names(&again), ["a.example.", "z1.example."]);
        assert_eq!(again.added_log.committed, whole.len() as u64);
        let mut index = Index::of(&again);
        add(&mut again, &mut index, &tables(dir.path(), 7, 1)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("torn.example"), "cut off: {text}");
        assert_eq!(names(&restarted(&again)), ["a.example.", "z1.example.", "z7.example."]);
    }

    /// Damage (a change whose check fails, with changes after it) is not taken for a torn
    /// append: the file is refused, saying where, rather than acknowledged zones dropped.
    #[test]
    fn a_damaged_file_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        add(&mut config, &mut index, &tables(dir.path(), 10, 1)).unwrap();
        add(&mut config, &mut index, &tables(dir.path(), 20, 1)).unwrap();
        let path = dir.path().join(FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("z10.example", "z11.example")).unwrap();
        let why = Config::from_file(config.path.as_ref().unwrap()).unwrap_err().to_string();
        assert!(why.contains(FILE) && why.contains("damaged"), "{why}");
    }

    /// A file written whole before marks is read as it was, and rewritten once with a
    /// mark at the first change.
    #[test]
    fn a_file_of_the_form_before_marks_is_read_and_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let file = dir.path().join("a.zone").display().to_string();
        let old = format!("[[zone]]\nname = \"old.example.\"\nfile = \"{file}\"\n");
        std::fs::write(dir.path().join(FILE), &old).unwrap();
        let mut config = restarted(&config);
        assert_eq!(names(&config), ["a.example.", "old.example."]);
        assert!(!config.added_log.marked);
        let mut index = Index::of(&config);
        add(&mut config, &mut index, &tables(dir.path(), 1, 1)).unwrap();
        assert!(config.added_log.marked);
        assert_eq!(names(&restarted(&config)), ["a.example.", "old.example.", "z1.example."]);
    }

    /// Once the zones removed outweigh those kept, the file is rewritten with those kept.
    #[test]
    fn a_worn_file_is_rewritten_with_the_zones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        add(&mut config, &mut index, &tables(dir.path(), 0, 1500)).unwrap();
        let zones: Vec<String> = (0..1200).map(|n| format!("z{n}.example")).collect();
        remove(&mut config, &mut index, &zones).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(text.matches("[[zone]]").count(), 300, "rewritten");
        assert!(!text.contains("removed"));
        assert_eq!(config.added_log.tables, 300);
        assert_eq!(names(&restarted(&config)), names(&config));
        assert_in_step(&config, &index);
    }

    #[test]
    fn a_file_used_by_a_secondary_is_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        let copy = dir.path().join("copy.zone").display().to_string();
        let secondary = |n: &str| format!("name = \"{n}\"\nfile = \"{copy}\"\nprimary = \"p\"");
        add(&mut config, &mut index, &[secondary("s1.example")]).unwrap();
        let why = add(&mut config, &mut index, &[secondary("s2.example")]).unwrap_err();
        assert!(why.contains("uses it too"), "{why}");
        let shared = dir.path().join("a.zone").display().to_string();
        let why = add(
            &mut config,
            &mut index,
            &[format!("name = \"s3.example\"\nfile = \"{shared}\"\nprimary = \"p\"")],
        )
        .unwrap_err();
        assert!(why.contains("zone a.example. uses it too"), "{why}");
        remove(&mut config, &mut index, &["s1.example".into()]).unwrap();
        add(&mut config, &mut index, &[secondary("s2.example")]).unwrap();
        assert_in_step(&config, &index);
    }

    /// No value can write a line of its own (one that could pass for a mark).
    #[test]
    fn a_value_never_takes_a_line_of_its_own() {
        let mut table = toml::Table::new();
        table.insert("name".into(), toml::Value::String("x.example".into()));
        table.insert("comment".into(), toml::Value::String("a\n#@ 00000000\n[[zone]]".into()));
        let mut out = String::new();
        match write_table(&table, &mut out) {
            Ok(()) => assert_eq!(out.lines().count(), 3, "{out}"),
            Err(why) => assert!(why.contains("more than one line"), "{why}"),
        }
        assert!(out.lines().all(|l| !l.starts_with('#')), "{out}");
    }

    #[test]
    fn percent_s_in_a_file_is_the_zones_stem_and_never_leads_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        let pattern = dir.path().join("%s.zone").display().to_string();
        let names = ["b.example", "C.Example.", "d/e.example", "\\.\\..example", "x"];
        let tables: Vec<String> =
            names.iter().map(|n| format!("name = {n:?}\nfile = {pattern:?}\n")).collect();
        add(&mut config, &mut index, &tables).unwrap();
        let path = dir.path().join(FILE);
        let written = read_tables(&std::fs::read_to_string(&path).unwrap(), &path).unwrap();
        let files: Vec<&str> = written.iter().map(|t| t["file"].as_str().unwrap()).collect();
        let at = |stem: &str| dir.path().join(format!("{stem}.zone")).display().to_string();
        let expected =
            [at("b.example"), at("c.example"), at("d%2fe.example"), at("%2e%2e.example"), at("x")];
        assert_eq!(files, expected, "a name never leads into another directory");
    }

    #[test]
    fn a_bad_table_is_refused_with_its_line_and_nothing_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        let bad = ["name = \"c.example\"\ntemplate = \"nope\"".into()];
        let why = add(&mut config, &mut index, &bad).unwrap_err();
        assert!(why.contains(FILE) && why.contains("nope"), "{why}");
        assert!(!dir.path().join(FILE).exists());
        let why = add(&mut config, &mut index, &["file = \"x\"".into()]).unwrap_err();
        assert!(why.contains("no `name`"), "{why}");
    }

    /// A zone added at run time may not name a script: it would run a file the API
    /// client chose, and a failing script's error quotes the file (`/etc/shadow`).
    #[test]
    fn a_zone_added_at_run_time_names_no_script() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        let mut index = Index::of(&config);
        for extra in
            ["script = \"/etc/shadow\"", "script-max-memory = \"1M\"", "database = \"pdns\""]
        {
            let table = format!("name = \"s.example\"\n{extra}");
            let why = add(&mut config, &mut index, &[table]).unwrap_err();
            assert!(why.contains("not zones added at run time"), "{why}");
        }
        assert!(!dir.path().join(FILE).exists());
    }
}
