//! The cost of signing a one-record change of a large signed zone with `sign_change`:
//! a zone of N names (`n<i>.g<i mod 1000>`: every name holds an A record, below 1,000
//! empty non-terminals) signed whole by one CSK (ECDSA P-256), then changes applied in
//! turn, alternately a record added at a new name (new denial records around it) and an
//! A record replaced at an existing one. Prints the whole signing's time and the
//! median, 99th percentile and mean of `sign_change` and of applying its result.
//!
//! ```text
//! cargo run --release -p tern-sign --example incremental_bench -- [N] [nsec|nsec3|optout] [CHANGES]
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::time::{Duration, Instant};

use tern_sign::{
    sign_change, sign_zone, Algorithm, DenialConfig, KeyRole, Nsec3Config, SignOptions, SigningKey,
    Validity,
};
use tern_wire::{Name, Rtype};
use tern_zone::{Changeset, RecordData, ZoneBuilder, ZoneContents};

fn unsigned(n: usize) -> ZoneContents {
    let origin: Name = "big.example.".parse().unwrap();
    let mut builder = ZoneBuilder::new(&origin);
    let soa =
        tern_wire::rdata::parse_str(Rtype::SOA, "ns.example.net. h. 1 7200 3600 1209600 300", None);
    builder.add(&origin, Rtype::SOA, 3600, &soa.unwrap());
    builder.add(&origin, Rtype::NS, 3600, "ns.example.net.".parse::<Name>().unwrap().as_wire());
    for i in 0..n {
        let owner: Name = format!("n{i}.g{}.big.example.", i % 1000).parse().unwrap();
        builder.add(&owner, Rtype::A, 3600, &(i as u32).to_be_bytes());
    }
    builder.finish().unwrap().0
}

/// Change `step` of the zone of `n` names: a new name, or an A record replaced.
fn change(zone: &ZoneContents, n: usize, step: usize) -> Changeset {
    let from = zone.soa_record().unwrap();
    let rdata = tern_zone::records::with_soa_serial(&from.rdata, zone.serial() + 1).unwrap();
    let mut change = Changeset::between(from.clone(), RecordData { rdata, ..from });
    let record = |owner: String, address: u32| RecordData {
        owner: owner.parse().unwrap(),
        rtype: Rtype::A,
        ttl: 3600,
        rdata: address.to_be_bytes().to_vec(),
    };
    if step % 2 == 0 {
        change.added.push(record(format!("new{step}.g{}.big.example.", step % 1000), 1));
    } else {
        let i = step * 7919 % n;
        let owner = format!("n{i}.g{}.big.example.", i % 1000);
        let old = zone.find(&owner.parse::<Name>().unwrap()).map(|_| i as u32);
        change.removed.push(record(owner.clone(), old.expect("a name of the zone")));
        change.added.push(record(owner, 2));
    }
    change
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!("{what}: median {:?}, p99 {:?}, mean {mean:?}", at(0.5), at(0.99));
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |a| a.parse().unwrap());
    let denial = match args.next().as_deref() {
        None | Some("nsec") => DenialConfig::Nsec,
        Some("nsec3") => DenialConfig::Nsec3(Nsec3Config::default()),
        Some("optout") => DenialConfig::Nsec3(Nsec3Config { opt_out: true, ..Default::default() }),
        Some(other) => panic!("{other}: nsec, nsec3 or optout"),
    };
    let changes: usize = args.next().map_or(200, |a| a.parse().unwrap());
    let keys = [SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Csk).unwrap()];
    let validity = Validity::new(1_800_000_000, 1_800_000_000 + 30 * 86400).unwrap();
    let options = SignOptions { denial, threads: 2, ..SignOptions::new(validity) };
    let start = Instant::now();
    let mut zone = sign_zone(&unsigned(n), &keys, &options).unwrap().to_contents().unwrap();
    println!("{n} names: built and signed whole in {:?}", start.elapsed());
    let (mut signing, mut applying) = (Vec::new(), Vec::new());
    for step in 0..changes {
        let change = change(&zone, n, step);
        let start = Instant::now();
        let signed = sign_change(&zone, &change, &keys, &options).unwrap();
        signing.push(start.elapsed());
        let start = Instant::now();
        zone = zone.apply(&signed).unwrap().0;
        applying.push(start.elapsed());
    }
    report("sign_change", signing);
    report("apply", applying);
}
