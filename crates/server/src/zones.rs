//! Loading the configured zones into the zone database: the `ternd` reload hook.
//!
//! A (re)load first publishes the new set of zones — removed zones stop being served, new
//! ones answer SERVFAIL until loaded, as Knot DNS does — then loads each new or changed
//! zone file and swaps its contents in on its own. Every other zone keeps answering from
//! its current snapshot meanwhile; a zone that fails to load keeps its previous contents.
//! A zone is reloaded when its file's size or modification time changed, or when its last
//! load failed.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use tern_wire::Name;
use tern_zone::{Loaded, Options, ZoneDb, ZoneSet, ZoneSlot};
use tracing::warn;

use crate::config::{Config, ZoneConfig, ZoneSource};
use crate::error::Result;
use crate::lifecycle::{Reload, ReloadReport};
use crate::logging::LoadProgress;

/// What a zone was last loaded from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Version {
    File { len: u64, modified: Option<SystemTime> },
    Embedded,
}

/// The reload hook: loads zones into a shared [`ZoneDb`].
#[derive(Debug)]
pub struct ZoneLoader {
    db: Arc<ZoneDb>,
    /// The source version each zone was last loaded from (control plane only).
    loaded: Mutex<HashMap<Name, Version>>,
}

impl ZoneLoader {
    /// A loader publishing to `db`.
    pub fn new(db: Arc<ZoneDb>) -> ZoneLoader {
        ZoneLoader { db, loaded: Mutex::new(HashMap::new()) }
    }

    /// The set of zones `config` asks for: current slots kept, new ones empty.
    fn publish_set(&self, config: &Config) -> Vec<Arc<ZoneSlot>> {
        let current = self.db.snapshot();
        let slots: Vec<Arc<ZoneSlot>> = config
            .zones
            .iter()
            .map(|z| {
                current.get(&z.name).cloned().unwrap_or_else(|| Arc::new(ZoneSlot::new(&z.name)))
            })
            .collect();
        self.db.publish_set(ZoneSet::new(slots.clone()));
        slots
    }

    /// Loads one zone if its source changed; returns whether it is served afterwards.
    fn refresh(&self, zone: &ZoneConfig, slot: &ZoneSlot) -> bool {
        let version = zone.source.as_ref().and_then(source_version);
        let unchanged = self.remembered(&zone.name) == version && slot.contents_full().is_some();
        if unchanged {
            return true;
        }
        let mut progress = LoadProgress::start(&zone.name);
        match load(zone, &mut progress) {
            Ok(loaded) => {
                log_findings(zone, &loaded);
                let records = loaded.contents.record_count() as u64;
                slot.publish(Arc::new(loaded.contents));
                progress.finish(records);
                self.remember(&zone.name, version);
                true
            }
            Err(e) => {
                let kept = slot.contents_full().is_some();
                progress
                    .fail(&format!("{e}{}", if kept { " (previous contents kept)" } else { "" }));
                self.forget(&zone.name);
                false
            }
        }
    }

    fn remembered(&self, name: &Name) -> Option<Version> {
        self.loaded.lock().ok().and_then(|m| m.get(name).cloned())
    }

    fn remember(&self, name: &Name, version: Option<Version>) {
        if let (Ok(mut map), Some(v)) = (self.loaded.lock(), version) {
            map.insert(name.clone(), v);
        }
    }

    fn forget(&self, name: &Name) {
        if let Ok(mut map) = self.loaded.lock() {
            map.remove(name);
        }
    }
}

impl Reload for ZoneLoader {
    /// Publishes the configured zones, none loaded yet: from the first query on, a
    /// configured zone answers SERVFAIL until it is loaded, never REFUSED (which tells a
    /// resolver this server is not authoritative for it at all).
    fn prepare(&self, config: &Config) {
        self.publish_set(config);
    }

    fn reload(&self, config: &Config) -> Result<ReloadReport> {
        let slots = self.publish_set(config);
        let mut report = ReloadReport { zones: slots.len(), ..ReloadReport::default() };
        for (zone, slot) in config.zones.iter().zip(&slots) {
            if !self.refresh(zone, slot) {
                report.failed += 1;
            }
            report.records += slot.contents_full().map_or(0, |c| c.record_count() as u64);
        }
        let configured: HashSet<&Name> = config.zones.iter().map(|z| &z.name).collect();
        if let Ok(mut map) = self.loaded.lock() {
            map.retain(|name, _| configured.contains(name));
        }
        tern_zone::memory::after_load();
        Ok(report)
    }
}

/// The file's size and modification time (`None` if it cannot be read: load and fail).
fn source_version(source: &ZoneSource) -> Option<Version> {
    match source {
        ZoneSource::File(path) => {
            let meta = std::fs::metadata(path).ok()?;
            Some(Version::File { len: meta.len(), modified: meta.modified().ok() })
        }
        ZoneSource::Embedded(_) => Some(Version::Embedded),
    }
}

fn load(zone: &ZoneConfig, progress: &mut LoadProgress) -> tern_zone::Result<Loaded> {
    let options = Options::default();
    match zone.source.as_ref().unwrap_or(&ZoneSource::Embedded("")) {
        ZoneSource::File(path) => {
            tern_zone::load_file(path, &zone.name, &options, &mut |p| progress.update(p.records))
        }
        ZoneSource::Embedded(text) => {
            tern_zone::load_bytes(text.as_bytes(), Path::new("<built-in>"), &zone.name, &options)
        }
    }
}

/// Logs the warnings of a successful load (errors refuse the zone and are in the error).
fn log_findings(zone: &ZoneConfig, loaded: &Loaded) {
    for w in &loaded.parse.warnings {
        warn!(zone = %zone.name, "{}: {}", w.at, w.message);
    }
    for issue in loaded.report.warnings() {
        warn!(zone = %zone.name, "{issue}");
    }
    let dropped = loaded.parse.warnings_dropped + loaded.report.suppressed as u64;
    if dropped > 0 {
        warn!(zone = %zone.name, "{dropped} more warnings not shown");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn prepare_makes_every_configured_zone_known_unloaded() {
        let text = "[[zone]]\nname = \"example.com\"\nfile = \"/nonexistent/example.com.zone\"\n";
        let config = Config::from_text(text, Path::new("t.toml")).unwrap();
        let db = Arc::new(ZoneDb::new());
        let loader = ZoneLoader::new(Arc::clone(&db));
        let name: Name = "example.com.".parse().unwrap();
        assert!(db.snapshot().get(&name).is_none());
        loader.prepare(&config);
        let slot = db.snapshot().get(&name).cloned().unwrap();
        assert!(slot.contents_full().is_none(), "known, not loaded");
        // The failed load keeps the slot the engine answers SERVFAIL from.
        assert_eq!(loader.reload(&config).unwrap().failed, 1);
        assert!(Arc::ptr_eq(db.snapshot().get(&name).unwrap(), &slot));
    }
}
