//! Zones added and removed at run time (`ternctl zone-add`, `zone-remove`).
//!
//! They are kept in the storage directory's `zones-added.toml` ([`ADDED_ZONES`](crate::config::ADDED_ZONES)), one
//! `[[zone]]` table each, exactly as given, and read after the configuration file at
//! every start and reload ([`Config::from_file`]). A change is checked by reading the
//! whole configuration with it, written atomically, and then applied as a reload is —
//! so the zone set changes copy-on-write and the other zones keep answering. A removed
//! zone's journal and kept copy stay on disk.

use std::path::Path;

use tern_wire::Name;

use crate::config::Config;
use crate::control::storage;
use crate::ctl::listen::parse_zone;

/// The configuration with one zone more, and the file's new text.
pub fn add(config: &Config, table: &str) -> Result<(Config, String), String> {
    let (main, path, added_path, current) = files(config)?;
    let name = table_zone(table)?;
    if config.zones.iter().any(|z| z.name == name) {
        return Err(format!("{name} is served already"));
    }
    let text = format!("{current}{}[[zone]]\n{}\n", separator(&current), table.trim());
    let next = Config::read(&main, &path, Some((&text, &added_path))).map_err(|e| e.to_string())?;
    write(&added_path, &text)?;
    Ok((next, text))
}

/// The configuration without `zone`, which must have been added at run time.
pub fn remove(config: &Config, zone: &str) -> Result<Config, String> {
    let (main, path, added_path, current) = files(config)?;
    let name = parse_zone(zone)?;
    let blocks = split(&current);
    let kept: Vec<&str> = blocks
        .iter()
        .copied()
        .filter(|block| table_zone(block).map_or(true, |n| n != name))
        .collect();
    if kept.len() == blocks.len() {
        return Err(match config.zones.iter().any(|z| z.name == name) {
            true => format!("{name} is in {}: remove it there and reload", path.display()),
            false => format!("{name} is not served here"),
        });
    }
    let text: String = kept.iter().map(|b| format!("[[zone]]\n{}\n\n", b.trim())).collect();
    let next = Config::read(&main, &path, Some((&text, &added_path))).map_err(|e| e.to_string())?;
    write(&added_path, &text)?;
    Ok(next)
}

/// The configuration file's text and path, the added zones' path and text.
fn files(
    config: &Config,
) -> Result<(String, std::path::PathBuf, std::path::PathBuf, String), String> {
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

/// The tables of the file, each without its `[[zone]]` line.
fn split(text: &str) -> Vec<&str> {
    text.split("[[zone]]").map(str::trim).filter(|b| !b.is_empty()).collect()
}

/// The zone a table names (its `name` key).
fn table_zone(table: &str) -> Result<Name, String> {
    let parsed: toml::Table =
        toml::from_str(table).map_err(|e| format!("not a zone table: {}", e.message()))?;
    match parsed.get("name").and_then(|n| n.as_str()) {
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
        let (next, _) = add(&config, &table).unwrap();
        assert_eq!(next.zones.len(), 2);
        let again = Config::from_file(config.path.as_ref().unwrap()).unwrap();
        assert_eq!(again.zones.len(), 2, "kept across restarts");
        assert!(add(&again, &table).unwrap_err().contains("served already"));
        assert!(remove(&again, "a.example").unwrap_err().contains("remove it there"));
        let fewer = remove(&again, "b.example.").unwrap();
        assert_eq!(fewer.zones.len(), 1);
        assert!(remove(&fewer, "b.example").unwrap_err().contains("not served"));
    }

    #[test]
    fn a_bad_table_is_refused_with_its_line_and_nothing_written() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let why = add(&config, "name = \"c.example\"\ntemplate = \"nope\"").unwrap_err();
        assert!(why.contains(FILE) && why.contains("nope"), "{why}");
        assert!(!dir.path().join(FILE).exists());
        assert!(add(&config, "file = \"x\"").unwrap_err().contains("no `name`"));
    }
}
