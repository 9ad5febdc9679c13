//! `PATCH /api/v1/zones/{zone}/rrsets` (docs/api.yaml): the body's RRset changes,
//! checked against the zone and turned into the steps the zone's writer carries out.
//! [`plan`] is a pure function of the body and the zone (fuzzed by
//! `fuzz/fuzz_targets/api_patch.rs`).
//!
//! The writer applies the steps with UPDATE's rules (RFC 2136 §3.4.2), which leave some
//! records out without a word: a CNAME beside other data, an SOA whose serial is not
//! higher, the deletion of the apex SOA or NS. The API promises more — after a `replace`
//! the RRset holds exactly its records, after a `delete` it is gone — so a change that
//! would not be carried out exactly is refused here, naming the rule it breaks
//! ([`PatchError::Rule`], 422):
//! * CNAME and other data at one name, a CNAME at the apex among them, and more than
//!   one CNAME record (RFC 1034 §3.6.2, RFC 2181 §10.1);
//! * an SOA anywhere but the apex, more than one, or one whose serial is not higher
//!   than the zone's (RFC 1982 serial arithmetic, RFC 2136 §3.4.2.2);
//! * deleting the apex SOA or NS RRset (RFC 2136 §3.4.2.3);
//! * DNSSEC records, which the signer maintains (as UPDATE refuses them).
//!
//! A malformed change is [`PatchError::Malformed`] (400): not the JSON documented, an
//! unknown `changetype` or type, a meta-type, a name outside the zone, an RRset named
//! twice, records given to a `delete` or none to a `replace`, and RDATA that does not
//! parse or is not exactly one record (a newline or a `;` comment would cut it short).
//!
//! The steps remove every RRset first, then add every record, so the order of the
//! changes does not matter (a CNAME may take the place of A records a later change
//! deletes). The apex NS RRset cannot be removed whole (RFC 2136 §3.4.2.3), so its
//! `replace` adds the new records and then removes the old ones that are not kept.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use tern_ctl::proto::TxnStep;
use tern_engine::Edit;
use tern_wire::{Name, Rtype};
use tern_zone::records::{canonical_eq, serial_gt, soa_serial};
use tern_zone::ZoneContents;

use tern_control::commands::{owner_name, parse_type};

/// One RRset change of the body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RrsetChange {
    name: String,
    #[serde(rename = "type")]
    rtype: String,
    /// `replace` (the RRset becomes `records`) or `delete`.
    changetype: String,
    #[serde(default)]
    ttl: Option<u32>,
    #[serde(default)]
    records: Option<Vec<String>>,
}

/// The body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RrsetChanges {
    rrsets: Vec<RrsetChange>,
}

/// Why a body was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchError {
    /// Not a well-formed change (400).
    Malformed(String),
    /// A change the zone's rules forbid, or that would not be made exactly (422).
    Rule(String),
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatchError::Malformed(why) | PatchError::Rule(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for PatchError {}

/// One step of a [`Plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// Remove the RRset.
    RemoveRrset { owner: Name, rtype: Rtype },
    /// Add a record (`text` is its RDATA as given, `rdata` parsed).
    Add { owner: Name, rtype: Rtype, ttl: u32, rdata: Vec<u8>, text: String },
    /// Remove one record.
    RemoveRecord { owner: Name, rtype: Rtype, rdata: Vec<u8> },
}

/// What a body does to a zone, in order (see the module comment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    steps: Vec<Step>,
}

/// An RRset a `replace` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Its TTL.
    pub ttl: u32,
    /// Its records' RDATA, as given (duplicates included).
    pub rdatas: Vec<Vec<u8>>,
}

/// A change parsed: its RRset, and its records for a `replace` (`None`: `delete`).
#[derive(Debug)]
struct Parsed {
    owner: Name,
    rtype: Rtype,
    ttl: Option<u32>,
    /// Each record's text as given and its RDATA.
    records: Option<Vec<(String, Vec<u8>)>>,
}

