//! Incremental signing: a change to a signed zone, made unsigned (as an UPDATE, a
//! reload's difference or a transaction makes it), turned into the change a signer
//! publishes — the change itself and what signing adds and removes around it.
//!
//! [`sign_change`] applies the unsigned change to the served zone (copy-on-write, so
//! in proportion to the change), then looks only at the names the change can reach: its
//! owners; their ancestors (empty non-terminals appear and disappear, and with NSEC3
//! opt-out an empty non-terminal is hashed only above a secure name); and, where a zone
//! cut appears or goes, the names below it (they become occluded or authoritative, RFC
//! 4035 §2.2). For each it compares what a whole-zone signing ([`crate::sign_zone`])
//! would make with what the zone holds: an RRset whose records and TTL did not change
//! keeps its signatures; one that changed is signed again; the denial records of names
//! joining or leaving the chain are made or removed, and their neighbours' next-name
//! fields follow, found from the zone's own chain (the canonical order for NSEC, RFC 4034
//! §4.1.1; the NSEC3 hash order, RFC 5155 §7.1) without reading the rest of the zone.
//!
//! The apex DNSKEY RRset is the signer's: the keys' and [`SignOptions::published`], as
//! `sign_zone` makes it. DNSKEY records a change brings at the apex are left out, and
//! the RRset is brought to what the keys and options say (and signed again) whenever it
//! differs.
//!
//! Signatures of untouched RRsets are kept as they are, whoever made them: signatures by
//! keys no longer used, or missing for new keys, are [`crate::refresh`]'s work.
//!
//! A change of denial (NSEC and NSEC3, or other NSEC3 parameters), of the denial records'
//! TTL (the SOA TTL or MINIMUM, RFC 9077 §3), or to a zone not signed yet, changes every
//! denial record: it is made by signing the whole new zone and taking the difference
//! ([`ZoneContents::diff`]), every signature made anew.
//!
//! Cost: in proportion to the change (the zone crate's copy-on-write apply, an ordered
//! lookup or a hash lookup per name reached, the signatures made), with two exceptions
//! where names below a name must be found and the change does not list them all: a zone
//! cut added or removed above names the change leaves alone, and, with NSEC3 opt-out, an
//! empty non-terminal that may have lost its last secure name below. An NSEC zone walks
//! its canonical order over the subtree; an NSEC3 zone, which keeps none, scans its node
//! table (`view::descendants`).
//!
//! Not checked: NSEC3 hash collisions between a new name and the zone's (`sign_zone`
//! refuses them; here one would go unnoticed, at SHA-1's odds).

mod nsec;
mod nsec3;
#[cfg(test)]
pub(crate) mod tests;

use std::cmp::Ordering;
use std::collections::BTreeSet;

use tern_wire::{Dname, Name, Rtype};
use tern_zone::{Changeset, Denial, RecordData, ZoneContents};

use crate::delta::Delta;
use crate::error::{Error, Result};
use crate::key::SigningKey;
use crate::names::Rrset;
use crate::view::{descendants, has_ns, place};
use crate::zone::{check_keys, sign_zone, signing_keys, soa_ttls_of, DenialConfig, SignOptions};

/// The signed form of `change`, an unsigned change (no RRSIG, NSEC, NSEC3 or
/// NSEC3PARAM record) to `base`, a zone signed as `options` say (as served: the signed
/// [`ZoneContents`]): `change` with the DNSSEC records it makes stale removed and the
/// new ones added, signed by `keys`. Applied to `base`, it gives the zone
/// [`sign_zone`] would make from the new unsigned zone (the same records; signatures
/// of untouched RRsets are kept, new ones may differ in their bytes).
///
/// The SOA's signature is made again when the change replaces the SOA (its serial, as
/// the caller chooses it).
pub fn sign_change(
    base: &ZoneContents,
    change: &Changeset,
    keys: &[SigningKey],
    options: &SignOptions,
) -> Result<Changeset> {
    check_keys(keys)?;
    let change = unsigned_part(base.origin(), change, options.cds.is_some())?;
    let after = apply(base, &change)?;
    Ok(sign_onto(base, after, change, keys, options)?.change)
}

