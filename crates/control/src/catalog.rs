//! Catalog zones (RFC 9432): reading a consumed catalog, and writing a produced one.
//!
//! A catalog is an ordinary zone that lists member zones: `version.<catalog> TXT "2"`
//! (§4.1; other versions are not read), one `<unique-N>.zones.<catalog> PTR <member>`
//! per member (§4.2), and per member the optional properties `group` (TXT, §4.4.2) and
//! `coo` (PTR, change of ownership to another catalog, §4.4.1). Records a consumer does
//! not know are ignored (§5.1); a member label with other than one PTR is ignored and
//! logged, as is a member listed twice (the first in canonical order counts).
//!
//! A produced catalog (`catalog-role = "producer"`) lists the zones whose `catalog`
//! names it, with an NS of `invalid.` (§4.1), each member's unique label a hash of its
//! name (stable across restarts and across servers), and its `catalog-group`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use aws_lc_rs::digest;
use tern_wire::{Dname, Name, Rtype};
use tern_zone::ZoneContents;
use tracing::warn;

use crate::error::{Error, Result};
pub use crate::event::Listed;
use crate::plan::{CatalogMember, CatalogRole};
use crate::writer::Writer;

/// The members `catalog` lists, by zone name; `Err` when it is not a version 2 catalog.
pub fn consume(catalog: &ZoneContents) -> Result<BTreeMap<Name, Listed>> {
    let origin = catalog.origin().clone();
    let zones = child(&origin, b"zones")?;
    let version = child(&origin, b"version")?;
    let mut versions = Vec::new();
    let mut ptrs: BTreeMap<Vec<u8>, Vec<Name>> = BTreeMap::new();
    let mut groups: BTreeMap<Vec<u8>, String> = BTreeMap::new();
    let mut coos: BTreeMap<Vec<u8>, Name> = BTreeMap::new();
    catalog.for_each_record(|owner, rtype, _, data| {
        if rtype == Rtype::TXT && owner.eq_ignore_case(&version) {
            versions.push(first_string(data));
            return;
        }
        let Some(labels) = labels_below(owner, &zones) else { return };
        match (labels.as_slice(), rtype) {
            ([id], Rtype::PTR) => ptrs.entry(id.clone()).or_default().extend(ptr_name(data)),
            ([property, id], Rtype::TXT) if property == b"group" => {
                groups.entry(id.clone()).or_insert_with(|| first_string(data).unwrap_or_default());
            }
            ([property, id], Rtype::PTR) if property == b"coo" => {
                if let Some(name) = ptr_name(data) {
                    coos.entry(id.clone()).or_insert(name);
                }
            }
            _ => {}
        }
    });
    if versions.len() != 1 || versions.first().cloned().flatten().as_deref() != Some("2") {
        return Err(Error::NotACatalog(origin));
    }
    Ok(members(&origin, ptrs, groups, coos))
}

/// The members, each from the one PTR of its label.
fn members(
    origin: &Name,
    ptrs: BTreeMap<Vec<u8>, Vec<Name>>,
    mut groups: BTreeMap<Vec<u8>, String>,
    mut coos: BTreeMap<Vec<u8>, Name>,
) -> BTreeMap<Name, Listed> {
    let mut listed = BTreeMap::new();
    for (id, names) in ptrs {
        let [zone] = names.as_slice() else {
            warn!(catalog = %origin, "catalog member label with {} PTR records: ignored", names.len());
            continue;
        };
        if listed.contains_key(zone) {
            warn!(catalog = %origin, member = %zone, "member listed twice: the second is ignored");
            continue;
        }
        let member = Listed {
            zone: zone.clone(),
            group: groups.remove(&id).filter(|g| !g.is_empty()),
            coo: coos.remove(&id),
            id,
        };
        listed.insert(zone.clone(), member);
    }
    listed
}

impl Writer {
    /// A consumed catalog tells the server its members whenever its serial changed (read
    /// on a blocking thread: a catalog may list many zones).
    pub async fn report_catalog(&mut self) {
        if !matches!(self.plan.catalog, CatalogRole::Consumer { .. }) {
            return;
        }
        let Some(zone) = self.current.clone() else { return };
        if self.catalog_reported == Some(zone.serial()) || self.schedule.expired {
            return;
        }
        self.catalog_reported = Some(zone.serial());
        let Some(listed) = self.shared.catalogs_listed.clone() else { return };
        let catalog = self.plan.name.clone();
        let members = tokio::task::spawn_blocking(move || consume(&zone)).await;
        let members = members.unwrap_or_else(|e| Err(Error::Task(e)));
        if let Err(why) = &members {
            warn!(catalog = %catalog, "{why}");
        }
        (listed.0)(catalog, members);
    }
}

