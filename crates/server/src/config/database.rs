//! `[[database]]`: the databases zones are read from (`[[zone]] database = "ID"`, see
//! [`tern_control::database`]), and how a zone's reference to one is resolved.
//!
//! A zone names its database by id; the table is read before or after the zone, so a
//! zone first holds a stand-in with the id alone, replaced once every table is read.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use tern_control::database::{Database, OnBadRow};
use toml::Spanned;

use super::{ZoneConfig, ZoneSource};

/// A `[[database]]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DatabaseConfig {
    /// The name zones use for it.
    pub id: String,
    /// How to connect: a libpq connection string (`host=… dbname=… user=…`) or URL
    /// (`postgresql://user@host/dbname`).
    pub url: String,
    /// The tables' layout: `"powerdns"`, PowerDNS's generic PostgreSQL schema.
    #[serde(default)]
    pub schema: Schema,
    /// What a row that does not read does: `"skip"` it (reported), or `"refuse"` the
    /// zone's load (the zone keeps what it served).
    #[serde(default)]
    pub on_bad_row: BadRow,
}

/// `schema`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schema {
    /// PowerDNS's generic PostgreSQL schema (`domains`, `records`).
    #[default]
    Powerdns,
}

/// `on-bad-row`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BadRow {
    /// Left out, reported with its table and id.
    #[default]
    Skip,
    /// The load refused.
    Refuse,
}

/// A zone's `database = "ID"`, before the databases are all read.
pub(super) fn reference(id: &str) -> ZoneSource {
    ZoneSource::Database(Arc::new(Database::new(id.to_owned(), String::new(), OnBadRow::Skip)))
}

/// The databases by id, checked (ids unique and not empty, URLs given).
pub(super) fn by_id(
    tables: &[Spanned<DatabaseConfig>],
    errors: &mut Vec<(Option<Range<usize>>, String)>,
) -> HashMap<String, Arc<Database>> {
    let mut found = HashMap::new();
    for table in tables {
        let config = table.get_ref();
        let why = match () {
            _ if config.id.is_empty() => Some("a database's `id` is empty".to_owned()),
            _ if config.url.is_empty() => Some(format!("database {}: `url` is empty", config.id)),
            _ if found.contains_key(&config.id) => {
                Some(format!("database {} is listed twice", config.id))
            }
            _ => None,
        };
        if let Some(why) = why {
            errors.push((Some(table.span()), why));
            continue;
        }
        let on_bad_row = match config.on_bad_row {
            BadRow::Skip => OnBadRow::Skip,
            BadRow::Refuse => OnBadRow::Refuse,
        };
        let database = Database::new(config.id.clone(), config.url.clone(), on_bad_row);
        found.insert(config.id.clone(), Arc::new(database));
    }
    found
}

/// Replaces the zone's stand-in ([`reference`]) with the database of its id; a zone
/// naming none of them is an error (to be shown at its table).
pub(super) fn attach(
    zone: &mut ZoneConfig,
    databases: &HashMap<String, Arc<Database>>,
) -> Result<(), String> {
    let Some(ZoneSource::Database(named)) = &mut zone.source else { return Ok(()) };
    match databases.get(&named.id) {
        Some(database) => {
            *named = Arc::clone(database);
            Ok(())
        }
        None => Err(format!("zone {}: no `[[database]]` has id {:?}", zone.name, named.id)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::Config;
    use super::*;

    fn parse(text: &str) -> crate::error::Result<Config> {
        Config::from_text(text, Path::new("/etc/tern/ternd.toml"))
    }

    fn error(text: &str) -> String {
        match parse(text) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("read: {text}"),
        }
    }

    const DATABASE: &str = "[[database]]\nid = \"pdns\"\nurl = \"host=/run/postgresql\"\n";

    #[test]
    fn a_zone_reads_the_database_of_its_id_declared_before_or_after_it() {
        let zone = "[[zone]]\nname = \"d.example\"\ndatabase = \"pdns\"\n";
        for text in
            [format!("{DATABASE}{zone}"), format!("{zone}{DATABASE}on-bad-row = \"refuse\"\n")]
        {
            let config = parse(&text).unwrap_or_else(|e| panic!("{e}"));
            let ZoneSource::Database(database) = &config.resolved.zones[0].source else {
                panic!("not a database zone: {:?}", config.resolved.zones[0].source)
            };
            assert_eq!(
                (database.id.as_str(), database.url.as_str()),
                ("pdns", "host=/run/postgresql")
            );
        }
        let config = parse(&format!("{zone}{DATABASE}on-bad-row = \"refuse\"\n")).unwrap();
        let ZoneSource::Database(database) = &config.resolved.zones[0].source else { panic!() };
        assert_eq!(database.on_bad_row, OnBadRow::Refuse);
    }

    #[test]
    fn a_database_zone_is_checked() {
        let zone = |extra: &str| format!("{DATABASE}[[zone]]\nname = \"d.example\"\n{extra}");
        let unknown = error(&zone("database = \"other\"\n"));
        assert!(unknown.contains("no `[[database]]` has id \"other\""), "{unknown}");
        let both = error(&zone("database = \"pdns\"\nfile = \"d.zone\"\n"));
        assert!(both.contains("a zone has one source"), "{both}");
        let secondary = error(&format!(
            "[[remote]]\nid = \"p\"\naddress = \"192.0.2.1\"\n{}",
            zone("database = \"pdns\"\nprimary = \"p\"\n")
        ));
        assert!(secondary.contains("`database` is for primary zones"), "{secondary}");
        let twice = error(&format!("{DATABASE}{DATABASE}"));
        assert!(twice.contains("database pdns is listed twice"), "{twice}");
        let no_url = error("[[database]]\nid = \"x\"\nurl = \"\"\n");
        assert!(no_url.contains("`url` is empty"), "{no_url}");
        let schema = error(&format!("{DATABASE}schema = \"bind\"\n"));
        assert!(schema.contains("unknown variant") && schema.contains("powerdns"), "{schema}");
    }
}
