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
//!
//! Each zone is read once at start: its first load waits (up to [`FIRST_LISTEN_WAIT`])
//! for the follower's first attempt to `LISTEN`, and a follower that starts listening
//! reads again only the zones last read before it listened ([`Listening`]), whose
//! changes it may have missed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use tern_wire::Name;
use tokio::sync::watch;
use tokio_postgres::Client;

/// How long a zone's first load waits for the follower's first attempt to listen.
pub const FIRST_LISTEN_WAIT: Duration = Duration::from_secs(5);

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
    /// Its follower's connections and the loads read under them.
    pub(crate) listening: Arc<Listening>,
}

impl Database {
    /// The database `id` at `url`, not connected yet.
    pub fn new(id: String, url: String, on_bad_row: OnBadRow) -> Database {
        let listening = Listening::shared(&id, &url);
        Database { id, url, on_bad_row, client: Arc::default(), listening }
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

/// Which of a database's zones its follower must read again when it starts listening:
/// those last read before it listened. One for each database's settings, whatever
/// configuration (re)load made the [`Database`] (so the follower, which keeps the one
/// it started with, and the loads of the zones of a later configuration agree).
#[derive(Debug)]
pub struct Listening {
    /// The connections that have listened so far, and whether the follower tried once.
    attempts: watch::Sender<Attempts>,
    /// For each zone, the connections that had listened when it was last read
    /// (0 after a failed read: to be read again).
    read_under: Mutex<HashMap<Name, u64>>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Attempts {
    listened: u64,
    tried: bool,
}

impl Listening {
    /// The state of the database `id` at `url`, shared while any [`Database`] holds it.
    fn shared(id: &str, url: &str) -> Arc<Listening> {
        type Registry = Mutex<HashMap<(String, String), Weak<Listening>>>;
        static REGISTRY: OnceLock<Registry> = OnceLock::new();
        let mut registry =
            REGISTRY.get_or_init(Registry::default).lock().unwrap_or_else(PoisonError::into_inner);
        registry.retain(|_, state| state.strong_count() > 0);
        let key = (id.to_owned(), url.to_owned());
        if let Some(state) = registry.get(&key).and_then(Weak::upgrade) {
            return state;
        }
        let state = Arc::new(Listening {
            attempts: watch::Sender::new(Attempts::default()),
            read_under: Mutex::default(),
        });
        registry.insert(key, Arc::downgrade(&state));
        state
    }

    /// Before `zone` is read: waits (up to `wait`) for the follower's first attempt,
    /// and notes the connections that have listened so far.
    pub(crate) async fn reading(&self, zone: &Name, wait: Duration) {
        let mut attempts = self.attempts.subscribe();
        let _ = tokio::time::timeout(wait, attempts.wait_for(|a| a.tried)).await;
        let listened = attempts.borrow().listened;
        self.read_under
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(zone.clone(), listened);
    }

    /// A read of `zone` failed: it is read again when the follower listens next.
    pub(crate) fn failed(&self, zone: &Name) {
        self.read_under.lock().unwrap_or_else(PoisonError::into_inner).insert(zone.clone(), 0);
    }

    /// The follower tried to listen and failed.
    pub(crate) fn tried(&self) {
        self.attempts.send_modify(|a| a.tried = true);
    }

    /// The follower listens on a new connection: of `zones`, those last read before
    /// (or whose read failed) — the zones not read yet will be read under it.
    pub(crate) fn listened<'a>(&self, zones: impl Iterator<Item = &'a Name>) -> Vec<Name> {
        let mut now = 0;
        self.attempts.send_modify(|a| {
            a.listened += 1;
            a.tried = true;
            now = a.listened;
        });
        let read_under = self.read_under.lock().unwrap_or_else(PoisonError::into_inner);
        zones.filter(|z| read_under.get(*z).is_some_and(|&n| n < now)).cloned().collect()
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

    #[tokio::test]
    async fn a_follower_reads_again_only_the_zones_read_before_it_listened() {
        let database = || Database::new("listening".into(), "a".into(), OnBadRow::Skip);
        let (one, other) = (database(), database());
        assert!(Arc::ptr_eq(&one.listening, &other.listening), "one state for one database");
        let zone = |text: &str| text.parse::<Name>().unwrap();
        let (a, b, c, d) = (zone("a."), zone("b."), zone("c."), zone("d."));
        // No attempt yet: a read waits for one (here in vain, briefly).
        let started = std::time::Instant::now();
        one.listening.reading(&a, Duration::from_millis(50)).await;
        assert!(started.elapsed() >= Duration::from_millis(50));
        one.listening.reading(&b, Duration::from_millis(50)).await;
        other.listening.failed(&b);
        // d's first read waits for the first connection, and reads under it.
        let waiting = Arc::clone(&one.listening);
        let (d2, started) = (d.clone(), std::time::Instant::now());
        let reading = tokio::spawn(async move { waiting.reading(&d2, FIRST_LISTEN_WAIT).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let zones = [a.clone(), b.clone(), c.clone(), d.clone()];
        // a was read before it, b failed; c is not read yet, d reads after it.
        assert_eq!(one.listening.listened(zones.iter()), [a.clone(), b.clone()]);
        reading.await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(1), "woken by the first attempt");
        // A failed attempt wakes no one waiting any more; the next connection reads
        // again every zone read under an older one.
        one.listening.tried();
        assert_eq!(one.listening.listened(zones.iter()), [a, b, d]);
    }
}
