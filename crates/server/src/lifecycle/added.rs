//! Zones added and removed at run time (`ternctl zone-add`, `zone-remove`).
//!
//! They are kept in the storage directory's `zones-added.toml` ([`ADDED_ZONES`](crate::config::ADDED_ZONES)), one
//! `[[zone]]` table each, and read after the configuration file at every start and
//! reload ([`Config::from_file`]). A change is checked by reading the whole
//! configuration with it ([`prepare`]); an addition's new primary zones then have their
//! files loaded once off the main thread (the caller does this, see
//! `lifecycle::Steering::zone_add`), so that a zone that would not load adds nothing —
//! all or none. Then it is written atomically and applied as a reload is — so the zone
//! set changes copy-on-write and the other zones keep answering. A removed zone's
//! journal and kept copy stay on disk.
//!
//! A table arrives as text (from `ternctl` or the API) and is never written as given:
//! it is parsed, checked to hold only a zone's keys, its `file` confined to
//! `added-zone-dirs` ([`files::confine`]), and written again one key a line with its
//! value in TOML's inline form — so no value (a key holding a newline, a string holding
//! `[[zone]]`) can add a table or a key to the file.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize as _;
use tern_wire::Name;

use crate::config::{files, Config, Role, ZoneConfig, ZoneSource};
use crate::ctl::listen::parse_zone;
use tern_control::plan::ZonePlan;
use tern_control::storage;

/// The configuration with the zones of `tables` more (all or none), and the file's new
/// text, written.
pub fn add(config: &Config, tables: &[String]) -> Result<Prepared, String> {
    let prepared = prepare(config, tables)?;
    write(&prepared.path, &prepared.text)?;
    Ok(prepared)
}

/// What `zone-add` would make of `tables`, nothing written yet.
#[derive(Debug)]
pub struct Prepared {
    /// The configuration with the zones added.
    pub next: Config,
    /// The file of added zones' new text.
    pub text: String,
    /// That file.
    pub path: PathBuf,
    /// The new zones' plans, when nothing else changed (no catalog produced here gains
    /// a member): the zones can be added to those served, the others untouched
    /// ([`crate::lifecycle::plane::Plane::change`]). `None`: apply the whole set.
    pub added: Option<Vec<Arc<ZonePlan>>>,
}

impl Prepared {
    /// The zone files the new primary zones load, to check before anything is kept.
    pub fn new_zone_files(&self, config: &Config) -> Vec<(Name, PathBuf)> {
        let served: HashSet<&Name> = config.zones.iter().map(|z| &z.name).collect();
        let plans = self.next.resolved.zones.iter().filter(|p| !served.contains(&p.name));
        plans
            .filter(|p| matches!(p.role, Role::Primary))
            .filter_map(|p| match &p.source {
                ZoneSource::File(path) => Some((p.name.clone(), path.clone())),
                _ => None,
            })
            .collect()
    }
}

/// The configuration with the zones of `tables` more (all or none) and the file's new
/// text, checked but not written.
pub fn prepare(config: &Config, tables: &[String]) -> Result<Prepared, String> {
    if tables.is_empty() {
        return Err("no zone to add".into());
    }
    let (main, path, added_path, current) = files(config)?;
    let served: HashSet<&Name> = config.zones.iter().map(|z| &z.name).collect();
    let dirs = config.added_zone_dirs();
    let mut names = HashSet::new();
    let mut checked = Vec::with_capacity(tables.len());
    for table in tables {
        let table = checked_table(table, &dirs)?;
        let name = table_name(&table)?;
        if served.contains(&name) {
            return Err(format!("{name} is served already"));
        }
        if !names.insert(name.clone()) {
            return Err(format!("{name} is given twice"));
        }
        checked.push(table);
    }
    let from = current.len();
    let mut text = current;
    for table in &checked {
        text.push_str(separator(&text));
        write_table(table, &mut text);
    }
    let quick = config.with_added(&text, from, &added_path);
    let incremental = matches!(quick, Some(Ok(_)));
    let next = match quick {
        Some(next) => next,
        None => Config::read(&main, &path, Some((&text, &added_path))),
    }
    .map_err(|e| e.to_string())?;
    // `with_added` puts the new zones' plans after the others'.
    let added = incremental
        .then(|| next.resolved.zones.get(config.resolved.zones.len()..).map(<[_]>::to_vec))
        .flatten();
    Ok(Prepared { next, text, path: added_path, added })
}

