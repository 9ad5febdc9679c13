//! The members of consumed catalogs (RFC 9432 §5), kept by the main thread beside the
//! configuration: each catalog's writer reports what its catalog lists, and the zones
//! served are the configuration's plus the members.
//!
//! * A member is served as a secondary with the template its `group` picks among the
//!   catalog's `catalog-template`s (else the first of them, else `default`); its
//!   primaries are the template's, or the catalog's when the template names none.
//! * A zone belongs to the first catalog that listed it. Another catalog listing it is
//!   ignored (and logged) unless the owner's `coo` property names that catalog: then
//!   the zone changes ownership (§5.6).
//! * A member that disappears from its catalog is removed, with its kept copy, timers
//!   and journal (§5.3); one whose unique label changed is reset the same way and
//!   transferred afresh (§5.4), as is a zone changing ownership under another label.
//! * A zone in the configuration is never a member: the configuration wins.
//! * A catalog has at most `catalog-max-members` members served: those it already had
//!   first, then the others in canonical order; the rest are left out, and that is
//!   logged once for each version of the catalog (with how many). A primary listing a
//!   hundred thousand zones by mistake, or in malice, cannot make the server take
//!   gigabytes.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use tern_wire::Name;
use tracing::{error, info, warn};

use crate::config::{files, xfr, CatalogRole, Config, ZoneConfig, ZonePlan, ZoneSource};
use tern_control::catalog::Listed;

/// What a catalog's new list changed of the members served ([`Consumed::update`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Members to stop serving, whose kept state goes: removed, or reset (a new unique
    /// label, or a new owner under another label).
    pub purge: Vec<Name>,
    /// Members to start serving: new ones, and the reset ones again.
    pub start: Vec<Name>,
}

/// Consumed catalogs and their members (see the module comment).
#[derive(Debug, Default)]
pub struct Consumed {
    /// What each catalog lists.
    listed: BTreeMap<Name, BTreeMap<Name, Listed>>,
    /// Each member served: its catalog and unique label.
    owners: BTreeMap<Name, (Name, Vec<u8>)>,
}

impl Consumed {
    /// Takes what `catalog` lists now; returns what changed of the members served, so
    /// that only those are stopped and started (a change to a catalog of a million
    /// members costs what it changes).
    pub fn update(
        &mut self,
        catalog: &Name,
        members: BTreeMap<Name, Listed>,
        config: &Config,
    ) -> Changed {
        let configured: HashSet<&Name> = config.resolved.zones.iter().map(|p| &p.name).collect();
        let max = max_members(config, catalog);
        let members = self.within_limit(catalog, members, &configured, max);
        let mut changed = Changed::default();
        for (zone, listed) in &members {
            if configured.contains(zone) {
                if !self.listed.get(catalog).is_some_and(|m| m.contains_key(zone)) {
                    warn!(catalog = %catalog, member = %zone, "catalog member not served: the zone is in the configuration, which wins");
                }
                continue;
            }
            match self.owners.get(zone).cloned() {
                None => {
                    info!(catalog = %catalog, member = %zone, "catalog member added");
                    self.owners.insert(zone.clone(), (catalog.clone(), listed.id.clone()));
                    changed.start.push(zone.clone());
                }
                Some((owner, id)) if &owner == catalog => {
                    if id != listed.id {
                        info!(catalog = %catalog, member = %zone, "catalog member reset (its label changed)");
                        changed.purge.push(zone.clone());
                        changed.start.push(zone.clone());
                        self.owners.insert(zone.clone(), (owner, listed.id.clone()));
                    }
                }
                Some((owner, id)) => {
                    if self.moves_to(&owner, zone, catalog) {
                        info!(from = %owner, catalog = %catalog, member = %zone, "catalog member changed ownership");
                        if id != listed.id {
                            changed.purge.push(zone.clone());
                            changed.start.push(zone.clone());
                        }
                        self.owners.insert(zone.clone(), (catalog.clone(), listed.id.clone()));
                    } else {
                        warn!(catalog = %catalog, member = %zone, owner = %owner, "zone listed by two catalogs: kept in the first");
                    }
                }
            }
        }
        let gone: Vec<Name> = self
            .owners
            .iter()
            .filter(|(zone, (owner, _))| owner == catalog && !members.contains_key(*zone))
            .map(|(zone, _)| zone.clone())
            .collect();
        for zone in gone {
            info!(catalog = %catalog, member = %zone, "catalog member removed");
            self.owners.remove(&zone);
            changed.purge.push(zone);
        }
        self.listed.insert(catalog.clone(), members);
        changed
    }

