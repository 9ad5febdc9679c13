//! Signature refresh: the change that replaces, in a signed zone, the RRSIGs that expire
//! before a threshold, that are not yet valid (their inception after now: made while
//! the clock was ahead, before it was set back — a validator would reject them, RFC
//! 4035 §5.3.1), that a key no longer among the keys made (or one that no longer
//! signs that RRset: a ZSK's over the DNSKEY RRset), and that adds those missing for a
//! key now among them (RFC 4035 §2.2: every algorithm of the DNSKEY RRset signs every
//! RRset — so a new algorithm signs them all). The apex DNSKEY RRset is brought to the
//! keys and published keys too, as [`sign_change`] does; the SOA, whose serial the
//! change moves, is signed again.
//!
//! Work is bounded per call: a call visits names in the node table's order from a
//! [`RefreshCursor`], the NSEC3 chain's after the zone's, and stops after a number of
//! names or of signatures made; [`Refreshed::next`] says where the next call starts.
//! Node ids are stable across changes, so slices applied in turn cover a zone that
//! changes meanwhile (names added since are signed by the change that added them).

use tern_wire::{Dname, Rtype};
use tern_zone::records::{serial_gt, with_soa_serial};
use tern_zone::{Changeset, ZoneContents};

use crate::delta::{record, Delta};
use crate::error::{Error, Result};
use crate::incremental::{key_rrsets_change, same_denial, sign_change};
use crate::key::SigningKey;
use crate::names::{Kind, Rrset};
use crate::view::place_of;
use crate::zone::{check_keys, signing_keys, SignOptions};

/// Where a refresh slice starts: a place in the zone's node table, or in its NSEC3
/// chain's. The default is the zone's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RefreshCursor {
    chain: bool,
    next: u32,
}

/// What one refresh call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshOptions {
    /// Signatures expiring before this time (seconds since the epoch, RFC 1982 serial
    /// arithmetic as RFC 4034 §3.1.5 has it) are replaced.
    pub threshold: u32,
    /// Now (seconds since the epoch): signatures whose inception is after it are
    /// replaced.
    pub now: u32,
    /// The SOA serial the change leads to, when it changes anything: after the zone's.
    pub serial: u32,
    /// Where the slice starts.
    pub start: RefreshCursor,
    /// Most names visited.
    pub max_names: usize,
    /// Signatures to make, about: the slice ends at the first name past it.
    pub max_signatures: usize,
}

/// The outcome of a refresh call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refreshed {
    /// The change (empty when nothing needed it: then the serial does not move).
    pub change: Changeset,
    /// Signatures it makes.
    pub signatures: usize,
    /// Where the next slice starts; `None` once the slice reached the end of the zone.
    pub next: Option<RefreshCursor>,
}

/// One refresh slice of `base`, a zone signed as `options` say, by `keys` (see the
/// module docs). New signatures are valid as `options.validity` says.
pub fn refresh(
    base: &ZoneContents,
    keys: &[SigningKey],
    options: &SignOptions,
    slice: &RefreshOptions,
) -> Result<Refreshed> {
    check_keys(keys)?;
    if !same_denial(base, &options.denial) {
        return Err(Error::Zone("the zone is not signed with the denial of the options".into()));
    }
    // The apex RRsets the keys make and that change are signed with the change.
    let key_change = key_rrsets_change(base, keys, options)?;
    let changed: Vec<Rtype> =
        key_change.all_removed().chain(key_change.all_added()).map(|r| r.rtype).collect();
    let dnskeys_change = !changed.is_empty();
    let skip = |kind: Kind, rtype: Rtype| {
        kind == Kind::Apex && (rtype == Rtype::SOA || changed.contains(&rtype))
    };
    let mut delta = Delta::default();
    let next = visit(base, slice, |owner, kind, rrset| {
        if !skip(kind, rrset.rtype) {
            refresh_rrset(keys, slice, (owner, kind, rrset), &mut delta);
        }
        delta.planned()
    });
    if delta.is_empty() && !dnskeys_change && !soa_due(base, keys, slice) {
        return Ok(Refreshed { change: Changeset::default(), signatures: 0, next });
    }
    let mut change = sign_change(base, &soa_bump(base, slice.serial)?, keys, options)?;
    let (removed, added) = delta.finish(keys, base.origin(), options)?;
    change.removed.extend(removed);
    change.added.extend(added);
    let signatures = change.added.iter().filter(|r| r.rtype == Rtype::RRSIG).count();
    Ok(Refreshed { change, signatures, next })
}

