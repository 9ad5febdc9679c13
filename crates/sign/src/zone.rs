//! Whole-zone signing: a [`ZoneContents`] (unsigned, or signed before: its DNSSEC records
//! are made anew) and keys in; the signed zone out, ready to build a snapshot from.
//!
//! The apex gets the keys' DNSKEY RRset, signed by the KSKs or CSKs (with CDS and
//! CDNSKEY); every other authoritative RRset is signed by the ZSKs or CSKs — at a
//! delegation only DS (RFC 4035 §2.2); nothing below a zone cut. Then the denial chain
//! (NSEC, RFC 4035 §2.3, or NSEC3, RFC 5155 §7.1) with TTL min(SOA TTL, SOA MINIMUM)
//! (RFC 9077 §3), its records signed too. RRsets are signed on the caller's number of
//! threads; the records made do not depend on it (nor do the signatures, for the
//! deterministic algorithms: Ed25519 and RSA).

use tern_wire::{Dname, Name, Rtype};
use tern_zone::{ZoneBuilder, ZoneContents};

use crate::batch::Batch;
use crate::dnskey::DigestType;
use crate::error::{Error, Result};
use crate::key::SigningKey;
use crate::names::{collect, Kind, Owner, Rrset};
use crate::nsec3::{build_chain, Nsec3Config};
use crate::validity::Validity;

/// How the zone proves that names and types do not exist.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DenialConfig {
    /// An NSEC chain (RFC 4034 §4).
    #[default]
    Nsec,
    /// An NSEC3 chain (RFC 5155).
    Nsec3(Nsec3Config),
}

/// What signing a zone needs besides the zone and the keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignOptions {
    /// NSEC or NSEC3.
    pub denial: DenialConfig,
    /// Inception, expiration and jitter of every signature.
    pub validity: Validity,
    /// The DNSKEY RRset's TTL (default: the SOA's).
    pub dnskey_ttl: Option<u32>,
    /// Threads that sign (at least one: the caller's).
    pub threads: usize,
    /// DNSKEY RDATA published in the DNSKEY RRset beside the signing keys' without
    /// signing anything: keys published ahead of their use or kept while they retire
    /// (RFC 6781 §4.1.1, RFC 7583 §3.2).
    pub published: Vec<Vec<u8>>,
    /// DNSKEY RDATA of signing keys left out of the DNSKEY RRset: an algorithm
    /// rollover's new keys sign every RRset before their DNSKEYs are published (RFC 6781
    /// §4.1.4, the conservative order), and the old ones keep signing after theirs are
    /// withdrawn.
    pub withheld: Vec<Vec<u8>>,
    /// The CDS and CDNSKEY RRsets (RFC 7344 §4, RFC 8078 §4), made by the signer when
    /// given (what the zone holds of them is replaced); `None`: the zone's own, signed
    /// as they are.
    pub cds: Option<CdsRecords>,
}

/// The CDS and CDNSKEY RRsets the signer publishes at the apex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CdsRecords {
    /// None.
    Absent,
    /// For each of these DNSKEY RDATA, a CDS (SHA-256, RFC 7344 §4: the digest the
    /// parent's DS should carry) and a CDNSKEY.
    Keys(Vec<Vec<u8>>),
    /// The delete form, `0 0 0 00` and `0 3 0 AA==`: remove the DS (RFC 8078 §4).
    Delete,
}

impl SignOptions {
    /// NSEC, the DNSKEY TTL of the SOA, one thread, no key published without signing.
    pub fn new(validity: Validity) -> SignOptions {
        SignOptions {
            denial: DenialConfig::Nsec,
            validity,
            dnskey_ttl: None,
            threads: 1,
            published: Vec::new(),
            withheld: Vec::new(),
            cds: None,
        }
    }

    /// The apex DNSKEY RRset's RDATA: the keys' and the published ones, sorted, each
    /// once. A published RDATA that is not a DNSKEY's is refused.
    pub fn dnskeys(&self, keys: &[SigningKey]) -> Result<Vec<Vec<u8>>> {
        for rdata in &self.published {
            if tern_wire::rdata::Rdata::from_wire(Rtype::DNSKEY, rdata).is_err() {
                return Err(Error::Keys("a published DNSKEY RDATA is malformed"));
            }
        }
        let mut dnskeys: Vec<Vec<u8>> = keys.iter().map(|k| k.dnskey().to_vec()).collect();
        dnskeys.extend(self.published.iter().cloned());
        dnskeys.retain(|rdata| !self.withheld.contains(rdata));
        dnskeys.sort();
        dnskeys.dedup();
        Ok(dnskeys)
    }