/// [`sign_change`] for a change the caller has applied already: `applied` is `base`
/// with `change` applied (as a commit that judged the change made it). Returns the
/// signed change and the version it makes of `base`, made from `applied` by what
/// signing adds and removes — the nodes `change` touched are not copied from `base`
/// again, nor the change applied twice. The version holds the records of `base` with
/// the signed change applied.
pub fn sign_change_applied(
    base: &ZoneContents,
    applied: ZoneContents,
    change: &Changeset,
    keys: &[SigningKey],
    options: &SignOptions,
) -> Result<(Changeset, ZoneContents)> {
    check_keys(keys)?;
    if applied.serial() != change.to_serial().unwrap_or(base.serial()) {
        return Err(Error::Change("the version given is not the change applied".into()));
    }
    let unsigned = unsigned_part(base.origin(), change, options.cds.is_some())?;
    let same = unsigned.removed.len() == change.removed.len()
        && unsigned.added.len() == change.added.len();
    // Records left out (the apex DNSKEY RRset is the signer's): applied again without.
    let after = if same { applied } else { apply(base, &unsigned)? };
    sign_onto(base, after, unsigned, keys, options)?.finish()
}

/// A change signed ([`sign_onto`]), and the version it makes as far as made: `zone`,
/// to which what `rest` says is still to be applied.
struct Signed {
    change: Changeset,
    zone: ZoneContents,
    rest: Rest,
}

/// What of a signed change is still to be applied to the version made so far.
enum Rest {
    /// All of it (the version is the base).
    Whole,
    /// Its removed and added records from these positions on, but the signatures and
    /// NSEC records at `stripped`, which are gone already.
    From { removed: usize, added: usize, stripped: BTreeSet<Name> },
}

impl Signed {
    /// The signed change and the version it makes.
    fn finish(self) -> Result<(Changeset, ZoneContents)> {
        let Signed { change, mut zone, rest } = self;
        let Rest::From { removed, added, stripped } = rest else {
            apply_in_place(&mut zone, &change)?;
            return Ok((change, zone));
        };
        let gone = |r: &&RecordData| {
            matches!(r.rtype, Rtype::RRSIG | Rtype::NSEC) && stripped.contains(&r.owner)
        };
        let left = Changeset {
            removed: change.removed.iter().skip(removed).filter(|r| !gone(r)).cloned().collect(),
            added: change.added.get(added..).unwrap_or_default().to_vec(),
            ..Changeset::default()
        };
        apply_in_place(&mut zone, &left)?;
        Ok((change, zone))
    }
}

/// The signed form of `change` (as [`sign_change`] says), `after` being `base` with
/// `change` applied; `after` is brought on towards the signed version as far as
/// reading it needs (see [`Signed`]).
fn sign_onto(
    base: &ZoneContents,
    mut after: ZoneContents,
    change: Changeset,
    keys: &[SigningKey],
    options: &SignOptions,
) -> Result<Signed> {
    let soa = after.soa_record().map(|soa| (soa.ttl, soa.rdata));
    let (_, negative_ttl) = soa_ttls_of(soa.as_ref().map(|(ttl, rd)| (*ttl, rd.as_slice())))?;
    if !same_denial(base, &options.denial) || chain_ttl(base) != Some(negative_ttl) {
        return resign_whole(base, &after, change, keys, options);
    }
    let mut touched = owners_of(&change);
    let stripped = strip_emptied(&mut after, &touched)?;
    let dnskeys = key_rrsets_change(&after, keys, options)?;
    if !dnskeys.is_empty() {
        apply_in_place(&mut after, &dnskeys)?;
        touched.insert(base.origin().clone());
    }
    let names = reached(base, &after, &touched);
    let mut delta = Delta::default();
    for name in &names {
        data_signatures(base, &after, name, keys, &mut delta);
    }
    let zones = (base, &after);
    match &options.denial {
        DenialConfig::Nsec => nsec::change(zones, &names, negative_ttl, keys, &mut delta)?,
        DenialConfig::Nsec3(config) => {
            nsec3::change(zones, &names, (config, negative_ttl), keys, &mut delta)?
        }
    }
    let (removed, added) = delta.finish(keys, base.origin(), options)?;
    let mut signed = change;
    signed.removed.extend(dnskeys.removed);
    signed.added.extend(dnskeys.added);
    let rest = Rest::From { removed: signed.removed.len(), added: signed.added.len(), stripped };
    signed.removed.extend(removed);
    signed.added.extend(added);
    Ok(Signed { change: signed, zone: after, rest })
}