    /// At most `max` of the members `catalog` lists (zones in the configuration aside),
    /// those it has already first; the others are left out, and logged.
    fn within_limit(
        &self,
        catalog: &Name,
        mut members: BTreeMap<Name, Listed>,
        configured: &HashSet<&Name>,
        max: usize,
    ) -> BTreeMap<Name, Listed> {
        let listed = members.keys().filter(|zone| !configured.contains(zone)).count();
        if listed <= max {
            return members;
        }
        let has = |zone: &Name| self.owners.get(zone).is_some_and(|(owner, _)| owner == catalog);
        let candidates = || members.keys().filter(|zone| !configured.contains(zone));
        let mut kept: HashSet<Name> = candidates().filter(|z| has(z)).take(max).cloned().collect();
        let room = max - kept.len();
        let more: Vec<Name> =
            candidates().filter(|z| !kept.contains(*z)).take(room).cloned().collect();
        kept.extend(more);
        members.retain(|zone, _| configured.contains(zone) || kept.contains(zone));
        let left_out = listed - max;
        warn!(catalog = %catalog, listed, served = max, left_out, "the catalog lists {listed} members, more than catalog-max-members ({max}): {left_out} of them are not served");
        members
    }

    /// True when `owner`'s `coo` property for `zone` names `catalog` (RFC 9432 §4.4.1).
    fn moves_to(&self, owner: &Name, zone: &Name, catalog: &Name) -> bool {
        let coo = self.listed.get(owner).and_then(|m| m.get(zone)).and_then(|l| l.coo.as_ref());
        coo == Some(catalog)
    }

    /// Forgets catalogs that `config` no longer consumes; returns their members.
    pub fn retain(&mut self, config: &Config) -> Vec<Name> {
        let consumers: HashSet<&Name> = config
            .resolved
            .zones
            .iter()
            .filter(|p| matches!(p.catalog, CatalogRole::Consumer { .. }))
            .map(|p| &p.name)
            .collect();
        self.listed.retain(|catalog, _| consumers.contains(catalog));
        let gone: Vec<Name> = self
            .owners
            .iter()
            .filter(|(_, (owner, _))| !consumers.contains(owner))
            .map(|(zone, _)| zone.clone())
            .collect();
        gone.iter().for_each(|zone| drop(self.owners.remove(zone)));
        gone
    }

    /// The plans of the members served, under `config` (members whose plan cannot be
    /// made are logged and left out). `except` are left out too.
    pub fn plans(&self, config: &Config, except: &[Name]) -> Vec<Arc<ZonePlan>> {
        let except: HashSet<&Name> = except.iter().collect();
        let members = self.owners.keys().filter(|zone| !except.contains(zone));
        self.plans_of(config, members)
    }

    /// The plans of `members` (names of members served; others are skipped) under
    /// `config`, made for these only: what a catalog change starts.
    pub fn plans_of<'a>(
        &self,
        config: &Config,
        members: impl IntoIterator<Item = &'a Name>,
    ) -> Vec<Arc<ZonePlan>> {
        if self.owners.is_empty() {
            return Vec::new();
        }
        let catalogs: BTreeMap<&Name, &ZonePlan> =
            config.resolved.zones.iter().map(|p| (&p.name, p.as_ref())).collect();
        let mut zones = Vec::new();
        for zone in members {
            let Some((catalog, _)) = self.owners.get(zone) else { continue };
            if catalogs.contains_key(zone) {
                continue;
            }
            let (Some(plan), Some(listed)) =
                (catalogs.get(catalog), self.listed.get(catalog).and_then(|m| m.get(zone)))
            else {
                continue;
            };
            if let Some(member) = member_config(config, plan, listed) {
                zones.push((0..0, member));
            }
        }
        let mut users = files::users(&config.resolved.zones);
        let mut plans = resolve(config, &zones);
        plans.retain(|plan| match files::claim(plan, &mut users, &config.server.storage) {
            Ok(()) => true,
            Err(why) => {
                error!(member = %plan.name, "catalog member not served: {why}");
                false
            }
        });
        plans
    }
}

