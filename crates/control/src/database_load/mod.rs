//! Reading a database zone's rows ([`crate::database`]) and loading them: one query on
//! the database's shared connection (one snapshot), its rows read as zone-file text
//! would be ([`rows`]).
//!
//! What is read of PowerDNS's schema: the `records` rows of the zone's `domains` row
//! (by its `name`, as PowerDNS stores it: lower case, no trailing dot) with a type and
//! not `disabled`; `name`, `type`, `content`, `ttl` (3600 when NULL) and `prio` (put
//! before the content of MX and SRV, as PowerDNS does). `ordername` and `auth` are
//! ignored: Tern finds the zone's cuts and DNSSEC order itself. Rows with no type
//! (PowerDNS's empty non-terminals) are skipped.

pub mod rows;

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use tern_wire::Name;
use tern_zone::Loaded;
use tokio_postgres::Client;

use crate::database::{powerdns_name, Database, FIRST_LISTEN_WAIT};
use crate::error::Error;

/// How long connecting, and reading a zone's rows, may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// The most rows a zone may have.
pub const MAX_ROWS: i64 = 50_000_000;

/// The rows of one zone, in PowerDNS's schema.
const ZONE_ROWS: &str = "SELECT r.id::bigint, r.name::text, r.type::text, r.content::text, \
     r.ttl::bigint, r.prio::bigint FROM records r JOIN domains d ON d.id = r.domain_id \
     WHERE d.name = $1 AND NOT coalesce(r.disabled, false) AND coalesce(r.type, '') <> '' \
     ORDER BY r.id LIMIT $2";

/// Reads `origin`'s rows from `database` and loads them (on a blocking thread of a
/// tokio runtime, as the primary's loads run).
pub fn load(database: &Database, origin: &Name) -> Result<Loaded, Error> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|e| fail(database, format!("no runtime to read the database on: {e}")))?;
    runtime.block_on(database.listening.reading(origin, FIRST_LISTEN_WAIT));
    let read = runtime.block_on(fetch(database, origin));
    let read = read.inspect_err(|_| database.listening.failed(origin))?;
    rows::read(database, origin, &read)
}

/// `origin`'s rows, in one query (one snapshot of the database).
async fn fetch(database: &Database, origin: &Name) -> Result<Vec<rows::Row>, Error> {
    let why = |e: tokio_postgres::Error| fail(database, e.to_string());
    let late = |_| fail(database, format!("no answer within {TIMEOUT:?}"));
    let client = client(database).await?;
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

fn fail(database: &Database, why: String) -> Error {
    Error::Database { database: database.id.clone(), why }
}

/// The database's shared connection, made when there is none or it broke.
async fn client(database: &Database) -> Result<Arc<Client>, Error> {
    let cached = database.client.lock().unwrap_or_else(PoisonError::into_inner).clone();
    if let Some(client) = cached.filter(|c| !c.is_closed()) {
        return Ok(client);
    }
    let connecting = tokio_postgres::connect(&database.url, tokio_postgres::NoTls);
    let late = |_| fail(database, format!("no answer within {TIMEOUT:?}"));
    let (client, connection) = tokio::time::timeout(TIMEOUT, connecting)
        .await
        .map_err(late)?
        .map_err(|e| fail(database, e.to_string()))?;
    // The connection ends when the client is dropped, or the server goes.
    tokio::spawn(connection);
    let client = Arc::new(client);
    *database.client.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&client));
    Ok(client)
}