/// The types the DNSSEC signer maintains: UPDATE refuses them, so does the API.
const SIGNER_TYPES: [Rtype; 5] =
    [Rtype::RRSIG, Rtype::NSEC, Rtype::NSEC3, Rtype::NSEC3PARAM, Rtype::DNSKEY];

/// Checks the body of a PATCH against `zone` and plans its steps (see the module
/// comment).
pub fn plan(body: &[u8], zone: &ZoneContents) -> Result<Plan, PatchError> {
    let changes: RrsetChanges = serde_json::from_slice(body)
        .map_err(|e| PatchError::Malformed(format!("not RRset changes: {e}")))?;
    let origin = zone.origin();
    let mut seen = HashSet::with_capacity(changes.rrsets.len());
    let mut parsed = Vec::with_capacity(changes.rrsets.len());
    for change in &changes.rrsets {
        let one = parse_change(change, origin)?;
        if !seen.insert((one.owner.clone(), one.rtype)) {
            let why = format!("{} {}: named twice (one change an RRset)", one.owner, one.rtype);
            return Err(PatchError::Malformed(why));
        }
        parsed.push(one);
    }
    for change in &parsed {
        check_rules(change, zone)?;
    }
    check_cname(&parsed, zone)?;
    Ok(steps(parsed, zone))
}

/// One change, parsed and checked on its own.
fn parse_change(change: &RrsetChange, origin: &Name) -> Result<Parsed, PatchError> {
    let malformed = PatchError::Malformed;
    let owner = owner_name(&change.name, origin).map_err(|e| malformed(e.to_string()))?;
    let rtype = parse_type(&change.rtype).map_err(|e| malformed(e.to_string()))?;
    if rtype.is_meta() {
        return Err(malformed(format!("{owner} {rtype}: a meta-type, not a type of records")));
    }
    let what = format!("{owner} {rtype}");
    let records = match (change.changetype.to_ascii_lowercase().as_str(), &change.records) {
        ("delete", None) => None,
        ("delete", Some(_)) => return Err(malformed(format!("{what}: delete takes no records"))),
        ("replace", Some(records)) if !records.is_empty() => Some(
            records
                .iter()
                .map(|text| record(&what, rtype, text, origin))
                .collect::<Result<_, _>>()?,
        ),
        ("replace", _) => return Err(malformed(format!("{what}: replace needs records"))),
        (other, _) => {
            return Err(malformed(format!(
                "{what}: changetype `{other}`: expected replace or delete"
            )))
        }
    };
    Ok(Parsed { owner, rtype, ttl: change.ttl, records })
}

/// One record's text (of the RRset `what`), parsed; exactly one record or refused.
fn record(
    what: &str,
    rtype: Rtype,
    text: &str,
    origin: &Name,
) -> Result<(String, Vec<u8>), PatchError> {
    let refuse = |why: String| PatchError::Malformed(format!("{what} {text:?}: {why}"));
    if let Some(why) = not_one_record(text) {
        return Err(refuse(why.to_owned()));
    }
    let rdata = tern_wire::rdata::parse_str(rtype, text, Some(origin))
        .map_err(|e| refuse(e.to_string()))?;
    Ok((text.to_owned(), rdata))
}

pub use tern_wire::rdata::not_one_record;

/// The rules one change must keep on its own (see the module comment).
fn check_rules(change: &Parsed, zone: &ZoneContents) -> Result<(), PatchError> {
    let rule =
        |why: String| Err(PatchError::Rule(format!("{} {}: {why}", change.owner, change.rtype)));
    let apex = change.owner == *zone.origin();
    let count = change.records.as_ref().map(Vec::len);
    if SIGNER_TYPES.contains(&change.rtype) {
        return rule("DNSSEC records are maintained by the signer, not changed by hand".into());
    }
    match (change.rtype, apex, count) {
        (Rtype::SOA | Rtype::NS, true, None) => {
            rule("the apex SOA and NS RRsets cannot be deleted (RFC 2136 §3.4.2.3)".into())
        }
        (Rtype::SOA, false, _) => rule("an SOA record belongs at the zone's apex only".into()),
        (Rtype::SOA, true, Some(n)) if n > 1 => rule("a zone has one SOA record".into()),
        (Rtype::SOA, true, Some(_)) => check_serial(change, zone),
        (Rtype::CNAME, _, Some(n)) if n > 1 => {
            rule("a name has one CNAME record at most (RFC 1034 §3.6.2, RFC 2181 §10.1)".into())
        }
        _ => Ok(()),
    }
}