/// `catalog-max-members` of `catalog` (the default when it is not a consumed catalog of
/// `config`).
fn max_members(config: &Config, catalog: &Name) -> usize {
    let plan = config.resolved.zones.iter().find(|p| &p.name == catalog);
    match plan.map(|p| &p.catalog) {
        Some(CatalogRole::Consumer { max_members, .. }) => *max_members,
        _ => xfr::CATALOG_MAX_MEMBERS,
    }
}

/// A member's zone table: its template, and the catalog's primaries when that has none.
fn member_config(config: &Config, catalog: &ZonePlan, listed: &Listed) -> Option<ZoneConfig> {
    let CatalogRole::Consumer { templates, primaries, .. } = &catalog.catalog else {
        return None;
    };
    let template = listed
        .group
        .as_ref()
        .and_then(|g| templates.iter().find(|t| *t == g))
        .or(templates.first())
        .cloned();
    let id = template.as_deref().unwrap_or("default");
    let declared = config.tables.templates.iter().find(|t| t.get_ref().id == id);
    let mut member = ZoneConfig::primary(listed.zone.clone(), ZoneSource::File(PathBuf::new()));
    member.source = None;
    member.template = template;
    if declared.is_none_or(|t| t.get_ref().primary.is_none()) {
        member.settings.primary = Some(primaries.clone());
    }
    Some(member)
}

/// The members' plans, all at once; when that fails, one by one (to log each problem).
fn resolve(config: &Config, zones: &[(std::ops::Range<usize>, ZoneConfig)]) -> Vec<Arc<ZonePlan>> {
    let base = config.path.as_ref().and_then(|p| p.parent()).map(PathBuf::from).unwrap_or_default();
    let signing = config.signing_defaults();
    let storage = (config.server.storage.as_path(), &signing);
    let shared = &config.resolved.shared;
    if let Ok(resolved) = xfr::resolve(&config.tables, zones, &base, storage, shared) {
        return resolved.zones;
    }
    let mut plans = Vec::new();
    for one in zones {
        match xfr::resolve(&config.tables, std::slice::from_ref(one), &base, storage, shared) {
            Ok(resolved) => plans.extend(resolved.zones),
            Err(problems) => {
                for (_, why) in problems {
                    error!(member = %one.1.name, "catalog member not served: {why}");
                }
            }
        }
    }
    plans
}

