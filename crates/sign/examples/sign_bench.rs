//! Signing speed, in signatures per second per core: N RRsets (one A record at each of
//! N names) signed one by one by `rrsig::sign_rrset` and as a whole zone by `sign_zone`
//! (NSEC: 2N + 4 RRsets, the names' A and NSEC and the apex's), beside aws-lc-rs
//! signing the same signed data alone. Each figure is the best of three runs (the
//! machine may be shared). Figures: docs/benchmarks.md, "DNSSEC signing".
//!
//! ```text
//! cargo run --release -p tern-sign --example sign_bench -- [N] [ECDSAP256SHA256|ED25519]
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::time::Instant;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use tern_sign::names::Rdatas;
use tern_sign::rrsig::{sign_rrset, signed_data, RrsetRef, Scratch};
use tern_sign::{sign_zone, Algorithm, KeyRole, SignOptions, SigningKey, Validity};
use tern_wire::{Name, Rtype};
use tern_zone::{ZoneBuilder, ZoneContents};

fn zone(n: usize) -> (ZoneContents, Vec<Name>) {
    let origin: Name = "bench.example.".parse().unwrap();
    let mut builder = ZoneBuilder::new(&origin);
    let soa = tern_wire::rdata::parse_str(Rtype::SOA, "ns. h. 1 7200 3600 1209600 300", None);
    builder.add(&origin, Rtype::SOA, 3600, &soa.unwrap());
    builder.add(&origin, Rtype::NS, 3600, "ns.example.net.".parse::<Name>().unwrap().as_wire());
    let names: Vec<Name> =
        (0..n).map(|i| format!("host{i}.bench.example.").parse().unwrap()).collect();
    for (i, name) in names.iter().enumerate() {
        builder.add(name, Rtype::A, 3600, &[10, (i >> 16) as u8, (i >> 8) as u8, i as u8]);
    }
    (builder.finish().unwrap().0, names)
}

/// Signatures per second of `run`, which makes `count` signatures: the best of three.
fn rate(count: usize, mut run: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            run();
            count as f64 / start.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

/// aws-lc-rs alone: the same key, signing each of `data`.
fn raw_rate(algorithm: Algorithm, pkcs8: &[u8], data: &[Vec<u8>]) -> f64 {
    match algorithm {
        Algorithm::Ed25519 => {
            let pair = Ed25519KeyPair::from_pkcs8(pkcs8).unwrap();
            rate(data.len(), || {
                data.iter().for_each(|d| {
                    std::hint::black_box(pair.sign(d));
                })
            })
        }
        Algorithm::EcdsaP256Sha256 => {
            let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8).unwrap();
            let rng = SystemRandom::new();
            rate(data.len(), || {
                data.iter().for_each(|d| {
                    std::hint::black_box(pair.sign(&rng, d).unwrap());
                })
            })
        }
        other => panic!("{other}: ECDSAP256SHA256 or ED25519 only"),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(20_000, |a| a.parse().unwrap());
    let algorithm =
        Algorithm::from_mnemonic(&args.next().unwrap_or("ECDSAP256SHA256".into())).unwrap();
    let (zone, names) = zone(n);
    let key = SigningKey::generate(algorithm, KeyRole::Csk).unwrap();
    let validity = Validity::new(1_800_000_000, 1_800_000_000 + 30 * 86400).unwrap();
    let times = (validity.inception(), validity.expiration());
    let rdatas: Vec<Rdatas> =
        (0..n).map(|i| vec![vec![10, (i >> 16) as u8, (i >> 8) as u8, i as u8]].into()).collect();
    let rrset =
        |i: usize| RrsetRef { owner: &names[i], rtype: Rtype::A, ttl: 3600, rdatas: &rdatas[i] };
    let origin = zone.origin().clone();
    let mut scratch = Scratch::default();
    let data: Vec<Vec<u8>> = (0..n)
        .map(|i| signed_data(&rrset(i), &key, &origin, times, &mut scratch).unwrap().to_vec())
        .collect();
    let raw = raw_rate(algorithm, &key.to_pkcs8().unwrap(), &data);
    let one_by_one = rate(n, || {
        (0..n).for_each(|i| {
            std::hint::black_box(
                sign_rrset(&rrset(i), &key, &origin, times, &mut scratch).unwrap(),
            );
        })
    });
    let keys = [key];
    let mut zone_rates = Vec::new();
    for threads in [1, 2] {
        let options = SignOptions { threads, ..SignOptions::new(validity) };
        let count = sign_zone(&zone, &keys, &options).unwrap().signature_count();
        zone_rates.push(rate(count, || {
            std::hint::black_box(sign_zone(&zone, &keys, &options).unwrap());
        }));
    }
    let pct = |x: f64| 100.0 * x / raw;
    println!(
        "{n} RRsets, {algorithm}: aws-lc-rs alone {raw:.0} sig/s; sign_rrset {one_by_one:.0} sig/s ({:.0}%); \
         sign_zone 1 thread {:.0} sig/s ({:.0}%), 2 threads {:.0} sig/s = {:.0} per core ({:.0}%)",
        pct(one_by_one),
        zone_rates[0],
        pct(zone_rates[0]),
        zone_rates[1],
        zone_rates[1] / 2.0,
        pct(zone_rates[1] / 2.0),
    );
}
