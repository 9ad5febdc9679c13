//! Copy-on-write changesets: the cost of a one-record change (plus the SOA serial bump,
//! as IXFR and UPDATE bring it) on a zone of one million records, next to the cost of
//! rebuilding the zone. The change must cost in proportion to itself, not the zone.
//!
//! `cargo bench -p tern-zone --bench changeset` (TERN_BENCH_RECORDS sets the size).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use tern_wire::{rdata, Name, Rtype};
use tern_zone::{Changeset, RecordData, ZoneBuilder, ZoneContents};

fn record(owner: &str, rtype: Rtype, text: &str) -> RecordData {
    let origin: Name = "example.".parse().unwrap();
    let rdata = rdata::parse_str(rtype, text, Some(&origin)).unwrap();
    RecordData { owner: owner.parse().unwrap(), rtype, ttl: 300, rdata }
}

fn soa(serial: u32) -> RecordData {
    record("example.", Rtype::SOA, &format!("ns hm {serial} 7200 3600 1209600 300"))
}

/// A zone of `records` A records at distinct names below `example.`.
fn big_zone(records: usize) -> ZoneContents {
    let origin: Name = "example.".parse().unwrap();
    let mut b = ZoneBuilder::new(&origin);
    let soa = soa(1);
    b.add(&soa.owner, soa.rtype, soa.ttl, &soa.rdata);
    let ns = record("example.", Rtype::NS, "ns");
    b.add(&ns.owner, ns.rtype, ns.ttl, &ns.rdata);
    for i in 0..records {
        let owner: Name = format!("h{i}.example.").parse().unwrap();
        let address = [10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
        b.add(&owner, Rtype::A, 300, &address);
    }
    b.finish().unwrap().0
}

fn bench(c: &mut Criterion) {
    let records: usize =
        std::env::var("TERN_BENCH_RECORDS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let started = Instant::now();
    let zone = big_zone(records);
    eprintln!("built {} records in {:.2} s", zone.record_count(), started.elapsed().as_secs_f64());
    let add = Changeset {
        removed: vec![soa(1)],
        added: vec![soa(2), record("new.example.", Rtype::A, "192.0.2.1")],
        ..Changeset::default()
    };
    let change = Changeset {
        removed: vec![soa(1), record("h500.example.", Rtype::A, "10.0.1.244")],
        added: vec![soa(2), record("h500.example.", Rtype::A, "192.0.2.2")],
        ..Changeset::default()
    };
    let mut group = c.benchmark_group("changeset-1M");
    group.bench_function("add one name", |b| {
        b.iter_batched(|| (), |()| black_box(zone.apply(&add).unwrap()), BatchSize::SmallInput)
    });
    group.bench_function("replace one record", |b| {
        b.iter_batched(|| (), |()| black_box(zone.apply(&change).unwrap()), BatchSize::SmallInput)
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
