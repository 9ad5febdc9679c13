//! Zones whose records live in PostgreSQL (`[[zone]] database`), in PowerDNS's generic
//! PostgreSQL schema (`domains`, `records`), so that a PowerDNS user can point Tern at
//! the same database.
//!
//! A zone is read whole at every load — the start, `ternctl zone-reload`, and each
//! notification the database sends when its rows change ([`follow`]) — and loaded into
//! memory: no query goes to the database at answer time. The rows are read as
//! zone-file text would be ([`rows`]), and the primary's load path commits their
//! difference from the served version like any other change (journal, IXFR out,
//! NOTIFY), the serial raised by the zone's serial policy when the database's SOA does
//! not raise it. A load that fails (the database down, a zone without an SOA) keeps
//! what the zone served.
//!
//! What is read of PowerDNS's schema: the `records` rows of the zone's `domains` row
//! (by its `name`, as PowerDNS stores it: lower case, no trailing dot) with a type and
//! not `disabled`; `name`, `type`, `content`, `ttl` (3600 when NULL) and `prio` (put
//! before the content of MX and SRV, as PowerDNS does). `ordername` and `auth` are
//! ignored: Tern finds the zone's cuts and DNSSEC order itself. Rows with no type
//! (PowerDNS's empty non-terminals) are skipped.

pub mod follow;
pub mod rows;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio_postgres::Client;

use tern_wire::Name;
use tern_zone::Loaded;

use crate::error::Error;
use crate::writer::Writer;

pub use follow::Followers;

/// How long connecting, and reading a zone's rows, may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most rows a zone may have.
pub const MAX_ROWS: i64 = 50_000_000;

/// The rows of one zone, in PowerDNS's schema.
const ZONE_ROWS: &str = "SELECT r.id::bigint, r.name::text, r.type::text, r.content::text, \
     r.ttl::bigint, r.prio::bigint FROM records r JOIN domains d ON d.id = r.domain_id \
     WHERE d.name = $1 AND NOT coalesce(r.disabled, false) AND coalesce(r.type, '') <> '' \
     ORDER BY r.id LIMIT $2";

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
    client: Arc<Mutex<Option<Arc<Client>>>>,
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

    /// The shared connection, made when there is none or it broke.
    async fn client(&self) -> Result<Arc<Client>, Error> {
        let cached = self.client.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(client) = cached.filter(|c| !c.is_closed()) {
            return Ok(client);
        }
        let connecting = tokio_postgres::connect(&self.url, tokio_postgres::NoTls);
        let late = |_| fail(self, format!("no answer within {TIMEOUT:?}"));
        let (client, connection) = tokio::time::timeout(TIMEOUT, connecting)
            .await
            .map_err(late)?
            .map_err(|e| fail(self, e.to_string()))?;
        // The connection ends when the client is dropped, or the server goes.
        tokio::spawn(connection);
        let client = Arc::new(client);
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&client));
        Ok(client)
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

/// Reads `origin`'s rows from `database` and loads them (on a blocking thread of a
/// tokio runtime, as the primary's loads run).
pub fn load(database: &Database, origin: &Name) -> Result<Loaded, Error> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|e| fail(database, format!("no runtime to read the database on: {e}")))?;
    let read = runtime.block_on(fetch(database, origin))?;
    rows::read(database, origin, &read)
}

/// `origin`'s rows, in one query (one snapshot of the database).
async fn fetch(database: &Database, origin: &Name) -> Result<Vec<rows::Row>, Error> {
    let why = |e: tokio_postgres::Error| fail(database, e.to_string());
    let late = |_| fail(database, format!("no answer within {TIMEOUT:?}"));
    let client = database.client().await?;
    let name = powerdns_name(origin);
    let limit = MAX_ROWS + 1;
    let parameters: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&name, &limit];
    let query = client.query(ZONE_ROWS, &parameters);
    let found = tokio::time::timeout(TIMEOUT, query).await.map_err(late)?.map_err(why)?;
    if found.len() as u64 > MAX_ROWS as u64 {
        return Err(fail(database, format!("zone {origin} has more than {MAX_ROWS} rows")));
    }
    found.iter().map(|row| rows::Row::from_sql(row).map_err(why)).collect()
}

/// A zone's name as PowerDNS stores it: lower case, without the trailing dot.
pub fn powerdns_name(origin: &Name) -> String {
    let text = origin.to_string().to_ascii_lowercase();
    match text.strip_suffix('.') {
        Some("") | None => text,
        Some(stripped) => stripped.to_owned(),
    }
}

fn fail(database: &Database, why: String) -> Error {
    Error::Database { database: database.id.clone(), why }
}

impl Writer {
    /// True for a zone read from a database: its data changes there only, so updates
    /// and transactions are refused.
    pub fn is_from_database(&self) -> bool {
        matches!(self.plan.source, crate::plan::ZoneSource::Database(_))
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
    fn the_connection_string_is_not_shown() {
        let url = "postgres://tern:secret@db/dns".into();
        let database = Database::new("main".into(), url, OnBadRow::Skip);
        let shown = format!("{database:?}");
        assert!(shown.contains("main") && !shown.contains("secret"), "{shown}");
    }
}