/// A new SOA's serial must be higher than the zone's (RFC 1982; RFC 2136 §3.4.2.2).
fn check_serial(change: &Parsed, zone: &ZoneContents) -> Result<(), PatchError> {
    let new = change.records.as_ref().and_then(|r| r.first()).and_then(|(_, rd)| soa_serial(rd));
    let current = zone.soa_record().and_then(|soa| soa_serial(&soa.rdata));
    match (new, current) {
        (Some(new), Some(current)) if !serial_gt(new, current) => Err(PatchError::Rule(format!(
            "{} SOA: serial {new} is not higher than the zone's {current} (RFC 1982 serial \
             arithmetic, RFC 2136 §3.4.2.2)",
            change.owner
        ))),
        _ => Ok(()),
    }
}

/// No name may hold a CNAME beside other data once the changes are made (RFC 1034
/// §3.6.2, RFC 2181 §10.1); DNSSEC types may sit beside one (RFC 4035 §2.5).
fn check_cname(parsed: &[Parsed], zone: &ZoneContents) -> Result<(), PatchError> {
    let mut after: HashMap<&Name, Vec<Rtype>> = HashMap::new();
    for change in parsed {
        let types = after.entry(&change.owner).or_insert_with(|| types_at(zone, &change.owner));
        types.retain(|t| *t != change.rtype);
        if change.records.is_some() {
            types.push(change.rtype);
        }
    }
    for (owner, types) in after {
        let others: Vec<String> = types
            .iter()
            .filter(|t| **t != Rtype::CNAME && !t.is_dnssec())
            .map(ToString::to_string)
            .collect();
        if !types.contains(&Rtype::CNAME) || others.is_empty() {
            continue;
        }
        let place = match owner == zone.origin() {
            true => "a CNAME at the zone's apex, beside its SOA and NS".to_owned(),
            false => format!("a CNAME beside other data ({})", others.join(" ")),
        };
        return Err(PatchError::Rule(format!(
            "{owner}: {place}: a CNAME must be alone at its name (RFC 1034 §3.6.2, RFC 2181 §10.1)"
        )));
    }
    Ok(())
}

/// The types of the RRsets `owner` holds in `zone`.
fn types_at(zone: &ZoneContents, owner: &Name) -> Vec<Rtype> {
    let node = zone.find(owner).and_then(|id| zone.node(id));
    node.map(|n| n.rrsets().filter(|r| r.has_records()).map(|r| r.rtype).collect())
        .unwrap_or_default()
}

/// The steps of checked changes (see the module comment).
fn steps(parsed: Vec<Parsed>, zone: &ZoneContents) -> Plan {
    let origin = zone.origin();
    let (mut removes, mut adds, mut last) = (Vec::new(), Vec::new(), Vec::new());
    for change in parsed {
        let apex = change.owner == *origin;
        let Parsed { owner, rtype, ttl, records } = change;
        let Some(records) = records else {
            removes.push(Step::RemoveRrset { owner, rtype });
            continue;
        };
        let ttl = ttl.unwrap_or_else(|| default_ttl(zone, &owner, rtype));
        match (apex, rtype) {
            (true, Rtype::NS) => last.extend(old_ns(zone, &owner, &records)),
            // An SOA is replaced by adding one with a higher serial.
            (true, Rtype::SOA) => {}
            _ => removes.push(Step::RemoveRrset { owner: owner.clone(), rtype }),
        }
        adds.extend(records.into_iter().map(|(text, rdata)| Step::Add {
            owner: owner.clone(),
            rtype,
            ttl,
            rdata,
            text,
        }));
    }
    removes.extend(adds);
    removes.extend(last);
    Plan { steps: removes }
}