/// Removes what a zone kept — a catalog member, or a zone `ternctl zone-purge` names:
/// its zone file, timers, primary's version (a signing secondary) and journal, in
/// `storage` and named by `tern_journal::files` (so nothing outside it, and nobody
/// else's). The files removed.
pub fn purge(storage: &std::path::Path, zone: &Name) -> Vec<std::path::PathBuf> {
    let files = tern_journal::files::ZoneFiles::new(storage, zone);
    let (file, journal) = (files.zone_copy(), files.journal());
    let timers = tern_control::storage::timers_path(&file);
    let upstream = tern_control::signed_zone::upstream::path(&file);
    let mut removed = Vec::new();
    for path in [file, timers, upstream, journal] {
        match std::fs::remove_file(&path) {
            Ok(()) => {
                info!(zone = %zone, file = %path.display(), "removed");
                removed.push(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => warn!(zone = %zone, file = %path.display(), "cannot remove: {e}"),
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> Name {
        text.parse().unwrap()
    }

    fn listed(zone: &str, id: &str, coo: Option<&str>) -> (Name, Listed) {
        let zone = name(zone);
        let member = Listed {
            zone: zone.clone(),
            id: id.as_bytes().to_vec(),
            group: None,
            coo: coo.map(name),
        };
        (zone, member)
    }

    fn changed(purge: &[&str], start: &[&str]) -> Changed {
        let names = |zones: &[&str]| zones.iter().map(|z| name(z)).collect();
        Changed { purge: names(purge), start: names(start) }
    }

    #[test]
    fn members_come_go_reset_and_change_ownership() {
        let config = Config::default();
        let (a, b) = (name("a.cat."), name("b.cat."));
        let mut consumed = Consumed::default();
        let got = consumed.update(&a, [listed("x.example.", "1", None)].into(), &config);
        assert_eq!(got, changed(&[], &["x.example."]));
        // Listed by b too, without coo: stays with a.
        let got = consumed.update(&b, [listed("x.example.", "9", None)].into(), &config);
        assert_eq!(got, Changed::default());
        assert_eq!(consumed.owners[&name("x.example.")].0, a);
        // a's label changes: reset.
        let got = consumed.update(&a, [listed("x.example.", "2", Some("b.cat."))].into(), &config);
        assert_eq!(got, changed(&["x.example."], &["x.example."]));
        // b lists it again, now that a's coo names b: it moves (a new label: reset).
        let got = consumed.update(&b, [listed("x.example.", "9", None)].into(), &config);
        assert_eq!(got, changed(&["x.example."], &["x.example."]));
        assert_eq!(consumed.owners[&name("x.example.")].0, b);
        // a drops it: not a's any more, nothing happens.
        assert_eq!(consumed.update(&a, BTreeMap::new(), &config), Changed::default());
        // b drops it: removed.
        let got = consumed.update(&b, BTreeMap::new(), &config);
        assert_eq!(got, changed(&["x.example."], &[]));
        assert!(consumed.owners.is_empty());
    }

    /// A change to a big catalog names only what changed, and plans are made for those
    /// members only.
    #[test]
    fn a_change_starts_and_stops_only_the_members_it_changes() {
        let config = Config::from_text(
            "[[remote]]\nid = \"p\"\naddress = \"192.0.2.1\"\n\
             [[zone]]\nname = \"cat.\"\nprimary = \"p\"\ncatalog-role = \"consumer\"\n",
            std::path::Path::new("t.toml"),
        )
        .unwrap();
        let cat = name("cat.");
        let list = |zones: &[String]| -> BTreeMap<Name, Listed> {
            zones.iter().map(|z| listed(z, z, None)).collect()
        };
        let mut zones: Vec<String> = (0..1000).map(|i| format!("z{i}.example.")).collect();
        let mut consumed = Consumed::default();
        assert_eq!(consumed.update(&cat, list(&zones), &config).start.len(), 1000);
        zones.remove(10);
        zones.push("new.example.".into());
        let got = consumed.update(&cat, list(&zones), &config);
        assert_eq!(got, changed(&["z10.example."], &["new.example."]));
        let plans = consumed.plans_of(&config, &got.start);
        let names: Vec<String> = plans.iter().map(|p| p.name.to_string()).collect();
        assert_eq!(names, ["new.example."]);
        assert_eq!(consumed.plans(&config, &[]).len(), 1000);
    }

    /// Issue 49: a catalog of 100,000 members took the server from 25 to 910 MB. At most
    /// `catalog-max-members` are served, those served already first.
    #[test]
    fn members_beyond_the_limit_are_left_out_those_served_first() {
        let config = Config::from_text(
            "[[remote]]\nid = \"p\"\naddress = \"192.0.2.1\"\n\
             [[zone]]\nname = \"cat.\"\nprimary = \"p\"\ncatalog-role = \"consumer\"\n\
             catalog-max-members = 3\n",
            std::path::Path::new("t.toml"),
        )
        .unwrap();
        let cat = name("cat.");
        let list = |zones: &[&str]| -> BTreeMap<Name, Listed> {
            zones.iter().map(|z| listed(z, z, None)).collect()
        };
        let mut consumed = Consumed::default();
        consumed.update(&cat, list(&["x.", "y."]), &config);
        let got = consumed.update(&cat, list(&["a.", "b.", "c.", "d.", "x.", "y."]), &config);
        assert_eq!(got, changed(&[], &["a."]));
        let served: Vec<String> = consumed.owners.keys().map(|z| z.to_string()).collect();
        assert_eq!(served, ["a.", "x.", "y."], "those served stay; then by name");
        let got = consumed.update(&cat, list(&["a.", "b.", "c.", "d."]), &config);
        assert_eq!(got, changed(&["x.", "y."], &["b.", "c."]));
        let served: Vec<String> = consumed.owners.keys().map(|z| z.to_string()).collect();
        assert_eq!(served, ["a.", "b.", "c."]);
    }
}