/// `change` without the apex DNSKEY records (the signer's; CDS and CDNSKEY too when
/// `cds`, the signer making them); refused when it holds records that signing makes.
fn unsigned_part(origin: &Dname, change: &Changeset, cds: bool) -> Result<Changeset> {
    let all = change.all_removed().chain(change.all_added());
    if let Some(r) = all.into_iter().find(|r| made_by_signing(r.rtype)) {
        return Err(Error::Change(format!(
            "{} {} is made by the signer, not taken from an unsigned change",
            r.owner, r.rtype
        )));
    }
    let signers = |rtype: Rtype| {
        rtype == Rtype::DNSKEY || (cds && matches!(rtype, Rtype::CDS | Rtype::CDNSKEY))
    };
    let keep = |r: &&RecordData| !(signers(r.rtype) && r.owner.eq_ignore_case(origin));
    Ok(Changeset {
        soa_from: change.soa_from.clone(),
        soa_to: change.soa_to.clone(),
        removed: change.removed.iter().filter(keep).cloned().collect(),
        added: change.added.iter().filter(keep).cloned().collect(),
    })
}

/// Types that signing makes.
fn made_by_signing(rtype: Rtype) -> bool {
    matches!(rtype, Rtype::RRSIG | Rtype::NSEC | Rtype::NSEC3 | Rtype::NSEC3PARAM)
}

/// True when `base` is signed with the denial `denial` describes: NSEC, or NSEC3 with
/// the same parameters and opt-out.
pub fn same_denial(base: &ZoneContents, denial: &DenialConfig) -> bool {
    match (base.denial(), denial) {
        (Denial::Nsec, DenialConfig::Nsec) => true,
        (Denial::Nsec3, DenialConfig::Nsec3(config)) => base.nsec3().is_some_and(|chain| {
            // The chain's flags may be those of an NSEC3 record (opt-out), not NSEC3PARAM's.
            let (have, want) = (&chain.params, config.params());
            (have.algorithm, have.iterations, &have.salt)
                == (want.algorithm, want.iterations, &want.salt)
                && nsec3::opt_out(base) == Some(config.opt_out)
        }),
        _ => false,
    }
}

/// The TTL of the zone's denial records, as the apex's NSEC or NSEC3PARAM has it.
fn chain_ttl(zone: &ZoneContents) -> Option<u32> {
    let rtype = if zone.denial() == Denial::Nsec { Rtype::NSEC } else { Rtype::NSEC3PARAM };
    zone.apex()?.rrset(rtype).filter(|r| r.has_records()).map(|r| r.ttl)
}

/// The whole new zone (`unsigned`: `base` with `change` applied) signed, as a change
/// from `base` (see the module docs).
fn resign_whole(
    base: &ZoneContents,
    unsigned: &ZoneContents,
    change: Changeset,
    keys: &[SigningKey],
    options: &SignOptions,
) -> Result<Signed> {
    drop(change);
    let signed = sign_zone(unsigned, keys, options)?.to_contents()?;
    let change = base.diff(&signed).ok_or_else(|| Error::Zone("no SOA at the apex".into()))?;
    Ok(Signed { change, zone: base.clone(), rest: Rest::Whole })
}

/// `zone` with `change` applied.
fn apply(zone: &ZoneContents, change: &Changeset) -> Result<ZoneContents> {
    zone.apply(change).map(|(zone, _)| zone).map_err(|e| Error::Change(e.to_string()))
}

/// Applies `change` to `zone` itself (on an error, `zone` is to be dropped).
fn apply_in_place(zone: &mut ZoneContents, change: &Changeset) -> Result<()> {
    zone.apply_in_place(change).map(drop).map_err(|e| Error::Change(e.to_string()))
}

/// The owners of a change's records, once each.
fn owners_of(change: &Changeset) -> BTreeSet<Name> {
    change.all_removed().chain(change.all_added()).map(|r| r.owner.clone()).collect()
}

/// Removes from `after` the signatures and NSEC records of the names among `touched`
/// that the change left without data, so that such a name disappears, with the empty
/// non-terminals only it made (the signed change removes them too: a name without data
/// has neither). Returns those names, spelled as the zone spells them. The apex always
/// holds data (its SOA).
fn strip_emptied(after: &mut ZoneContents, touched: &BTreeSet<Name>) -> Result<BTreeSet<Name>> {
    let mut names = BTreeSet::new();
    let mut delta = Delta::default();
    for name in touched {
        let Some(p) = place(after, name).filter(|p| !p.data) else { continue };
        for rrset in p.node.rrsets() {
            if rrset.rtype == Rtype::NSEC {
                delta.remove_rrset(p.node.owner(), &rrset);
            } else {
                delta.remove_sigs(p.node.owner(), &rrset);
            }
        }
        names.insert(p.node.owner().to_name());
    }
    if !delta.removed.is_empty() {
        apply_in_place(after, &Changeset { removed: delta.removed, ..Changeset::default() })?;
    }
    Ok(names)
}

