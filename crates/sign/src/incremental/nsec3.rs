//! The NSEC3 chain's part of a change (RFC 5155 §7.1): hashed names joining the chain
//! get an NSEC3 record, those leaving lose theirs, those whose types changed get a new
//! one, and so does the record before each hash that joined or left (its next hash
//! changes). The chain's members are the authoritative names, the delegations (with
//! opt-out only those with DS, RFC 5155 §6) and the empty non-terminals above them;
//! neighbours are found by hash in the served zone's chain.
//!
//! With opt-out, whether an empty non-terminal stays in the chain can depend on names
//! below it that the change did not touch: it is decided from the served chain when the
//! change took no member from below it, else by looking for another member below it
//! ([`descendants`], the one place a change can cost in proportion to the zone).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use tern_wire::rdata::{Nsec3, Rdata};
use tern_wire::{Dname, Name, Rtype};
use tern_zone::{decode_hash_label, Nsec3Chain, Nsec3Hash, Nsec3Position, ZoneContents};

use super::{broken, Ring, Served};
use crate::delta::Delta;
use crate::error::Result;
use crate::key::SigningKey;
use crate::names::{Kind, Rrset};
use crate::nsec3::{hashed_owner, in_chain, nsec3_rdata, nsec3_types, Nsec3Config};
use crate::view::{descendants, place, place_of, Place};
use crate::zone::signing_keys;

/// The opt-out flag of the served chain (RFC 5155 §3.1.2.1), read from the apex's record.
pub(super) fn opt_out(zone: &ZoneContents) -> Option<bool> {
    let chain = zone.nsec3()?;
    let id = chain.find_exact(&chain.params.hash(zone.origin()))?;
    let rdata = chain.node(id)?.rrset(Rtype::NSEC3)?.rdatas().next()?.get(1).copied()?;
    Some(rdata & 1 == 1)
}

/// A name the change reached: its hash, whether it has an NSEC3 record before and after
/// the change, and the types its record lists after.
#[derive(Debug)]
struct Hashed {
    hash: Nsec3Hash,
    was: bool,
    is: bool,
    types: Vec<Rtype>,
}

