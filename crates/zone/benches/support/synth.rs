//! Synthetic zones for the changeset bench: `example.` with one A record at each of n
//! names (`h0.example.` …), unsigned, or signed with NSEC (RFC 4034 §4) or NSEC3 (RFC
//! 5155, SHA-1, no salt, no extra iterations as RFC 9276 §3.1 advises), and the changes
//! a signer would publish for an edit: the SOA bump, the edited records, their RRSIGs
//! and the NSEC or NSEC3 records whose next name changes.
//!
//! Signatures are filler bytes in well-formed RRSIG RDATA (the zone crate does not
//! verify them); the denial chains are correct.

use std::collections::{BTreeMap, BTreeSet};

use tern_wire::{rdata, Name, Rtype};
use tern_zone::{Changeset, Nsec3Params, RecordData, ZoneBuilder, ZoneContents};

/// How the zone proves non-existence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Unsigned,
    Nsec,
    Nsec3,
}

impl Form {
    pub fn label(self) -> &'static str {
        match self {
            Form::Unsigned => "unsigned",
            Form::Nsec => "nsec",
            Form::Nsec3 => "nsec3",
        }
    }
}

/// One edit of names: new names (each with one A record), names removed, and A records
/// replaced (label, old address, new address).
#[derive(Debug, Default)]
pub struct Edit {
    pub add: Vec<(String, [u8; 4])>,
    pub remove: Vec<String>,
    pub replace: Vec<(String, [u8; 4], [u8; 4])>,
}

/// A synthetic zone's description: enough to make its records and its changes.
pub struct Synth {
    pub form: Form,
    origin: Name,
    params: Nsec3Params,
    /// Every name's label (the apex's is empty) by its place in the denial chain: the
    /// label itself for NSEC (one-label names sort as their lower-case labels, RFC 4034
    /// §6.1, the apex first), the hash for NSEC3; empty when unsigned.
    chain: BTreeMap<Vec<u8>, String>,
    /// The address of each name (by label) in the zone.
    addresses: Vec<[u8; 4]>,
}

/// The address of name `h{i}`.
pub fn address(i: usize) -> [u8; 4] {
    [10, (i >> 16) as u8, (i >> 8) as u8, i as u8]
}

impl Synth {
    pub fn new(form: Form, names: usize) -> Synth {
        let params = Nsec3Params { algorithm: 1, flags: 0, iterations: 0, salt: Vec::new() };
        let mut synth = Synth {
            form,
            origin: "example.".parse().unwrap(),
            params,
            chain: BTreeMap::new(),
            addresses: (0..names).map(address).collect(),
        };
        if form != Form::Unsigned {
            synth.chain.insert(synth.key(""), String::new());
            for i in 0..names {
                let label = format!("h{i}");
                synth.chain.insert(synth.key(&label), label);
            }
        }
        synth
    }

    fn owner(&self, label: &str) -> Name {
        if label.is_empty() {
            return self.origin.clone();
        }
        format!("{label}.example.").parse().unwrap()
    }

    /// A name's place in the denial chain.
    fn key(&self, label: &str) -> Vec<u8> {
        match self.form {
            Form::Nsec3 => self.params.hash(&self.owner(label)).to_vec(),
            _ => label.as_bytes().to_vec(),
        }
    }

    /// The zone at serial 1.
    pub fn zone(&self) -> ZoneContents {
        let mut b = ZoneBuilder::new(&self.origin);
        let mut add = |r: RecordData| b.add(&r.owner, r.rtype, r.ttl, &r.rdata);
        for r in self.apex_records() {
            add(r);
        }
        for (i, addr) in self.addresses.iter().enumerate() {
            for r in self.a_records(&format!("h{i}"), *addr, 1) {
                add(r);
            }
        }
        let keys: Vec<&Vec<u8>> = self.chain.keys().collect();
        for (i, key) in keys.iter().enumerate() {
            let next = keys[(i + 1) % keys.len()];
            for r in self.denial(key, &self.chain[*key], next, 1) {
                add(r);
            }
        }
        b.finish().unwrap().0
    }