/// Calls `each` for every RRset with records of the names in the slice (the NSEC3
/// chain's after the zone's), which returns the signatures planned so far; returns
/// where the next slice starts.
fn visit(
    zone: &ZoneContents,
    slice: &RefreshOptions,
    mut each: impl FnMut(&Dname, Kind, &tern_zone::Rrset<'_>) -> usize,
) -> Option<RefreshCursor> {
    let mut cursor = slice.start;
    let (mut names, mut planned) = (0, 0);
    loop {
        if names >= slice.max_names || planned >= slice.max_signatures {
            return Some(cursor);
        }
        let found = if cursor.chain {
            let node = zone.nsec3().and_then(|chain| chain.node(cursor.next));
            node.map(|n| (n, Some(Kind::Authoritative)))
        } else {
            let node = zone.node(cursor.next);
            node.map(|n| (n, place_of(zone, cursor.next).map(|p| p.kind)))
        };
        match found {
            Some((node, Some(kind))) => {
                for rrset in node.rrsets().filter(|r| r.has_records()) {
                    planned = each(node.owner(), kind, &rrset);
                }
                names += 1;
            }
            Some((_, None)) => {}
            None if cursor.chain => return None,
            None => {
                cursor = RefreshCursor { chain: true, next: 0 };
                continue;
            }
        }
        cursor.next += 1;
    }
}

/// The fields of an RRSIG a refresh reads (RFC 4034 §3.1).
#[derive(Debug, Clone, Copy)]
struct RrsigFields {
    algorithm: u8,
    original_ttl: u32,
    expiration: u32,
    inception: u32,
    tag: u16,
}

impl RrsigFields {
    fn read(rdata: &[u8]) -> Option<RrsigFields> {
        let u32_at = |at: usize| Some(u32::from_be_bytes(rdata.get(at..at + 4)?.try_into().ok()?));
        Some(RrsigFields {
            algorithm: *rdata.get(2)?,
            original_ttl: u32_at(4)?,
            expiration: u32_at(8)?,
            inception: u32_at(12)?,
            tag: u16::from_be_bytes(rdata.get(16..18)?.try_into().ok()?),
        })
    }

    /// True when the signature stays: for `ttl`, expiring at or after `threshold`, and
    /// valid already at `now` (RFC 1982 arithmetic, RFC 4034 §3.1.5).
    fn stays(&self, ttl: u32, slice: &RefreshOptions) -> bool {
        self.original_ttl == ttl
            && !serial_gt(slice.threshold, self.expiration)
            && !serial_gt(self.inception, slice.now)
    }
}

/// Adds to `delta` what one RRset needs: its signatures to drop (expiring before the
/// slice's threshold, not yet valid at its `now`, for another TTL, by a key that does
/// not sign it) and the keys to sign it with (those without a signature kept).
fn refresh_rrset(
    keys: &[SigningKey],
    slice: &RefreshOptions,
    (owner, kind, rrset): (&Dname, Kind, &tern_zone::Rrset<'_>),
    delta: &mut Delta,
) {
    let wanted = signing_keys(keys, kind, rrset.rtype);
    let mut kept = vec![false; wanted.len()];
    let mut dropped = Vec::new();
    for sig in rrset.sigs() {
        let keep = RrsigFields::read(sig).and_then(|fields| {
            let by = |&i: &usize| {
                keys.get(i).is_some_and(|k| {
                    k.algorithm().number() == fields.algorithm && k.key_tag() == fields.tag
                })
            };
            let at = wanted.iter().position(by)?;
            let valid = fields.stays(rrset.ttl, slice);
            (valid && !kept.get(at).copied().unwrap_or(true)).then_some(at)
        });
        match keep.and_then(|at| kept.get_mut(at)) {
            Some(slot) => *slot = true,
            None => dropped.push(record(owner, Rtype::RRSIG, rrset.sig_ttl, sig)),
        }
    }
    let missing: Vec<usize> =
        wanted.iter().zip(&kept).filter(|(_, kept)| !**kept).map(|(&i, _)| i).collect();
    delta.removed.extend(dropped);
    if !missing.is_empty() {
        let rdatas: crate::names::Rdatas = rrset.rdatas().collect();
        delta.sign(owner, Rrset::new(rrset.rtype, rrset.ttl, rdatas), missing);
    }
}

/// True when the apex SOA's signatures need refreshing.
fn soa_due(zone: &ZoneContents, keys: &[SigningKey], slice: &RefreshOptions) -> bool {
    let Some(soa) = zone.apex().and_then(|apex| apex.rrset(Rtype::SOA)) else { return false };
    let mut delta = Delta::default();
    refresh_rrset(keys, slice, (zone.origin(), Kind::Apex, &soa), &mut delta);
    !delta.is_empty()
}

/// The change of the SOA serial to `serial`, which must follow the zone's.
fn soa_bump(zone: &ZoneContents, serial: u32) -> Result<Changeset> {
    let soa = zone.soa_record().ok_or_else(|| Error::Zone("no SOA at the apex".into()))?;
    if !serial_gt(serial, zone.serial()) {
        return Err(Error::Zone(format!("serial {serial} does not follow {}", zone.serial())));
    }
    let rdata = with_soa_serial(&soa.rdata, serial)
        .ok_or_else(|| Error::Zone("a malformed SOA at the apex".into()))?;
    let to = tern_zone::RecordData { rdata, ..soa.clone() };
    Ok(Changeset::between(soa, to))
}

#[cfg(test)]
mod tests;