    /// The apex RRsets the signer makes from the keys, as (type, RDATA): DNSKEY, and
    /// CDS and CDNSKEY when [`cds`](Self::cds) is given (empty: none).
    pub fn key_rrsets(
        &self,
        origin: &Dname,
        keys: &[SigningKey],
    ) -> Result<Vec<(Rtype, Vec<Vec<u8>>)>> {
        let mut rrsets = vec![(Rtype::DNSKEY, self.dnskeys(keys)?)];
        let (cds, cdnskey) = match &self.cds {
            None => return Ok(rrsets),
            Some(CdsRecords::Absent) => (Vec::new(), Vec::new()),
            Some(CdsRecords::Delete) => (
                vec![crate::policy::CDS_DELETE.to_vec()],
                vec![crate::policy::CDNSKEY_DELETE.to_vec()],
            ),
            Some(CdsRecords::Keys(dnskeys)) => {
                let digest = |k: &Vec<u8>| crate::dnskey::ds_rdata(origin, k, DigestType::Sha256);
                let mut cds = dnskeys.iter().map(digest).collect::<Result<Vec<_>>>()?;
                let mut cdnskey = dnskeys.clone();
                cds.sort();
                cdnskey.sort();
                (cds, cdnskey)
            }
        };
        rrsets.push((Rtype::CDS, cds));
        rrsets.push((Rtype::CDNSKEY, cdnskey));
        Ok(rrsets)
    }
}

/// A signed zone: every owner with its RRsets and their RRSIGs, and the denial chain's
/// owners (NSEC3 owners after the others); the unsigned zone's names and records
/// borrowed from it (`'z`).
#[derive(Debug, Clone)]
pub struct SignedZone<'z> {
    origin: Name,
    owners: Vec<Owner<'z>>,
    signatures: usize,
}

impl<'z> SignedZone<'z> {
    /// The zone's origin.
    pub fn origin(&self) -> &Name {
        &self.origin
    }

    /// The owners: the zone's in canonical order, then the NSEC3 chain's in hash order.
    pub fn owners(&self) -> &[Owner<'z>] {
        &self.owners
    }

    /// How many RRSIG records were made.
    pub fn signature_count(&self) -> usize {
        self.signatures
    }

    /// Calls `f` for every record as (owner, type, TTL, RDATA), each RRset followed by
    /// its RRSIGs (type RRSIG, the RRset's TTL, RFC 4034 §3).
    pub fn for_each_record(&self, mut f: impl FnMut(&Dname, Rtype, u32, &[u8])) {
        self.owners.iter().for_each(|owner| owner_records(owner, &mut f));
    }

    /// The zone snapshot of these records, as Tern's engine serves it. Takes the signed
    /// zone: each owner is freed as soon as its records are in the builder, so that the
    /// snapshot's node data, made at the end, reuses the memory the owners held (their
    /// signatures and lists of RRsets) instead of adding to it (a lower peak), and lies
    /// packed there rather than scattered among them (more of the freed heap goes back
    /// to the system once the unsigned zone is dropped too).
    pub fn to_contents(self) -> Result<ZoneContents> {
        let mut builder = ZoneBuilder::new(&self.origin);
        for owner in self.owners {
            owner_records(&owner, &mut |name, rtype, ttl, rdata| {
                builder.add(name, rtype, ttl, rdata)
            });
        }
        builder.finish().map(|(contents, _)| contents).map_err(|e| Error::Build(e.to_string()))
    }
}

/// Calls `f` for every record of `owner` (see [`SignedZone::for_each_record`]).
fn owner_records(owner: &Owner<'_>, f: &mut impl FnMut(&Dname, Rtype, u32, &[u8])) {
    for rrset in &owner.rrsets {
        rrset.rdatas.iter().for_each(|rd| f(&owner.name, rrset.rtype, rrset.ttl, rd));
        rrset.sigs.iter().for_each(|rd| f(&owner.name, Rtype::RRSIG, rrset.ttl, rd));
    }
}

