//! The NSEC3 chain (RFC 5155 §7.1): NSEC3PARAM at the apex, and one NSEC3 record per
//! hashed name — every authoritative name, every delegation point (with opt-out, only
//! those with a DS: RFC 5155 §6, §7.1) and every empty non-terminal above them — in hash
//! order, each pointing at the next hash, the last back at the first.
//!
//! The defaults follow RFC 9276 §3.1: SHA-1 (the only hash defined), no extra iterations,
//! an empty salt.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use tern_wire::rdata::{CharString, Nsec, Nsec3, Nsec3param, Rdata};
use tern_wire::{Dname, Name, Rtype};
use tern_zone::{Nsec3Hash, Nsec3Params};

use crate::error::{Error, Result};
use crate::names::{denial_types_into, is_signed, Kind, Owner, Rdatas, Rrset};

/// SHA-1, the one NSEC3 hash algorithm (RFC 5155 §11).
const SHA1: u8 = 1;
/// The Opt-Out flag of NSEC3 records (RFC 5155 §3.1.2.1).
const OPT_OUT: u8 = 1;

/// How the NSEC3 chain is made.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Nsec3Config {
    /// Extra hash iterations (RFC 9276 §3.1: 0).
    pub iterations: u16,
    /// The salt, up to 255 bytes (RFC 9276 §3.1: empty).
    pub salt: Vec<u8>,
    /// Opt-out (RFC 5155 §6): delegations without DS get no NSEC3 record of their own.
    pub opt_out: bool,
}

impl Nsec3Config {
    /// The hashing parameters of the chain.
    pub fn params(&self) -> Nsec3Params {
        Nsec3Params {
            algorithm: SHA1,
            flags: 0,
            iterations: self.iterations,
            salt: self.salt.clone(),
        }
    }

    fn salt(&self) -> Result<CharString> {
        CharString::new(self.salt.clone()).map_err(Error::Nsec3)
    }

    /// The NSEC3PARAM RDATA (RFC 5155 §4: flags 0).
    pub fn nsec3param_rdata(&self) -> Result<Vec<u8>> {
        let salt = self.salt()?;
        let param = Nsec3param { algorithm: SHA1, flags: 0, iterations: self.iterations, salt };
        Ok(Rdata::Nsec3param(param).to_wire_vec())
    }
}

/// Whether `owner` has an NSEC3 record of its own.
pub fn in_chain(owner: &Owner<'_>, opt_out: bool) -> bool {
    match owner.kind {
        Kind::Apex | Kind::Authoritative => true,
        Kind::Delegation => !opt_out || owner.rrset(Rtype::DS).is_some(),
        Kind::Occluded => false,
    }
}

/// The types an NSEC3 record lists for `owner` (RFC 5155 §3.2.1): those its denial
/// covers, and RRSIG when any of them is signed (an insecure delegation has none).
pub fn nsec3_types(owner: &Owner<'_>) -> Vec<Rtype> {
    let mut types = Vec::with_capacity(owner.rrsets.len() + 1);
    nsec3_types_into(owner, &mut types);
    types
}

/// Appends [`nsec3_types`] of `owner` to `types` (empty).
fn nsec3_types_into(owner: &Owner<'_>, types: &mut Vec<Rtype>) {
    denial_types_into(owner, types);
    if types.iter().any(|&t| is_signed(owner, t)) {
        types.push(Rtype::RRSIG);
    }
}

/// A name the chain hashes: an owner of the zone (by its index), or an empty
/// non-terminal above one (RFC 5155 §7.1), which lists no type.
enum Hashed {
    Owner(usize),
    Empty(Name),
}

impl Hashed {
    fn name<'a>(&'a self, owners: &'a [Owner<'_>]) -> Option<&'a Dname> {
        match self {
            Hashed::Owner(i) => owners.get(*i).map(|o| &*o.name),
            Hashed::Empty(name) => Some(name),
        }
    }
}