/// The change that brings the apex RRsets the signer makes from the keys (DNSKEY, and
/// CDS and CDNSKEY when the options give them: [`SignOptions::key_rrsets`]) of `zone` to
/// what the keys and options say, with the options' DNSKEY TTL (else the SOA's); empty
/// when they are so.
pub(crate) fn key_rrsets_change(
    zone: &ZoneContents,
    keys: &[SigningKey],
    options: &SignOptions,
) -> Result<Changeset> {
    let soa = zone.soa_record().ok_or_else(|| Error::Zone("no SOA at the apex".into()))?;
    let ttl = options.dnskey_ttl.unwrap_or(soa.ttl);
    let mut out = Changeset::default();
    for (rtype, wanted) in options.key_rrsets(zone.origin(), keys)? {
        rrset_change(zone, (rtype, ttl), &wanted, &mut out);
    }
    Ok(out)
}

/// Adds to `out` what brings the apex RRset of `rtype` to `wanted` with `ttl`.
fn rrset_change(
    zone: &ZoneContents,
    (rtype, ttl): (Rtype, u32),
    wanted: &[Vec<u8>],
    out: &mut Changeset,
) {
    let origin = zone.origin();
    let current = zone.apex().and_then(|apex| apex.rrset(rtype));
    let (old_ttl, old): (u32, Vec<Vec<u8>>) =
        current.map(|r| (r.ttl, r.rdatas().map(<[u8]>::to_vec).collect())).unwrap_or_default();
    let record = |rd: &Vec<u8>, ttl| crate::delta::record(origin, rtype, ttl, rd);
    let same_ttl = old.is_empty() || wanted.is_empty() || old_ttl == ttl;
    let gone = old.iter().filter(|rd| !same_ttl || !wanted.contains(rd));
    out.removed.extend(gone.map(|rd| record(rd, old_ttl)));
    let new = wanted.iter().filter(|rd| !same_ttl || !old.contains(rd));
    out.added.extend(new.map(|rd| record(rd, ttl)));
}

/// The names a change reaches (see the module docs), in canonical order.
fn reached(base: &ZoneContents, after: &ZoneContents, touched: &BTreeSet<Name>) -> BTreeSet<Name> {
    let origin = base.origin();
    let mut names = BTreeSet::new();
    for name in touched {
        let mut above: Option<&Dname> = Some(name);
        while let Some(n) = above.filter(|n| n.ends_with(origin)) {
            names.insert(n.to_name());
            above = n.parent().filter(|_| !n.eq_ignore_case(origin));
        }
        let cut =
            |zone: &ZoneContents| zone.find(name).and_then(|id| zone.node(id)).is_some_and(has_ns);
        if name.eq_ignore_case(origin) || cut(base) == cut(after) {
            continue;
        }
        let Some(top) = base.find(name) else { continue };
        for id in descendants(base, top, touched.iter()) {
            names.extend(base.node(id).map(|n| n.owner().to_name()));
        }
    }
    names
}

/// The signatures of the data RRsets at `name`: kept for an RRset that is signed, was
/// signed and did not change; made for one signed that changed or was not signed;
/// removed from one no longer signed (RFC 4035 §2.2) or gone.
fn data_signatures(
    base: &ZoneContents,
    after: &ZoneContents,
    name: &Dname,
    keys: &[SigningKey],
    delta: &mut Delta,
) {
    let before = place(base, name);
    let now = place(after, name).filter(|p| p.data);
    let owner = now.map(|p| p.owner());
    let mut types: Vec<Rtype> =
        before.map(|p| p.node.rrsets().map(|r| r.rtype).collect()).unwrap_or_default();
    types.extend(owner.iter().flat_map(|o| o.rrsets.iter().map(|r| r.rtype)));
    types.retain(|&t| !matches!(t, Rtype::RRSIG | Rtype::NSEC | Rtype::NSEC3));
    types.sort_by_key(|t| t.0);
    types.dedup();
    for rtype in types {
        let old = before.and_then(|p| p.node.rrset(rtype));
        let new = owner.as_ref().filter(|o| o.kind.signs(rtype)).and_then(|o| o.rrset(rtype));
        let kept = old.is_some_and(|o| o.sig_count > 0 && new.is_some_and(|n| same_records(&o, n)));
        if kept {
            continue;
        }
        if let (Some(old), Some(p)) = (old, before) {
            delta.remove_sigs(p.node.owner(), &old);
        }
        if let (Some(new), Some(o)) = (new, owner.as_ref()) {
            delta.sign(&o.name, new.clone().into_owned(), signing_keys(keys, o.kind, rtype));
        }
    }
}