    fn apex_records(&self) -> Vec<RecordData> {
        let mut out = vec![self.soa(1), self.record("", Rtype::NS, "ns")];
        if self.form != Form::Unsigned {
            let key = format!("257 3 13 {}", "AAAA".repeat(22));
            out.push(self.record("", Rtype::DNSKEY, &key));
            out.push(self.rrsig("", Rtype::SOA, 1));
            out.push(self.rrsig("", Rtype::NS, 1));
            out.push(self.rrsig("", Rtype::DNSKEY, 1));
        }
        if self.form == Form::Nsec3 {
            out.push(self.record("", Rtype::NSEC3PARAM, "1 0 0 -"));
            out.push(self.rrsig("", Rtype::NSEC3PARAM, 1));
        }
        out
    }

    fn record(&self, label: &str, rtype: Rtype, text: &str) -> RecordData {
        let rdata = rdata::parse_str(rtype, text, Some(&self.origin)).unwrap();
        RecordData { owner: self.owner(label), rtype, ttl: 300, rdata }
    }

    /// The SOA at `serial`, with its signature when signed.
    pub fn soa(&self, serial: u32) -> RecordData {
        self.record("", Rtype::SOA, &format!("ns hm {serial} 7200 3600 1209600 300"))
    }

    /// A name's A record and, when signed, its signature of `version`.
    fn a_records(&self, label: &str, addr: [u8; 4], version: u32) -> Vec<RecordData> {
        let a = RecordData {
            owner: self.owner(label),
            rtype: Rtype::A,
            ttl: 300,
            rdata: addr.to_vec(),
        };
        let mut out = vec![a];
        if self.form != Form::Unsigned {
            out.push(self.rrsig(label, Rtype::A, version));
        }
        out
    }

