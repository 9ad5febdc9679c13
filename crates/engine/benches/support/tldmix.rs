//! The TLD-like zone and query mix shared by `benches/answer.rs` and
//! `examples/profile.rs` (included by `#[path]`): a deterministic generator that follows
//! `../shared/bench/genzone.py`'s shape, and a reader for the peer harness's own data set
//! (`bench/datasets.py`: the same generator's zone, and its copy signed with NSEC3 opt-out).

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use tern_wire::edns::Edns;
use tern_wire::message::{CompressionTable, Flags, MessageWriter};
use tern_wire::{Class, Name, Rtype};
use tern_zone::{ZoneSet, ZoneSlot};

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn label(&mut self) -> String {
        let len = 4 + self.below(11) as usize;
        (0..len)
            .map(|_| b"abcdefghijklmnopqrstuvwxyz0123456789"[self.below(36) as usize] as char)
            .collect()
    }
}

/// A TLD-like zone: `names` delegations, 20% with in-bailiwick glue, 30% with DS.
pub fn tld_zone(names: usize, rng: &mut Rng) -> (String, Vec<String>) {
    let mut text =
        String::from("$ORIGIN tld.\n$TTL 3600\n@ SOA ns1 hostmaster 1 7200 3600 1209600 3600\n");
    for i in 1..=3 {
        text.push_str(&format!(
            "@ 172800 NS ns{i}\nns{i} 172800 A 192.0.2.{i}\nns{i} 172800 AAAA 2001:db8::{i}\n"
        ));
    }
    let mut owners = Vec::with_capacity(names);
    let mut seen = std::collections::HashSet::new();
    while owners.len() < names {
        let name = rng.label();
        if !seen.insert(name.clone()) {
            continue;
        }
        if rng.below(10) < 2 {
            text.push_str(&format!("{name} 86400 NS ns1.{name}\n{name} 86400 NS ns2.{name}\n"));
            text.push_str(&format!(
                "ns1.{name} 86400 A 198.51.100.{}\nns2.{name} 86400 AAAA 2001:db8::53\n",
                owners.len() % 250
            ));
        } else {
            let p = rng.below(1000);
            text.push_str(&format!(
                "{name} 86400 NS a.ns.provider{p}.net.\n{name} 86400 NS b.ns.provider{p}.net.\n"
            ));
        }
        if rng.below(10) < 3 {
            let digest: String =
                (0..64).map(|_| b"0123456789ABCDEF"[rng.below(16) as usize] as char).collect();
            text.push_str(&format!("{name} 86400 DS {} 13 2 {digest}\n", 1 + rng.below(65535)));
        }
        owners.push(format!("{name}.tld."));
    }
    (text, owners)
}

pub fn query(name: &str, qtype: Rtype, dnssec: bool) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(0x4242);
    w.set_flags(Flags(0));
    w.push_question(&name.parse::<Name>().unwrap(), qtype, Class::IN).unwrap();
    w.push_opt(1232, 0, if dnssec { Edns::DO } else { 0 }).unwrap();
    w.finish().to_vec()
}

/// The genzone.py mix: 40% misses in the zone, 5% outside every zone, the rest hits
/// (60% at the delegation, 40% below it) over seven types.
pub fn queries(owners: &[String], count: usize, dnssec_share: u64, rng: &mut Rng) -> Vec<Vec<u8>> {
    let types = [Rtype::A, Rtype::AAAA, Rtype::NS, Rtype::DS, Rtype::MX, Rtype::TXT, Rtype::SOA];
    (0..count)
        .map(|_| {
            let r = rng.below(100);
            let dnssec = rng.below(100) < dnssec_share;
            if r < 40 {
                let qtype = [Rtype::A, Rtype::AAAA, Rtype::MX][rng.below(3) as usize];
                query(&format!("{}.tld.", rng.label()), qtype, dnssec)
            } else if r < 45 {
                query(&format!("{}.nonexistent-tld.", rng.label()), Rtype::A, dnssec)
            } else {
                let base = &owners[rng.below(owners.len() as u64) as usize];
                let name = if rng.below(10) < 6 { base.clone() } else { format!("www.{base}") };
                query(&name, types[rng.below(7) as usize], dnssec)
            }
        })
        .collect()
}

/// Queries laid out back to back in one buffer, as a batch sits in a server's receive
/// buffers: reading the next one streams through memory instead of chasing a separate
/// allocation each time (which costs a cache miss the server never pays).
pub struct Packed {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Packed {
    pub fn new(queries: &[Vec<u8>]) -> Packed {
        let mut bytes = Vec::with_capacity(queries.iter().map(Vec::len).sum());
        let mut ends = Vec::with_capacity(queries.len());
        for q in queries {
            bytes.extend_from_slice(q);
            ends.push(bytes.len());
        }
        Packed { bytes, ends }
    }

    pub fn slices(&self) -> Vec<&[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(start, &end)| &self.bytes[start..end]).collect()
    }
}

/// A zone file for `tld.` and the first `count` queries of a dnsperf query file (`name
/// type` lines), `dnssec_share`% of them asked with DO; an error names the file that could
/// not be read.
pub fn from_files(
    zone: &Path,
    query_file: &Path,
    count: usize,
    dnssec_share: u64,
    rng: &mut Rng,
) -> Result<(ZoneSet, Vec<Vec<u8>>), String> {
    let queries = query_file_queries(query_file, count, dnssec_share, rng)?;
    Ok((zone_file_set(zone)?, queries))
}

/// The zone file `zone` for `tld.`, loaded as [`zone_set`] loads generated text.
pub fn zone_file_set(zone: &Path) -> Result<ZoneSet, String> {
    let origin: Name = "tld.".parse().unwrap();
    let loaded = tern_zone::load_file(zone, &origin, &Default::default(), &mut |_| {})
        .map_err(|e| e.to_string())?; // the error names the file
    Ok(publish(&origin, loaded.contents))
}

/// The first `count` queries of a dnsperf query file, `dnssec_share`% of them with DO.
pub fn query_file_queries(
    query_file: &Path,
    count: usize,
    dnssec_share: u64,
    rng: &mut Rng,
) -> Result<Vec<Vec<u8>>, String> {
    let text = std::fs::read_to_string(query_file)
        .map_err(|e| format!("{}: {e}", query_file.display()))?;
    let queries = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .take(count)
        .map(|(name, t)| {
            let qtype = Rtype::from_mnemonic(t.trim().as_bytes()).unwrap();
            query(name, qtype, rng.below(100) < dnssec_share)
        })
        .collect();
    Ok(queries)
}

pub fn zone_set(text: &str) -> ZoneSet {
    let origin: Name = "tld.".parse().unwrap();
    let loaded = tern_zone::load_bytes(
        text.as_bytes(),
        std::path::Path::new("bench"),
        &origin,
        &Default::default(),
    )
    .unwrap();
    publish(&origin, loaded.contents)
}

/// One zone in a set, placed in memory as the server places it after a load
/// (TERND_HUGE_PAGES=0: not).
fn publish(origin: &Name, contents: tern_zone::ZoneContents) -> ZoneSet {
    let slot = Arc::new(ZoneSlot::new(origin));
    slot.publish(Arc::new(contents));
    tern_zone::memory::after_load();
    ZoneSet::new(vec![slot])
}