/// True when a stored RRset holds the records and TTL of `rrset`.
fn same_records(stored: &tern_zone::Rrset<'_>, rrset: &Rrset<'_>) -> bool {
    let mut old: Vec<&[u8]> = stored.rdatas().collect();
    let mut new: Vec<&[u8]> = rrset.rdatas.iter().collect();
    old.sort_unstable();
    new.sort_unstable();
    stored.ttl == rrset.ttl && old == new
}

/// A served denial chain as incremental signing reads it: by owner name (NSEC) or by
/// hash (NSEC3).
trait Served {
    /// What orders the chain.
    type Key: Ord + Clone;
    /// True when `key` has a record in the served chain.
    fn holds(&self, key: &Self::Key) -> bool;
    /// The next key of the served record of `key`.
    fn next_of(&self, key: &Self::Key) -> Result<Self::Key>;
    /// The served chain's last key before `key` (going round).
    fn cover_of(&self, key: &Self::Key) -> Result<Self::Key>;
}

/// The new chain seen from the served one: its keys but those that `left`, and those
/// that `joined` (both sorted).
struct Ring<'a, S: Served> {
    served: S,
    joined: &'a [S::Key],
    left: &'a [S::Key],
}

impl<S: Served> Ring<'_, S> {
    /// The first key from `key` on (itself included) that did not leave the chain,
    /// stepping with `step`.
    fn staying(&self, mut key: S::Key, step: impl Fn(&S::Key) -> Result<S::Key>) -> Result<S::Key> {
        for _ in 0..=self.left.len() {
            if self.left.binary_search(&key).is_err() {
                break;
            }
            key = step(&key)?;
        }
        Ok(key)
    }

    /// The new chain's key after `key`, a member of it.
    fn after(&self, key: &S::Key) -> Result<S::Key> {
        let from = if self.served.holds(key) { key.clone() } else { self.served.cover_of(key)? };
        let next = self.staying(self.served.next_of(&from)?, |k| self.served.next_of(k))?;
        Ok(first_between(self.joined, key, &next).cloned().unwrap_or(next))
    }

    /// The new chain's key before `key`.
    fn before(&self, key: &S::Key) -> Result<S::Key> {
        let before = self.staying(self.served.cover_of(key)?, |k| self.served.cover_of(k))?;
        Ok(last_between(self.joined, &before, key).cloned().unwrap_or(before))
    }
}

/// True when `x` lies strictly after `from` and strictly before `to` going round a
/// circular order (every `x` but `from` itself when `from` is `to`): a chain's
/// interval (RFC 4034 §4.1.1, RFC 5155 §3.1.7: the last points back to the first).
fn between<T: Ord>(from: &T, x: &T, to: &T) -> bool {
    match from.cmp(to) {
        Ordering::Less => from < x && x < to,
        _ => x > from || x < to,
    }
}

/// The first of `sorted` going round from `from`, if it lies before `to`.
fn first_between<'a, T: Ord>(sorted: &'a [T], from: &T, to: &T) -> Option<&'a T> {
    let at = sorted.partition_point(|x| x <= from);
    let first = sorted.get(at).or(sorted.first())?;
    between(from, first, to).then_some(first)
}

/// The last of `sorted` going round back from `to`, if it lies after `from`.
fn last_between<'a, T: Ord>(sorted: &'a [T], from: &T, to: &T) -> Option<&'a T> {
    let at = sorted.partition_point(|x| x < to);
    let last = at.checked_sub(1).and_then(|i| sorted.get(i)).or(sorted.last())?;
    between(from, last, to).then_some(last)
}

/// A chain broken where incremental signing reads it.
fn broken(what: impl std::fmt::Display) -> Error {
    Error::Zone(format!("the zone's denial chain is not as signed: {what}"))
}