    /// An RRSIG (RFC 4034 §3.1) of `covered` at `label` whose signature bytes depend on
    /// the owner, the type and `version`, so a re-signed RRset gets a different one.
    fn rrsig(&self, label: &str, covered: Rtype, version: u32) -> RecordData {
        let owner = self.owner(label);
        let mut rd = Vec::with_capacity(18 + 9 + 64);
        rd.extend_from_slice(&covered.0.to_be_bytes());
        rd.push(13); // ECDSA P-256 SHA-256
        rd.push(owner.label_count() as u8);
        rd.extend_from_slice(&300u32.to_be_bytes());
        rd.extend_from_slice(&2_000_000_000u32.to_be_bytes());
        rd.extend_from_slice(&1_700_000_000u32.to_be_bytes());
        rd.extend_from_slice(&12345u16.to_be_bytes());
        rd.extend_from_slice(self.origin.as_wire());
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(covered.0) << 32 ^ u64::from(version);
        for &b in owner.as_wire() {
            x = (x ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
        for _ in 0..8 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            rd.extend_from_slice(&x.to_be_bytes());
        }
        RecordData { owner, rtype: Rtype::RRSIG, ttl: 300, rdata: rd }
    }

    /// The denial record at chain place `key` (name `label`) pointing to `next`, and its
    /// signature of `version`.
    fn denial(&self, key: &[u8], label: &str, next: &[u8], version: u32) -> Vec<RecordData> {
        let mut types = if label.is_empty() {
            vec![Rtype::SOA, Rtype::NS, Rtype::DNSKEY, Rtype::RRSIG]
        } else {
            vec![Rtype::A, Rtype::RRSIG]
        };
        let (owner_label, rtype, mut rd) = match self.form {
            Form::Nsec3 => {
                if label.is_empty() {
                    types.push(Rtype::NSEC3PARAM);
                }
                let mut rd = vec![1, 0, 0, 0, 0, 20];
                rd.extend_from_slice(next);
                (base32hex(key), Rtype::NSEC3, rd)
            }
            _ => {
                types.push(Rtype::NSEC);
                let next = self.owner(std::str::from_utf8(next).unwrap());
                (label.to_string(), Rtype::NSEC, next.as_wire().to_vec())
            }
        };
        rd.extend_from_slice(&bitmap(&types));
        let record = RecordData { owner: self.owner(&owner_label), rtype, ttl: 300, rdata: rd };
        vec![record, self.rrsig(&owner_label, rtype, version)]
    }

    /// The changeset publishing `edit` at serial 2, as a signer makes it.
    pub fn change(&self, edit: &Edit) -> Changeset {
        let mut cs = Changeset::between(self.soa(1), self.soa(2));
        if self.form != Form::Unsigned {
            cs.removed.push(self.rrsig("", Rtype::SOA, 1));
            cs.added.push(self.rrsig("", Rtype::SOA, 2));
        }
        for (label, addr) in &edit.add {
            cs.added.extend(self.a_records(label, *addr, 2));
        }
        for label in &edit.remove {
            let i: usize = label[1..].parse().unwrap();
            cs.removed.extend(self.a_records(label, self.addresses[i], 1));
        }
        for (label, old, new) in &edit.replace {
            cs.removed.extend(self.a_records(label, *old, 1));
            cs.added.extend(self.a_records(label, *new, 2));
        }
        if self.form != Form::Unsigned {
            self.chain_change(edit, &mut cs);
        }
        cs
    }

    /// The denial records an edit adds and removes: those of new and removed names, and
    /// of every name whose successor in the chain changes.
    fn chain_change(&self, edit: &Edit, cs: &mut Changeset) {
        let removed: Vec<Vec<u8>> = edit.remove.iter().map(|l| self.key(l)).collect();
        let added: Vec<(Vec<u8>, String)> =
            edit.add.iter().map(|(l, _)| (self.key(l), l.clone())).collect();
        let mut after = self.chain.clone();
        for key in &removed {
            after.remove(key);
        }
        after.extend(added.iter().cloned());
        let mut changed: BTreeSet<&Vec<u8>> = added.iter().map(|(k, _)| k).collect();
        for key in removed.iter().chain(added.iter().map(|(k, _)| k)) {
            changed.insert(before(&after, key));
        }
        for key in &removed {
            let next = after_wrapped(&self.chain, key);
            cs.removed.extend(self.denial(key, &self.chain[key], next, 1));
        }
        for key in changed {
            let next = after_wrapped(&after, key);
            match self.chain.get(key) {
                Some(label) => {
                    let old = after_wrapped(&self.chain, key);
                    if old != next {
                        cs.removed.extend(self.denial(key, label, old, 1));
                        cs.added.extend(self.denial(key, label, next, 2));
                    }
                }
                None => cs.added.extend(self.denial(key, &after[key], next, 2)),
            }
        }
    }
}

/// The key before `key` in `chain` (wrapping to the last).
fn before<'c>(chain: &'c BTreeMap<Vec<u8>, String>, key: &[u8]) -> &'c Vec<u8> {
    use std::ops::Bound::{Excluded, Unbounded};
    let below = chain.range::<[u8], _>((Unbounded, Excluded(key))).next_back();
    below.or_else(|| chain.iter().next_back()).map(|(k, _)| k).unwrap()
}

/// The key after `key` in `chain` (wrapping to the first).
fn after_wrapped<'c>(chain: &'c BTreeMap<Vec<u8>, String>, key: &[u8]) -> &'c Vec<u8> {
    use std::ops::Bound::{Excluded, Unbounded};
    let above = chain.range::<[u8], _>((Excluded(key), Unbounded)).next();
    above.or_else(|| chain.iter().next()).map(|(k, _)| k).unwrap()
}

/// A type bitmap of window 0 (RFC 4034 §4.1.2) for types below 256.
fn bitmap(types: &[Rtype]) -> Vec<u8> {
    let mut bits = [0u8; 32];
    for t in types {
        bits[usize::from(t.0 / 8)] |= 0x80 >> (t.0 % 8);
    }
    let len = bits.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let mut out = vec![0, len as u8];
    out.extend_from_slice(&bits[..len]);
    out
}

/// Base32hex without padding (RFC 4648 §7), lower case, as NSEC3 owner labels are.
fn base32hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let mut out = String::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &b in bytes {
        acc = acc << 8 | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(DIGITS[(acc >> bits & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(DIGITS[(acc << (5 - bits) & 31) as usize] as char);
    }
    out
}