/// The configuration without `zones` (all or none), which must have been added at run
/// time, and the zones removed when nothing else changed (none was a catalog's member
/// or producer: the others can be left untouched; `None`: apply the whole set).
pub fn remove(config: &Config, zones: &[String]) -> Result<(Config, Option<Vec<Name>>), String> {
    let (main, path, added_path, current) = files(config)?;
    let mut gone = HashSet::new();
    for zone in zones {
        gone.insert(parse_zone(zone)?);
    }
    let tables = read_tables(&current, &added_path)?;
    let (kept, dropped): (Vec<&toml::Table>, Vec<&toml::Table>) =
        tables.iter().partition(|t| table_name(t).map_or(true, |n| !gone.contains(&n)));
    let added: HashSet<Name> = dropped.iter().filter_map(|t| table_name(t).ok()).collect();
    if let Some(name) = gone.iter().find(|n| !added.contains(*n)) {
        return Err(match config.zones.iter().any(|z| z.name == *name) {
            true => format!("{name} is in {}: remove it there and reload", path.display()),
            false => format!("{name} is not served here"),
        });
    }
    let mut text = String::new();
    for table in kept {
        text.push_str(separator(&text));
        write_table(table, &mut text);
    }
    let next = match config.without(&gone) {
        Some(next) => (next, Some(gone.into_iter().collect())),
        None => {
            let next = Config::read(&main, &path, Some((&text, &added_path)));
            (next.map_err(|e| e.to_string())?, None)
        }
    };
    write(&added_path, &text)?;
    Ok(next)
}

/// The configuration file's text and path, the added zones' path and text.
fn files(config: &Config) -> Result<(String, PathBuf, PathBuf, String), String> {
    let (Some(path), Some(added)) = (config.path.clone(), config.added_zones_path()) else {
        return Err("zones can be added only to a server started with a configuration file".into());
    };
    let main = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let current = match std::fs::read_to_string(&added) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("{}: {e}", added.display())),
    };
    Ok((main, path, added, current))
}

fn separator(text: &str) -> &'static str {
    match text.is_empty() || text.ends_with("\n\n") {
        true => "",
        false => "\n",
    }
}

