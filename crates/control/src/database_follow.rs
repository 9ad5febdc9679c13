//! Following a database's changes ([`crate::database`]): one task per database in use holds a connection
//! that `LISTEN`s on [`CHANNEL`]; the triggers shipped in `docs/postgres/` send the
//! name of each zone whose `records` or `domains` rows a transaction changed, and the
//! zone is reloaded (its rows read again, the difference committed) at once. Reloads of
//! one zone asked while one runs are merged into one more.
//!
//! A lost connection is logged and retried with back-off ([`MIN_BACKOFF`] doubling up
//! to [`MAX_BACKOFF`]) while the zones keep serving what they last read; once it is
//! back, the zones last read before it listened are reloaded, since notifications sent
//! while it was away are lost ([`crate::database::Listening`]). At start the zones'
//! first loads wait for the first `LISTEN`, so each is read once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use tern_ctl::proto::ZoneOp;
use tern_wire::Name;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_postgres::AsyncMessage;
use tracing::{debug, info, warn};

use crate::database::{powerdns_name, Database};
use crate::database_load::TIMEOUT;
use crate::event::ZoneCommand;
use crate::plan::{ZonePlan, ZoneSource};
use crate::plane::Zones;

/// The channel the triggers notify, with the zone's name as the payload.
pub const CHANNEL: &str = "tern_zone_changed";
/// The first wait before connecting again.
pub const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait before connecting again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The zones read from one database, by their name as the triggers send it.
type ZoneMap = HashMap<String, Name>;

/// One database's follower.
#[derive(Debug)]
struct Follower {
    database: Arc<Database>,
    task: JoinHandle<()>,
    zones: Arc<ArcSwap<ZoneMap>>,
}

/// The followers of the databases in use (see the module comment).
#[derive(Debug, Default)]
pub struct Followers {
    /// By database id.
    running: Mutex<HashMap<String, Follower>>,
}

impl Followers {
    /// Follows the databases `plans` read zones from, with `zones` to reload them, on
    /// `runtime`: a database newly in use gets a follower, one no longer in use loses
    /// it, the others follow the zones they now have.
    pub fn follow(&self, plans: &[Arc<ZonePlan>], zones: &Zones, runtime: &tokio::runtime::Handle) {
        let mut wanted: HashMap<String, (Arc<Database>, ZoneMap)> = HashMap::new();
        for plan in plans {
            if let ZoneSource::Database(database) = &plan.source {
                let key = powerdns_name(&plan.name);
                let entry = wanted.entry(database.id.clone());
                let (_, map) = entry.or_insert_with(|| (Arc::clone(database), ZoneMap::new()));
                map.insert(key, plan.name.clone());
            }
        }
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.retain(|id, follower| {
            let kept = wanted.get(id).is_some_and(|(database, _)| *database == follower.database);
            if !kept {
                follower.task.abort();
            }
            kept
        });
        for (id, (database, map)) in wanted {
            if let Some(follower) = running.get(&id) {
                follower.zones.store(Arc::new(map));
                continue;
            }
            let map = Arc::new(ArcSwap::from_pointee(map));
            let reloads = Arc::new(Reloads { zones: zones.clone(), asked: Mutex::default() });
            let task = runtime.spawn(run(Arc::clone(&database), Arc::clone(&map), reloads));
            running.insert(id, Follower { database, task, zones: map });
        }
    }
}

impl Drop for Followers {
    fn drop(&mut self) {
        let running = self.running.get_mut().unwrap_or_else(PoisonError::into_inner);
        running.values().for_each(|f| f.task.abort());
    }
}

/// Connects, listens and reloads for ever, waiting longer after each failure.
async fn run(database: Arc<Database>, zones: Arc<ArcSwap<ZoneMap>>, reloads: Arc<Reloads>) {
    let mut backoff = MIN_BACKOFF;
    loop {
        let why = listen(&database, &zones, &reloads, &mut backoff).await;
        database.listening.tried(); // the loads waiting for a first attempt go on
        warn!(database = %database.id, retry_in = ?backoff, "database connection lost, its zones keep serving what they last read: {why}");
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// One connection's life: `LISTEN`, every zone reloaded (what happened before is not
/// known), then each notified zone reloaded. Returns why the connection ended.
async fn listen(
    database: &Database,
    zones: &ArcSwap<ZoneMap>,
    reloads: &Arc<Reloads>,
    backoff: &mut Duration,
) -> String {
    let connecting = tokio_postgres::connect(&database.url, tokio_postgres::NoTls);
    let (client, mut connection) = match tokio::time::timeout(TIMEOUT, connecting).await {
        Ok(Ok(connected)) => connected,
        Ok(Err(e)) => return e.to_string(),
        Err(_) => return format!("no answer within {:?}", TIMEOUT),
    };
    let (sender, mut received) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        loop {
            let message = std::future::poll_fn(|cx| connection.poll_message(cx)).await;
            let end = !matches!(message, Some(Ok(_)));
            if sender.send(message).is_err() || end {
                break;
            }
        }
    });
    if let Err(e) = client.batch_execute(&format!("LISTEN {CHANNEL}")).await {
        driver.abort();
        return e.to_string();
    }
    info!(database = %database.id, zones = zones.load().len(), "following the database's changes");
    *backoff = MIN_BACKOFF;
    let missed = database.listening.listened(zones.load().values());
    if !missed.is_empty() {
        info!(database = %database.id, zones = missed.len(), "zones read before listening are read again");
    }
    missed.into_iter().for_each(|zone| reloads.ask(zone));
    let why = loop {
        match received.recv().await {
            Some(Some(Ok(AsyncMessage::Notification(n)))) if n.channel() == CHANNEL => {
                notified(database, zones, reloads, n.payload());
            }
            Some(Some(Ok(_))) => {}
            Some(Some(Err(e))) => break e.to_string(),
            Some(None) | None => break "the server closed the connection".to_owned(),
        }
    };
    driver.abort();
    why
}

/// A notification's zone, reloaded if it is one of the database's.
fn notified(database: &Database, zones: &ArcSwap<ZoneMap>, reloads: &Arc<Reloads>, payload: &str) {
    let key = payload.trim_end_matches('.').to_ascii_lowercase();
    match zones.load().get(if key.is_empty() { "." } else { &key }) {
        Some(zone) => reloads.ask(zone.clone()),
        None => {
            debug!(database = %database.id, zone = payload, "change to a zone not served from this database")
        }
    }
}

/// The reloads under way, and whether another was asked of each meanwhile.
#[derive(Debug)]
struct Reloads {
    zones: Zones,
    asked: Mutex<HashMap<Name, bool>>,
}

impl Reloads {
    /// Reloads `zone` now, or once more after the reload under way.
    fn ask(self: &Arc<Self>, zone: Name) {
        let mut asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(again) = asked.get_mut(&zone) {
            *again = true;
            return;
        }
        asked.insert(zone.clone(), false);
        tokio::spawn(Arc::clone(self).reload(zone));
    }

    async fn reload(self: Arc<Self>, zone: Name) {
        loop {
            let command = ZoneCommand::Op(ZoneOp::Reload);
            match self.zones.command(&zone, command).await {
                Ok(done) => debug!(zone = %zone, "reloaded from its database: {done}"),
                // The writer logged why (and keeps the zone as it was).
                Err(e) => debug!(zone = %zone, "reload from its database failed: {e}"),
            }
            let mut asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
            if asked.get(&zone) == Some(&true) {
                asked.insert(zone.clone(), false);
                continue;
            }
            asked.remove(&zone);
            return;
        }
    }
}
