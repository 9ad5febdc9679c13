//! Zones whose records live in PostgreSQL (`[[zone]] database`), in PowerDNS's generic
//! PostgreSQL schema (`domains`, `records`), so that a PowerDNS user can point Tern at
//! the same database: what a database is ([`Database`]), as a zone's plan names it.
//! [`crate::database_load`] reads a zone's rows, [`crate::database_follow`] follows
//! the database's changes.
//!
//! A zone is read whole at every load — the start, `ternctl zone-reload`, and each
//! notification the database sends when its rows change — and loaded into memory: no
//! query goes to the database at answer time. The primary's load path commits the
//! difference from the served version like any other change (journal, IXFR out,
//! NOTIFY), the serial raised by the zone's serial policy when the database's SOA does
//! not raise it. A load that fails (the database down, a zone without an SOA) keeps
//! what the zone served.

use std::sync::{Arc, Mutex};

use tern_wire::Name;
use tokio_postgres::Client;

/// A database zones are read from (`[[database]]`), and the connection its loads share
/// (queries on one connection are pipelined; a new one is made when it breaks).
#[derive(Clone)]
pub struct Database {
    /// Its name in the configuration.
    pub id: String,
    /// How to connect: a libpq connection string or URL.
    pub url: String,
    /// What a row that does not read does.
    pub on_bad_row: OnBadRow,
    /// The connection of the loads ([`crate::database_load`]), once made.
    pub(crate) client: Arc<Mutex<Option<Arc<Client>>>>,
}

impl Database {
    /// The database `id` at `url`, not connected yet.
    pub fn new(id: String, url: String, on_bad_row: OnBadRow) -> Database {
        Database { id, url, on_bad_row, client: Arc::default() }
    }

    /// What the configuration says (the connection aside).
    fn settings(&self) -> (&str, &str, OnBadRow) {
        (&self.id, &self.url, self.on_bad_row)
    }
}

impl PartialEq for Database {
    fn eq(&self, other: &Database) -> bool {
        self.settings() == other.settings()
    }
}

impl Eq for Database {}

impl std::hash::Hash for Database {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.settings().hash(state);
    }
}

/// The connection string may hold a password: only the id is shown.
impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("id", &self.id)
            .field("on_bad_row", &self.on_bad_row)
            .finish_non_exhaustive()
    }
}

/// What a row that does not read does to its zone's load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnBadRow {
    /// It is reported (table and id) and left out; the rest loads.
    #[default]
    Skip,
    /// It is reported and the load refused: the zone keeps what it served.
    Refuse,
}

/// A zone's name as PowerDNS stores it: lower case, without the trailing dot.
pub fn powerdns_name(origin: &Name) -> String {
    let text = origin.to_string().to_ascii_lowercase();
    match text.strip_suffix('.') {
        Some("") | None => text,
        Some(stripped) => stripped.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_names_are_written_as_powerdns_stores_them() {
        let name = |text: &str| powerdns_name(&text.parse().unwrap());
        assert_eq!(name("Example.COM."), "example.com");
        assert_eq!(name("."), ".");
    }

    #[test]
    fn the_connection_string_is_not_shown_and_not_compared() {
        let url = "postgres://tern:secret@db/dns".to_owned();
        let database = Database::new("main".into(), url.clone(), OnBadRow::Skip);
        let shown = format!("{database:?}");
        assert!(shown.contains("main") && !shown.contains("secret"), "{shown}");
        let other = Database::new("main".into(), url, OnBadRow::Skip);
        assert_eq!(database, other, "the same settings, whatever their connections");
        assert_ne!(database, Database::new("main".into(), String::new(), OnBadRow::Skip));
    }
}
