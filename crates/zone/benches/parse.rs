//! Zone-file parsing throughput, in bytes of zone text per second.
//!
//! `cargo bench -p tern-zone --bench parse` parses a TLD-like zone generated in memory
//! (the shape of `genzone.py tld`: delegations, 20% with glue, 30% with DS). To measure a
//! file instead: `TERN_BENCH_ZONE=/tmp/tld/zone.txt TERN_BENCH_ORIGIN=tld. cargo bench
//! -p tern-zone --bench parse`.

// A measuring harness, not library code: it may stop on a broken setup.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tern_wire::rdata::parse_str;
use tern_wire::{Name, Rtype};
use tern_zone::parser::{parse_bytes, Options, Record};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn label(&mut self) -> String {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let len = 4 + self.below(11) as usize;
        (0..len).map(|_| char::from(CHARS[self.below(36) as usize])).collect()
    }
}

/// A TLD-like zone of `names` delegations, as `genzone.py tld` writes it.
fn tld_zone(names: usize) -> String {
    let with_ds = parse_str(Rtype::DS, "1 13 2 00", None).is_ok();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut z = String::from("$ORIGIN tld.\n$TTL 3600\n");
    z += "tld. 3600 IN SOA ns1.tld. hostmaster.tld. 2026112201 7200 3600 1209600 3600\n";
    for i in 1..=3 {
        z += &format!("tld. 172800 IN NS ns{i}.tld.\nns{i}.tld. 172800 IN A 192.0.2.{i}\n");
        z += &format!("ns{i}.tld. 172800 IN AAAA 2001:db8::{i}\n");
    }
    for n in 0..names {
        let owner = format!("{}{n}.tld.", rng.label());
        if rng.below(10) < 2 {
            z += &format!("{owner} 86400 IN NS ns1.{owner}\n{owner} 86400 IN NS ns2.{owner}\n");
            z += &format!("ns1.{owner} 86400 IN A 198.51.{}.{}\n", n % 256, (n >> 8) % 256);
            z += &format!("ns2.{owner} 86400 IN AAAA 2001:db8:{:x}::53\n", n % 65536);
        } else {
            let p = rng.below(1000);
            z += &format!("{owner} 86400 IN NS a.ns.provider{p}.net.\n");
            z += &format!("{owner} 86400 IN NS b.ns.provider{p}.net.\n");
        }
        if with_ds && rng.below(10) < 3 {
            let digest: String =
                (0..64).map(|_| char::from(b"0123456789ABCDEF"[rng.below(16) as usize])).collect();
            z += &format!("{owner} 86400 IN DS {} 13 2 {digest}\n", 1 + rng.below(65535));
        }
    }
    z
}

fn parse_all(text: &[u8], origin: &Name) -> u64 {
    let mut bytes = 0u64;
    let mut sink = |r: &Record<'_>| {
        bytes += r.rdata.len() as u64;
        Ok(())
    };
    let report = parse_bytes(text, Path::new("bench"), origin, &Options::default(), &mut sink);
    match report {
        Ok(report) => report.records + bytes,
        Err(e) => panic!("bench zone does not parse: {e}"),
    }
}

fn bench_parse(c: &mut Criterion) {
    let (text, origin) = match std::env::var("TERN_BENCH_ZONE") {
        Ok(path) => {
            let origin = std::env::var("TERN_BENCH_ORIGIN").unwrap_or_else(|_| "tld.".into());
            (std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")), origin)
        }
        Err(_) => (tld_zone(150_000).into_bytes(), "tld.".to_owned()),
    };
    let origin: Name = origin.parse().unwrap_or_else(|e| panic!("origin: {e}"));
    let mut group = c.benchmark_group("zonefile");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.bench_function("parse", |b| b.iter(|| parse_all(black_box(&text), &origin)));
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