/// Removals of the apex NS records that `records` do not keep.
fn old_ns(zone: &ZoneContents, apex: &Name, records: &[(String, Vec<u8>)]) -> Vec<Step> {
    let node = zone.find(apex).and_then(|id| zone.node(id));
    let Some(ns) = node.and_then(|n| n.rrset(Rtype::NS)) else { return Vec::new() };
    ns.rdatas()
        .filter(|old| !records.iter().any(|(_, new)| canonical_eq(Rtype::NS, old, new)))
        .map(|old| Step::RemoveRecord {
            owner: apex.clone(),
            rtype: Rtype::NS,
            rdata: old.to_vec(),
        })
        .collect()
}

/// A new record's TTL when none is given: its RRset's, else the SOA's (as `zone-set`).
fn default_ttl(zone: &ZoneContents, owner: &Name, rtype: Rtype) -> u32 {
    let rrset_ttl = zone.find(owner).and_then(|id| zone.node(id)?.rrset(rtype).map(|r| r.ttl));
    rrset_ttl.or_else(|| zone.soa_record().map(|soa| soa.ttl)).unwrap_or(3600)
}

impl Plan {
    /// True when the body changes nothing (no RRsets).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The steps as the zone's writer takes them (`ZoneCommand::Apply`).
    pub fn txn_steps(&self) -> Vec<TxnStep> {
        self.steps
            .iter()
            .map(|step| match step {
                Step::RemoveRrset { owner, rtype } => TxnStep::Unset {
                    owner: owner.to_string(),
                    rtype: Some(rtype.to_string()),
                    rdata: None,
                },
                Step::Add { owner, rtype, ttl, text, .. } => TxnStep::Set {
                    owner: owner.to_string(),
                    ttl: Some(*ttl),
                    rtype: rtype.to_string(),
                    rdata: text.clone(),
                },
                Step::RemoveRecord { owner, rtype, rdata } => TxnStep::Unset {
                    owner: owner.to_string(),
                    rtype: Some(rtype.to_string()),
                    rdata: Some(tern_wire::rdata::to_text(*rtype, rdata)),
                },
            })
            .collect()
    }

    /// The steps as an [`Edit`], as the writer stages them (for tests and fuzzing).
    pub fn edit(&self) -> Edit {
        let mut edit = Edit::default();
        for step in &self.steps {
            match step {
                Step::RemoveRrset { owner, rtype } => edit.delete_rrset(owner.clone(), *rtype),
                Step::Add { owner, rtype, ttl, rdata, .. } => {
                    edit.add(owner.clone(), *rtype, *ttl, rdata.clone())
                }
                Step::RemoveRecord { owner, rtype, rdata } => {
                    edit.delete_record(owner.clone(), *rtype, rdata.clone())
                }
            }
        }
        edit
    }

    /// What each `replace` asked for: the RRsets it makes, by owner and type (for tests
    /// and fuzzing: the zone after the change must hold exactly these).
    pub fn replaced(&self) -> HashMap<(Name, Rtype), Wanted> {
        let mut replaced: HashMap<(Name, Rtype), Wanted> = HashMap::new();
        for step in &self.steps {
            if let Step::Add { owner, rtype, ttl, rdata, .. } = step {
                let key = (owner.clone(), *rtype);
                let wanted =
                    replaced.entry(key).or_insert(Wanted { ttl: *ttl, rdatas: Vec::new() });
                wanted.rdatas.push(rdata.clone());
            }
        }
        replaced
    }

    /// The RRsets each `delete` removes (for tests and fuzzing).
    pub fn deleted(&self) -> Vec<(Name, Rtype)> {
        let replaced = self.replaced();
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::RemoveRrset { owner, rtype } => Some((owner.clone(), *rtype)),
                _ => None,
            })
            .filter(|key| !replaced.contains_key(key))
            .collect()
    }
}

#[cfg(test)]
mod tests;