/// `label.parent`.
fn child(parent: &Name, label: &[u8]) -> Result<Name> {
    let text = format!("{}.{parent}", String::from_utf8_lossy(label));
    text.parse().map_err(|e: tern_wire::Error| Error::Owner { text, why: e.to_string() })
}

/// The labels of `owner` above `ancestor`, leftmost first and lower-cased (`None` when
/// not below it).
fn labels_below(owner: &Dname, ancestor: &Dname) -> Option<Vec<Vec<u8>>> {
    if !owner.is_below(ancestor) {
        return None;
    }
    let extra = owner.label_count() - ancestor.label_count();
    Some(owner.labels().take(extra).map(<[u8]>::to_ascii_lowercase).collect())
}

/// The name a PTR's RDATA holds.
fn ptr_name(data: &[u8]) -> Option<Name> {
    Name::from_wire(data).ok()
}

/// The first character-string of a TXT's RDATA.
fn first_string(data: &[u8]) -> Option<String> {
    let (&len, rest) = data.split_first()?;
    let text = rest.get(..usize::from(len))?;
    Some(String::from_utf8_lossy(text).into_owned())
}

/// The unique label of `member` in a produced catalog: 16 hex digits of the SHA-256 of
/// its lower-cased wire form.
pub fn member_id(member: &Name) -> String {
    let mut wire = Vec::new();
    member.write_lowercase(&mut wire);
    let hash = digest::digest(&digest::SHA256, &wire);
    hash.as_ref().iter().take(8).fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A produced catalog as zone-file text with `serial`.
pub fn produce(catalog: &Name, members: &[CatalogMember], serial: u32) -> String {
    let mut text = format!(
        "$ORIGIN {catalog}\n@ 0 IN SOA invalid. invalid. {serial} 3600 600 2147483646 0\n\
         @ 0 IN NS invalid.\nversion 0 IN TXT \"2\"\n"
    );
    for member in members {
        let id = member_id(&member.zone);
        let _ = writeln!(text, "{id}.zones 0 IN PTR {}", member.zone);
        if let Some(group) = &member.group {
            let _ = writeln!(text, "group.{id}.zones 0 IN TXT \"{}\"", escape(group));
        }
    }
    text
}

/// A group name inside a TXT's quotes.
fn escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> Name {
        text.parse().unwrap()
    }

    fn catalog(text: &str) -> ZoneContents {
        let origin = name("cat.example.");
        tern_zone::load_bytes(
            text.as_bytes(),
            std::path::Path::new("t"),
            &origin,
            &Default::default(),
        )
        .unwrap()
        .contents
    }

    #[test]
    fn a_produced_catalog_reads_back() {
        let members = [
            CatalogMember { zone: name("a.example."), group: None },
            CatalogMember { zone: name("b.example."), group: Some("blue \"x\"".into()) },
        ];
        let text = produce(&name("cat.example."), &members, 7);
        let zone = catalog(&text);
        assert_eq!(zone.serial(), 7);
        let read = consume(&zone).unwrap();
        assert_eq!(read.len(), 2);
        let b = &read[&name("b.example.")];
        assert_eq!(b.group.as_deref(), Some("blue \"x\""));
        assert_eq!(b.id, member_id(&name("B.example.")).into_bytes(), "ids ignore case");
        assert_eq!(read[&name("a.example.")].group, None);
    }

    #[test]
    fn properties_broken_members_and_versions() {
        let base = "@ 0 SOA invalid. invalid. 1 3600 600 86400 0\n@ 0 NS invalid.\n";
        let text = format!(
            "{base}version 0 TXT \"2\"\nm1.zones 0 PTR one.example.\ncoo.m1.zones 0 PTR other.cat.\n\
             m2.zones 0 PTR two.example.\nm2.zones 0 PTR three.example.\n\
             m3.zones 0 PTR one.example.\nunknown.m1.zones 0 TXT \"x\"\next 0 TXT \"y\"\n"
        );
        let read = consume(&catalog(&text)).unwrap();
        assert_eq!(read.len(), 1, "{read:?}");
        let one = &read[&name("one.example.")];
        assert_eq!((one.id.as_slice(), one.coo.clone()), (&b"m1"[..], Some(name("other.cat."))));
        let v1 = format!("{base}version 0 TXT \"1\"\nm1.zones 0 PTR one.example.\n");
        assert!(consume(&catalog(&v1)).unwrap_err().to_string().contains("version 2"));
        let none = format!("{base}m1.zones 0 PTR one.example.\n");
        assert!(consume(&catalog(&none)).is_err());
    }
}