/// The names the chain hashes: each member, then the empty non-terminals above it, each
/// also given to `each` with its place in the list as soon as it is met (while its
/// name is in the cache). The set of the zone's names is made only when a member lies
/// deeper than a child of the apex (in a TLD, none does).
fn hashed_names(
    owners: &[Owner<'_>],
    origin: &Dname,
    opt_out: bool,
    mut each: impl FnMut(usize, &Hashed),
) -> Vec<Hashed> {
    let members: Vec<u32> = (0..owners.len() as u32)
        .filter(|&i| owners.get(i as usize).is_some_and(|o| in_chain(o, opt_out)))
        .collect();
    let mut existing: Option<HashSet<&Dname>> = None;
    let mut names: Vec<Hashed> = Vec::with_capacity(members.len());
    let mut empty: HashSet<Name> = HashSet::new();
    let mut add = |names: &mut Vec<Hashed>, name: Hashed| {
        each(names.len(), &name);
        names.push(name);
    };
    for (at, &i) in members.iter().enumerate() {
        prefetch_member(members.get(at + AHEAD).and_then(|&a| owners.get(a as usize)));
        let Some(owner) = owners.get(i as usize) else { continue };
        add(&mut names, Hashed::Owner(i as usize));
        let mut above = owner.name.parent();
        while let Some(name) = above.filter(|n| n.is_below(origin)) {
            let existing =
                existing.get_or_insert_with(|| owners.iter().map(|o| &*o.name).collect());
            if existing.contains(name) || !empty.insert(name.to_name()) {
                break; // a name of the zone, or met on another name's way up: so were its ancestors
            }
            add(&mut names, Hashed::Empty(name.to_name()));
            above = name.parent();
        }
    }
    names
}

/// Members [`hashed_names`] reads ahead of the one at hand.
const AHEAD: usize = 8;

/// Starts loading the name of `owner` (it lies in the loaded zone, not in the owners'
/// order) and its list of RRsets, which its type bitmap is made from.
fn prefetch_member(owner: Option<&Owner<'_>>) {
    let Some(owner) = owner else { return };
    tern_zone::prefetch_address(owner.name.as_wire().as_ptr() as usize);
    tern_zone::prefetch_address(owner.rrsets.as_ptr() as usize);
}

/// The NSEC3 owners (hashed names below `origin`, in hash order), each with its NSEC3
/// RRset of TTL `ttl`, for the zone's `owners` (canonical order, the apex first, the
/// NSEC3PARAM RRset already there). What the chain needs of a name, its hash and its
/// types, is read as the name is met, in the owners' order, where they lie in memory;
/// the records are then made in hash order from that alone.
pub fn build_chain(
    owners: &[Owner<'_>],
    origin: &Dname,
    config: &Nsec3Config,
    ttl: u32,
) -> Result<Vec<Owner<'static>>> {
    let params = config.params();
    let mut writer = RdataWriter::new(config)?;
    // (hash, bitmap, index into `names`)
    let mut hashed: Vec<(Nsec3Hash, u32, usize)> = Vec::new();
    let names = hashed_names(owners, origin, config.opt_out, |i, h| {
        let owner = match h {
            Hashed::Owner(o) => owners.get(*o),
            Hashed::Empty(_) => None,
        };
        let hash = h.name(owners).map_or([0; 20], |n| params.hash(n));
        hashed.push((hash, writer.bitmap(owner), i));
    });
    hashed.sort_unstable_by_key(|a| a.0);
    check_collisions(&hashed, &names, owners)?;
    let mut chain = Vec::with_capacity(hashed.len());
    for (i, (hash, bitmap, _)) in hashed.iter().enumerate() {
        let next = hashed.get(i + 1).or(hashed.first()).map_or(*hash, |n| n.0);
        let rdatas = writer.rdata(&next, *bitmap)?;
        chain.push(Owner {
            name: Cow::Owned(hashed_owner(hash, origin)?),
            kind: Kind::Authoritative,
            rrsets: vec![Rrset::new(Rtype::NSEC3, ttl, rdatas)],
        });
    }
    Ok(chain)
}

/// Fails when two of the `hashed` names (sorted by hash) have the same hash.
fn check_collisions(
    hashed: &[(Nsec3Hash, u32, usize)],
    names: &[Hashed],
    owners: &[Owner<'_>],
) -> Result<()> {
    let Some(pair) = hashed.windows(2).find(|w| w.first().map(|x| x.0) == w.get(1).map(|y| y.0))
    else {
        return Ok(());
    };
    let name = |&(_, _, i): &(Nsec3Hash, u32, usize)| names.get(i)?.name(owners);
    let names: Vec<String> = pair.iter().filter_map(name).map(|n| n.to_string()).collect();
    Err(Error::HashCollision(names.join(" and ")))
}

/// The RDATA of an NSEC3 record (RFC 5155 §3.2) of the chain `config` makes: `next` the
/// next hash in the chain, `types` those of the hashed name.
pub fn nsec3_rdata(config: &Nsec3Config, next: &Nsec3Hash, types: Vec<Rtype>) -> Result<Vec<u8>> {
    let nsec3 = Nsec3 {
        algorithm: SHA1,
        flags: if config.opt_out { OPT_OUT } else { 0 },
        iterations: config.iterations,
        salt: config.salt()?,
        next_hashed: CharString::new(next.to_vec()).map_err(Error::Nsec3)?,
        types,
    };
    Ok(Rdata::Nsec3(nsec3).to_wire_vec())
}

/// The NSEC3 RDATA of a whole chain, written field by field (RFC 5155 §3.2) straight
/// into each record's buffer: the fields before the next hash are the same in every
/// record, and a chain has few type bitmaps (a TLD: the apex's, and NS DS RRSIG), each
/// encoded once and known by its number.
struct RdataWriter {
    /// Hash algorithm, flags, iterations, salt length and salt.
    head: Vec<u8>,
    /// Type bitmaps (RFC 4034 §4.1.2), by number.
    bitmaps: Vec<Vec<u8>>,
    /// The numbers of the bitmaps, by the types they list.
    numbers: HashMap<Vec<Rtype>, u32>,
    /// The types of the name at hand (kept from one to the next).
    types: Vec<Rtype>,
}

impl RdataWriter {
    fn new(config: &Nsec3Config) -> Result<RdataWriter> {
        let salt = config.salt()?;
        let mut head = vec![SHA1, if config.opt_out { OPT_OUT } else { 0 }];
        head.extend_from_slice(&config.iterations.to_be_bytes());
        head.push(salt.as_bytes().len() as u8); // at most 255: a CharString
        head.extend_from_slice(salt.as_bytes());
        let (bitmaps, numbers, types) = (Vec::new(), HashMap::new(), Vec::new());
        Ok(RdataWriter { head, bitmaps, numbers, types })
    }

    /// The number of the type bitmap of the hashed name `owner` (`None`: an empty
    /// non-terminal).
    fn bitmap(&mut self, owner: Option<&Owner<'_>>) -> u32 {
        let types = &mut self.types;
        types.clear();
        if let Some(owner) = owner {
            nsec3_types_into(owner, types);
        }
        if let Some(&number) = self.numbers.get(types.as_slice()) {
            return number;
        }
        // An NSEC RDATA whose next name is the root: that name's one byte, then the
        // bitmap, the same in NSEC3 (RFC 5155 §3.2.1).
        let nsec = Rdata::Nsec(Nsec { next: Name::root(), types: types.clone() });
        self.bitmaps.push(nsec.to_wire_vec().get(1..).unwrap_or_default().to_vec());
        let number = self.bitmaps.len() as u32 - 1; // a few: one per set of types
        self.numbers.insert(types.clone(), number);
        number
    }

    /// The NSEC3 RDATA with the bitmap numbered `bitmap` ([`RdataWriter::bitmap`]), the
    /// next hash `next`.
    fn rdata(&self, next: &Nsec3Hash, bitmap: u32) -> Result<Rdatas<'static>> {
        let bitmap = self.bitmaps.get(bitmap as usize).map_or(&[][..], Vec::as_slice);
        let mut rdatas = Rdatas::with_capacity(2 + self.head.len() + 1 + next.len() + bitmap.len());
        rdatas.push_with(|out| {
            out.extend_from_slice(&self.head);
            out.push(next.len() as u8);
            out.extend_from_slice(next);
            out.extend_from_slice(bitmap);
            Ok(())
        })?;
        Ok(rdatas)
    }
}

/// The owner of the NSEC3 record of `hash`: its base32hex form (RFC 4648 §7, lower
/// case, no padding) as a label under the apex (RFC 5155 §3).
pub fn hashed_owner(hash: &Nsec3Hash, origin: &Dname) -> Result<Name> {
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let too_long = || Error::Zone(format!("{origin} is too long for NSEC3 owner names"));
    let digits = hash.chunks(5).flat_map(|chunk| {
        let bits = chunk.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        (0..8).rev().map(move |i| ALPHABET.get((bits >> (i * 5) & 31) as usize).copied())
    });
    // Written on the stack: the name's one allocation is its own.
    let mut wire = [0u8; 255];
    let (label, rest) = wire.split_at_mut(33);
    for (out, digit) in label.iter_mut().zip(std::iter::once(Some(32)).chain(digits)) {
        *out = digit.unwrap_or(b'0');
    }
    rest.get_mut(..origin.len()).ok_or_else(too_long)?.copy_from_slice(origin.as_wire());
    Name::from_wire(wire.get(..33 + origin.len()).ok_or_else(too_long)?).map_err(|_| too_long())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::collect;
    use crate::testutil::zone;

    /// RFC 5155 Appendix A: the hashes of names of the example zone (salt aabbccdd,
    /// 12 iterations).
    #[test]
    fn hashed_owners_of_rfc_5155_appendix_a() {
        let config =
            Nsec3Config { iterations: 12, salt: vec![0xaa, 0xbb, 0xcc, 0xdd], opt_out: false };
        let origin: Name = "example.".parse().unwrap();
        for (name, owner) in [
            ("example.", "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example."),
            ("a.example.", "35mthgpgcu1qg68fab165klnsnk3dpvl.example."),
            ("ns1.example.", "2t7b4g4vsa5smi47k61mv5bv1a22bojr.example."),
        ] {
            let hash = config.params().hash(&name.parse::<Name>().unwrap());
            assert_eq!(hashed_owner(&hash, &origin).unwrap().to_string(), owner);
        }
    }

    fn chain_text(zone_text: &str, opt_out: bool) -> Vec<String> {
        let z = zone("example.", zone_text);
        let mut owners = collect(&z, true).unwrap();
        let config = Nsec3Config { opt_out, ..Nsec3Config::default() };
        owners[0].insert(Rrset::new(
            Rtype::NSEC3PARAM,
            0,
            vec![config.nsec3param_rdata().unwrap()],
        ));
        let chain = build_chain(&owners, z.origin(), &config, 300).unwrap();
        let params = config.params();
        let mut by_name: Vec<String> = hashed_names(&owners, z.origin(), opt_out, |_, _| {})
            .iter()
            .map(|h| {
                let name = h.name(&owners).unwrap();
                let owner = hashed_owner(&params.hash(name), z.origin()).unwrap();
                let record = chain.iter().find(|o| *o.name == *owner).unwrap();
                let rdata = record.rrsets[0].rdatas.first().unwrap();
                let text = tern_wire::rdata::to_text(Rtype::NSEC3, rdata);
                let fields: Vec<&str> = text.splitn(6, ' ').collect();
                format!("{name} {} {}", fields[1], fields.get(5).unwrap_or(&""))
            })
            .collect();
        by_name.sort();
        by_name
    }

    const ZONE: &str = "@ SOA ns h 1 2 3 4 5\n@ NS ns\nns A 192.0.2.1\n\
        sub NS ns.sub\nns.sub A 192.0.2.2\nsub DS 1 13 2 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF\n\
        a.ins NS ns.example.net.\nx.y.z TXT t\n";

    #[test]
    fn bitmaps_and_empty_non_terminals() {
        assert_eq!(
            chain_text(ZONE, false),
            [
                "a.ins.example. 0 NS",
                "example. 0 NS SOA RRSIG NSEC3PARAM",
                "ins.example. 0 ",
                "ns.example. 0 A RRSIG",
                "sub.example. 0 NS DS RRSIG",
                "x.y.z.example. 0 TXT RRSIG",
                "y.z.example. 0 ",
                "z.example. 0 ",
            ]
        );
    }

    #[test]
    fn opt_out_leaves_out_insecure_delegations_and_what_only_they_make() {
        assert_eq!(
            chain_text(ZONE, true),
            [
                "example. 1 NS SOA RRSIG NSEC3PARAM",
                "ns.example. 1 A RRSIG",
                "sub.example. 1 NS DS RRSIG",
                "x.y.z.example. 1 TXT RRSIG",
                "y.z.example. 1 ",
                "z.example. 1 ",
            ]
        );
    }

    /// The chain's RDATA, written field by field, are those the record's encoder makes.
    #[test]
    fn chain_rdata_as_the_encoder_writes_them() {
        let z = zone("example.", ZONE);
        let owners = collect(&z, true).unwrap();
        for (salt, opt_out) in [(vec![], true), (vec![0xaa, 0xbb], false)] {
            let config = Nsec3Config { iterations: 3, salt, opt_out };
            let mut writer = RdataWriter::new(&config).unwrap();
            let next: Nsec3Hash = core::array::from_fn(|i| i as u8 * 7);
            for owner in owners.iter().map(Some).chain([None, owners.first()]) {
                let types = owner.map(nsec3_types).unwrap_or_default();
                let expect = nsec3_rdata(&config, &next, types).unwrap();
                let bitmap = writer.bitmap(owner);
                let written = writer.rdata(&next, bitmap).unwrap();
                assert_eq!(written, Rdatas::from(vec![expect]));
                assert_eq!(written.bytes_used().0, written.bytes_used().1);
            }
        }
    }

    #[test]
    fn the_chain_is_closed_in_hash_order() {
        let z = zone("example.", ZONE);
        let owners = collect(&z, true).unwrap();
        let chain = build_chain(&owners, z.origin(), &Nsec3Config::default(), 300).unwrap();
        assert_eq!(chain.len(), 8);
        for (i, owner) in chain.iter().enumerate() {
            let Rdata::Nsec3(n) =
                Rdata::from_wire(Rtype::NSEC3, owner.rrsets[0].rdatas.first().unwrap()).unwrap()
            else {
                panic!()
            };
            let next = &chain[(i + 1) % chain.len()];
            let next_hash: Nsec3Hash = n.next_hashed.as_bytes().try_into().unwrap();
            assert_eq!(*hashed_owner(&next_hash, z.origin()).unwrap(), *next.name);
            assert!(i == 0 || chain[i - 1].name.canonical_cmp(&owner.name).is_lt());
        }
    }
}