/// Adds to `delta` the NSEC3 records (of `config`, TTL `ttl`) made, removed and replaced
/// around `names`, the names the change reached, in the zones before and after it.
pub(super) fn change(
    (base, after): (&ZoneContents, &ZoneContents),
    names: &BTreeSet<Name>,
    (config, ttl): (&Nsec3Config, u32),
    keys: &[SigningKey],
    delta: &mut Delta,
) -> Result<()> {
    let chain = base.nsec3().ok_or_else(|| broken("no NSEC3 chain"))?;
    let hashed = memberships((base, after), names, chain, config.opt_out);
    let sorted = |f: fn(&Hashed) -> bool| -> Vec<Nsec3Hash> {
        let mut out: Vec<Nsec3Hash> = hashed.iter().filter(|h| f(h)).map(|h| h.hash).collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    let joined = sorted(|h| h.is && !h.was);
    let left = sorted(|h| h.was && !h.is);
    let mut redo: BTreeMap<Nsec3Hash, Option<Vec<Rtype>>> =
        hashed.iter().filter(|h| h.is).map(|h| (h.hash, Some(h.types.clone()))).collect();
    let ring = Ring { served: Nsec3s(chain), joined: &joined, left: &left };
    for hash in joined.iter().chain(&left) {
        redo.entry(ring.before(hash)?).or_insert(None);
    }
    let origin = base.origin();
    for hash in &left {
        if let Some(nsec3) = ring.served.record(hash) {
            delta.remove_rrset(&hashed_owner(hash, origin)?, &nsec3);
        }
    }
    for (hash, types) in redo {
        let types = match types {
            Some(types) => types,
            None => ring.served.types_of(&hash)?,
        };
        record(&ring, (origin, &hash), types, (config, ttl), keys, delta)?;
    }
    Ok(())
}

/// Makes the NSEC3 record of `hash` listing `types`, unless the served chain holds it
/// already (with a signature).
fn record(
    ring: &Ring<'_, Nsec3s<'_>>,
    (origin, hash): (&Dname, &Nsec3Hash),
    types: Vec<Rtype>,
    (config, ttl): (&Nsec3Config, u32),
    keys: &[SigningKey],
    delta: &mut Delta,
) -> Result<()> {
    let rdata = nsec3_rdata(config, &ring.after(hash)?, types)?;
    let owner = hashed_owner(hash, origin)?;
    if let Some(old) = ring.served.record(hash) {
        if old.ttl == ttl && old.sig_count > 0 && old.rdatas().eq([rdata.as_slice()]) {
            return Ok(());
        }
        delta.remove_rrset(&owner, &old);
    }
    let rrset = Rrset::new(Rtype::NSEC3, ttl, vec![rdata]);
    delta.add_rrset(&owner, &rrset);
    delta.sign(&owner, rrset, signing_keys(keys, Kind::Authoritative, Rtype::NSEC3));
    Ok(())
}

/// What the chain holds of each of `names` before and after the change. Deepest names
/// first, so that an empty non-terminal is decided after the names below it.
fn memberships(
    zones: (&ZoneContents, &ZoneContents),
    names: &BTreeSet<Name>,
    chain: &Nsec3Chain,
    opt_out: bool,
) -> Vec<Hashed> {
    let (base, after) = zones;
    let mut order: Vec<&Name> = names.iter().collect();
    order.sort_by_key(|n| std::cmp::Reverse(n.label_count()));
    let mut marks = Marks { member_below: HashSet::new(), lost_below: HashSet::new() };
    let mut out = Vec::with_capacity(order.len());
    for name in order {
        let hash = chain.params.hash(name);
        let was = chain.find_exact(&hash).is_some();
        let (is, types) = match place(after, name) {
            None => (false, Vec::new()),
            Some(p) if p.data => {
                let owner = p.owner();
                (in_chain(&owner, opt_out), nsec3_types(&owner))
            }
            Some(p) => {
                (empty_in_chain(zones, (&p, name), (chain, opt_out), &marks, names), Vec::new())
            }
        };
        if is {
            marks.member_below.extend(ancestors(name, base.origin()));
        } else if was {
            marks.lost_below.extend(ancestors(name, base.origin()));
        }
        out.push(Hashed { hash, was, is, types });
    }
    out
}

/// Names below which the change left a member, or took one away.
struct Marks {
    member_below: HashSet<Name>,
    lost_below: HashSet<Name>,
}

/// The ancestors of `name` below `origin`.
fn ancestors(name: &Dname, origin: &Dname) -> Vec<Name> {
    let mut out = Vec::new();
    let mut above = name.parent();
    while let Some(n) = above.filter(|n| n.is_below(origin)) {
        out.push(n.to_name());
        above = n.parent();
    }
    out
}

/// Whether the empty non-terminal `name` (at `p` after the change) has an NSEC3 record:
/// when not below a cut, always without opt-out; with it, when a member lies below it
/// (RFC 5155 §7.1).
fn empty_in_chain(
    (base, after): (&ZoneContents, &ZoneContents),
    (p, name): (&Place<'_>, &Name),
    (chain, opt_out): (&Nsec3Chain, bool),
    marks: &Marks,
    names: &BTreeSet<Name>,
) -> bool {
    if p.kind == Kind::Occluded {
        return false;
    }
    if !opt_out || marks.member_below.contains(name) {
        return true;
    }
    match place(base, name) {
        None => false,
        // Its members below were all untouched but those that stayed.
        Some(b) if !b.data && !marks.lost_below.contains(name) => {
            chain.find_exact(&chain.params.hash(name)).is_some()
        }
        _ => descendants(after, p.id, names.iter())
            .into_iter()
            .any(|id| place_of(after, id).is_some_and(|d| d.data && in_chain(&d.owner(), opt_out))),
    }
}

/// The served NSEC3 chain.
struct Nsec3s<'a>(&'a Nsec3Chain);

impl<'a> Nsec3s<'a> {
    /// The served NSEC3 RRset of `hash`.
    fn record(&self, hash: &Nsec3Hash) -> Option<tern_zone::Rrset<'a>> {
        let node = self.0.node(self.0.find_exact(hash)?)?;
        node.rrset(Rtype::NSEC3).filter(|r| r.has_records())
    }

    /// The served NSEC3 record of `hash`, read.
    fn fields(&self, hash: &Nsec3Hash) -> Result<Nsec3> {
        let missing = || broken(format!("no NSEC3 record for hash {hash:02x?}"));
        let rdata = self.record(hash).and_then(|r| r.rdatas().next()).ok_or_else(missing)?;
        match Rdata::from_wire(Rtype::NSEC3, rdata) {
            Ok(Rdata::Nsec3(fields)) => Ok(fields),
            _ => Err(missing()),
        }
    }

    /// The types the served record of `hash` lists.
    fn types_of(&self, hash: &Nsec3Hash) -> Result<Vec<Rtype>> {
        Ok(self.fields(hash)?.types)
    }
}

impl Served for Nsec3s<'_> {
    type Key = Nsec3Hash;

    fn holds(&self, hash: &Nsec3Hash) -> bool {
        self.record(hash).is_some()
    }

    fn next_of(&self, hash: &Nsec3Hash) -> Result<Nsec3Hash> {
        let fields = self.fields(hash)?;
        fields.next_hashed.as_bytes().try_into().map_err(|_| broken("a next hash not of SHA-1"))
    }

    fn cover_of(&self, hash: &Nsec3Hash) -> Result<Nsec3Hash> {
        let id = match self.0.find(&just_below(hash)) {
            Some(Nsec3Position::Match(id) | Nsec3Position::Covered(id)) => Some(id),
            None => None,
        };
        let owner = id.and_then(|id| self.0.node(id)).map(|n| n.owner());
        owner
            .and_then(|o| o.first_label())
            .and_then(decode_hash_label)
            .ok_or_else(|| broken("an empty NSEC3 chain"))
    }
}

/// The hash just below `hash` (the highest for the lowest): the served chain's record
/// matching or covering it is the last one before `hash`.
fn just_below(hash: &Nsec3Hash) -> Nsec3Hash {
    let mut out = *hash;
    for byte in out.iter_mut().rev() {
        let (value, borrow) = byte.overflowing_sub(1);
        *byte = value;
        if !borrow {
            break;
        }
    }
    out
}