/// Signs `zone` with `keys` (a KSK and a ZSK, or a CSK, per algorithm; see
/// [`check_keys`]); the signed zone borrows the unsigned one's names and records. Never
/// inlined, so that a profile can single it out (it runs once a zone).
#[inline(never)]
pub fn sign_zone<'z>(
    zone: &'z ZoneContents,
    keys: &[SigningKey],
    options: &SignOptions,
) -> Result<SignedZone<'z>> {
    check_keys(keys)?;
    let origin = zone.origin().clone();
    let mut owners = collect(zone, options.denial == DenialConfig::Nsec)?;
    let (soa_ttl, negative_ttl) = soa_ttls(&owners)?;
    let apex = owners.first_mut().ok_or_else(|| Error::Zone(format!("{origin} is empty")))?;
    let key_ttl = options.dnskey_ttl.unwrap_or(soa_ttl);
    for (rtype, rdatas) in options.key_rrsets(&origin, keys)? {
        match rdatas.is_empty() {
            true => apex.remove(rtype),
            false => apex.replace(Rrset::new(rtype, key_ttl, rdatas)),
        }
    }
    match &options.denial {
        DenialConfig::Nsec => crate::nsec::add_chain(&mut owners, negative_ttl),
        DenialConfig::Nsec3(config) => {
            let param = config.nsec3param_rdata()?;
            apex.insert(Rrset::new(Rtype::NSEC3PARAM, negative_ttl, vec![param]));
            let chain = build_chain(&owners, &origin, config, negative_ttl)?;
            owners.extend(chain);
        }
    }
    let signatures = sign_owners(&mut owners, keys, &origin, options)?;
    Ok(SignedZone { origin, owners, signatures })
}

/// The SOA's TTL, and the TTL of denial records: the lesser of it and the SOA MINIMUM
/// (RFC 9077 §3, updating RFC 4034 §4 and RFC 5155 §3).
fn soa_ttls(owners: &[Owner<'_>]) -> Result<(u32, u32)> {
    let soa = owners.first().and_then(|apex| apex.rrset(Rtype::SOA));
    soa_ttls_of(soa.and_then(|s| Some((s.ttl, s.rdatas.first()?))))
}

/// [`soa_ttls`] of an SOA given as (TTL, RDATA).
pub(crate) fn soa_ttls_of(soa: Option<(u32, &[u8])>) -> Result<(u32, u32)> {
    let numbers = soa.and_then(|(ttl, rdata)| Some((ttl, tern_zone::records::soa_numbers(rdata)?)));
    let (ttl, numbers) =
        numbers.ok_or_else(|| Error::Zone("no well-formed SOA at the apex".into()))?;
    Ok((ttl, ttl.min(numbers.minimum)))
}

/// Checks that `keys` can sign a zone: at least one key, and for every algorithm among
/// them a key that signs the DNSKEY RRset and one that signs the rest (RFC 4035 §2.2:
/// each algorithm of the DNSKEY RRset signs every RRset).
pub fn check_keys(keys: &[SigningKey]) -> Result<()> {
    if keys.is_empty() {
        return Err(Error::Keys("no key"));
    }
    for key in keys {
        let same = || keys.iter().filter(|k| k.algorithm() == key.algorithm());
        if !same().any(|k| k.role().signs_keys()) {
            return Err(Error::Keys("an algorithm without a KSK or CSK"));
        }
        if !same().any(|k| k.role().signs_zone()) {
            return Err(Error::Keys("an algorithm without a ZSK or CSK"));
        }
    }
    Ok(())
}

/// True for the RRsets the KSKs sign at an owner of `kind`: the apex's DNSKEY, CDS and
/// CDNSKEY (RFC 7344 §4.1).
pub(crate) fn signed_by_ksk_at(kind: Kind, rtype: Rtype) -> bool {
    kind == Kind::Apex && matches!(rtype, Rtype::DNSKEY | Rtype::CDS | Rtype::CDNSKEY)
}

/// The keys that sign the RRset of `rtype` at an owner of `kind` (none when it is not
/// signed, see [`is_signed`]), as indices into `keys`.
pub(crate) fn signing_keys(keys: &[SigningKey], kind: Kind, rtype: Rtype) -> Vec<usize> {
    if !kind.signs(rtype) {
        return Vec::new();
    }
    let by_ksk = signed_by_ksk_at(kind, rtype);
    let signs = |k: &SigningKey| if by_ksk { k.role().signs_keys() } else { k.role().signs_zone() };
    (0..keys.len()).filter(|&i| keys.get(i).is_some_and(signs)).collect()
}

/// Signs every RRset that is signed (see [`crate::names::is_signed`]) on the options'
/// threads, a chunk of owners at a time by one thread ([`Batch`]), the RRSIGs put in
/// place there; returns how many were made.
fn sign_owners(
    owners: &mut [Owner<'_>],
    keys: &[SigningKey],
    signer: &Dname,
    options: &SignOptions,
) -> Result<usize> {
    let validity = &options.validity;
    crate::parallel::for_each_chunk(owners, options.threads, Batch::default, |batch, chunk| {
        batch.sign(chunk, keys, signer, validity)
    })
}

#[cfg(test)]
mod tests;