/// A table given to `zone-add`, checked (see the module comment): TOML holding only a
/// zone's keys, with a `file` inside `dirs` once its `%s` is filled in.
fn checked_table(text: &str, dirs: &[PathBuf]) -> Result<toml::Table, String> {
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
        Some(toml::Value::String(file)) => drop(files::confine(Path::new(file), dirs)?),
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
fn write_table(table: &toml::Table, out: &mut String) {
    out.push_str("[[zone]]\n");
    for (key, value) in table {
        let bare = !key.is_empty()
            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let key = match bare {
            true => key.clone(),
            false => toml::Value::String(key.clone()).to_string(),
        };
        let _ = writeln!(out, "{key} = {value}");
    }
}

/// The `[[zone]]` tables of the file of added zones.
fn read_tables(text: &str, path: &Path) -> Result<Vec<toml::Table>, String> {
    let file: toml::Table =
        toml::from_str(text).map_err(|e| format!("{}: {}", path.display(), e.message()))?;
    match file.get("zone") {
        None => Ok(Vec::new()),
        Some(toml::Value::Array(tables)) => tables
            .iter()
            .map(|t| {
                t.as_table()
                    .cloned()
                    .ok_or_else(|| format!("{}: a zone that is not a table", path.display()))
            })
            .collect(),
        Some(_) => Err(format!("{}: `zone` is not a list of tables", path.display())),
    }
}

/// The zone a table names (its `name` key).
fn table_name(table: &toml::Table) -> Result<Name, String> {
    match table.get("name").and_then(|n| n.as_str()) {
        Some(name) => parse_zone(name),
        None => Err("the zone table has no `name`".into()),
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write as _;
    storage::replace(path, |out| out.write_all(text.as_bytes()))
        .map_err(|e| format!("{} not written: {e}", path.display()))
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
            "[server]\nstorage = \"{}\"\n[[zone]]\nname = \"a.example\"\nfile = \"{}\"\n",
            dir.display(),
            zone.display()
        );
        let path = dir.join("ternd.toml");
        std::fs::write(&path, text).unwrap();
        Config::from_file(&path).unwrap()
    }

    #[test]
    fn zones_are_added_kept_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let file = dir.path().join("a.zone").display().to_string();
        let table = format!("name = \"b.example\"\nfile = \"{file}\"");
        let added = add(&config, std::slice::from_ref(&table)).unwrap();
        assert_eq!(added.next.zones.len(), 2);
        let plans = added.added.expect("added beside the others");
        assert_eq!(plans.len(), 1);
        assert_eq!(plans[0].name, "b.example.".parse::<Name>().unwrap());
        let again = Config::from_file(config.path.as_ref().unwrap()).unwrap();
        assert_eq!(again.zones.len(), 2, "kept across restarts");
        assert!(add(&again, std::slice::from_ref(&table)).unwrap_err().contains("served already"));
        assert!(remove(&again, &["a.example".into()]).unwrap_err().contains("remove it there"));
        let (fewer, gone) = remove(&again, &["b.example.".into()]).unwrap();
        assert_eq!(fewer.zones.len(), 1);
        assert_eq!(gone, Some(vec!["b.example.".parse::<Name>().unwrap()]));
        assert!(remove(&fewer, &["b.example".into()]).unwrap_err().contains("not served"));
    }

    #[test]
    fn many_zones_are_added_and_removed_in_one_step_all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let file = dir.path().join("a.zone").display().to_string();
        let table = |n: usize| format!("name = \"z{n}.example\"\nfile = \"{file}\"");
        let tables: Vec<String> = (0..100).map(table).collect();
        let next = add(&config, &tables).unwrap().next;
        assert_eq!(next.zones.len(), 101);
        let twice = vec![table(200), table(200)];
        assert!(add(&next, &twice).unwrap_err().contains("given twice"));
        let served = vec![table(300), table(5)];
        assert!(add(&next, &served).unwrap_err().contains("z5.example. is served already"));
        let again = Config::from_file(config.path.as_ref().unwrap()).unwrap();
        assert_eq!(again.zones.len(), 101, "nothing of the refused batches written");
        let some = vec!["z1.example".to_owned(), "z2.example".into(), "nope.example".into()];
        assert!(remove(&again, &some).unwrap_err().contains("nope.example. is not served"));
        let zones: Vec<String> = (0..50).map(|n| format!("z{n}.example")).collect();
        assert_eq!(remove(&again, &zones).unwrap().0.zones.len(), 51);
        assert_eq!(Config::from_file(config.path.as_ref().unwrap()).unwrap().zones.len(), 51);
    }

    #[test]
    fn percent_s_in_a_file_is_the_zones_stem_and_never_leads_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let pattern = dir.path().join("%s.zone").display().to_string();
        let names = ["b.example", "C.Example.", "d/e.example", "\\.\\..example", "x"];
        let tables: Vec<String> =
            names.iter().map(|n| format!("name = {n:?}\nfile = {pattern:?}\n")).collect();
        let text = add(&config, &tables).unwrap().text;
        let written = read_tables(&text, Path::new(FILE)).unwrap();
        let files: Vec<&str> = written.iter().map(|t| t["file"].as_str().unwrap()).collect();
        let at = |stem: &str| dir.path().join(format!("{stem}.zone")).display().to_string();
        let expected =
            [at("b.example"), at("c.example"), at("d%2fe.example"), at("%2e%2e.example"), at("x")];
        assert_eq!(files, expected, "a name never leads into another directory");
    }

    #[test]
    fn a_bad_table_is_refused_with_its_line_and_nothing_written() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let why = add(&config, &["name = \"c.example\"\ntemplate = \"nope\"".into()]).unwrap_err();
        assert!(why.contains(FILE) && why.contains("nope"), "{why}");
        assert!(!dir.path().join(FILE).exists());
        assert!(add(&config, &["file = \"x\"".into()]).unwrap_err().contains("no `name`"));
    }

    /// A zone added at run time may not name a script: it would run a file the API
    /// client chose, and a failing script's error quotes the file (`/etc/shadow`).
    #[test]
    fn a_zone_added_at_run_time_names_no_script() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        for extra in
            ["script = \"/etc/shadow\"", "script-max-memory = \"1M\"", "database = \"pdns\""]
        {
            let table = format!("name = \"s.example\"\n{extra}");
            let why = add(&config, &[table]).unwrap_err();
            assert!(why.contains("not zones added at run time"), "{why}");
        }
        assert!(!dir.path().join(FILE).exists());
    }
}
