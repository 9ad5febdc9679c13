//! The engine alone, no sockets: answers per second on a TLD-like zone with the query
//! mix of `../shared/bench/genzone.py` (about 40% names that do not exist, the rest hits
//! over A/AAAA/NS/DS/MX/TXT/SOA, half of them below a delegation), with and without DO.
//! Each mix is answered two ways: one query at a time ([`Engine::answer`]), and as the
//! UDP workers answer a batch, locating the next query while answering the current one
//! (`-ahead`: [`Engine::look_ahead`] and [`Engine::answer_with`]).
//!
//! * `tld-mix-*`: a zone made here, unsigned, so DO only adds the OPT flag.
//! * `signed-*`: the peer harness's 100k zone signed with NSEC3 opt-out, as TLDs are, and
//!   its query file: DO answers carry RRSIGs and NSEC3 proofs (an NXDOMAIN hashes its next
//!   closer name). Made by `python3 bench/datasets.py` (cached in `bench/out`, or the
//!   directory in TERN_BENCH_DATA); skipped, with a message, when missing.
//!
//! The queries lie back to back in one buffer ([`tldmix::Packed`]), as a batch lies in
//! the server's receive buffers.
//!
//! `cargo bench -p tern-engine --bench answer` (TERN_BENCH_NAMES sets the generated zone's
//! size).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use std::path::PathBuf;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use tern_engine::{Config, Engine, Lookahead, Outcome, Request, Transport};
use tern_wire::message::CompressionTable;
use tern_zone::{Pins, ZoneSet};
use tldmix::{queries, query_file_queries, tld_zone, zone_file_set, zone_set, Packed, Rng};

/// Queries per batch in the `-ahead` variants: what one `recvmmsg` of a `ternd` UDP
/// worker reads at most.
const BATCH: usize = 32;

/// Queries per iteration: more names than the caches hold, as a load generator cycles
/// through its query file (with 10,000 the zone data they touch stays in the CPU's
/// caches from one iteration to the next, and the figures flatter; TERN_BENCH_QUERIES
/// sets another count).
const QUERIES: usize = 200_000;

#[path = "support/tldmix.rs"]
mod tldmix;

fn bench(c: &mut Criterion) {
    let names: usize =
        std::env::var("TERN_BENCH_NAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let count: usize =
        std::env::var("TERN_BENCH_QUERIES").ok().and_then(|v| v.parse().ok()).unwrap_or(QUERIES);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (text, owners) = tld_zone(names, &mut rng);
    let zones = zone_set(&text);
    let mut group = c.benchmark_group("engine");
    group.sample_size(20); // an iteration answers the whole set: tens of milliseconds
    for (label, dnssec_share) in [("tld-mix-do0", 0), ("tld-mix-do50", 50)] {
        let packed = Packed::new(&queries(&owners, count, dnssec_share, &mut rng));
        mix(&mut group, label, &zones, &packed);
    }
    drop(zones);
    signed(&mut group, count);
    group.finish();
}

/// The `signed-*` variants, on the harness's data set when it has been made.
fn signed(group: &mut BenchmarkGroup<'_, WallTime>, count: usize) {
    let dir = std::env::var_os("TERN_BENCH_DATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/out/tld-100000-z1"),
        PathBuf::from,
    );
    let zone = dir.join("zone.nsec3-optout.signed");
    let query_file = dir.join("queries-q3-n200000-nx0.4.txt");
    let zones = match zone_file_set(&zone) {
        Ok(zones) => zones,
        Err(e) => return skip_signed(&e),
    };
    for (label, dnssec_share) in [("signed-do0", 0), ("signed-do50", 50), ("signed-do100", 100)] {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        match query_file_queries(&query_file, count, dnssec_share, &mut rng) {
            Ok(qs) => mix(group, label, &zones, &Packed::new(&qs)),
            Err(e) => return skip_signed(&e),
        }
    }
}

/// Says why the `signed-*` variants are not run.
fn skip_signed(error: &str) {
    eprintln!("skipping the signed-* benches ({error}): `python3 bench/datasets.py` makes them");
}

/// One mix, answered one query at a time and with look-ahead.
fn mix(group: &mut BenchmarkGroup<'_, WallTime>, label: &str, zones: &ZoneSet, packed: &Packed) {
    let engine = Engine::new(Config::default());
    let mut out = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let qs = packed.slices();
    group.throughput(Throughput::Elements(qs.len() as u64));
    group.bench_function(label, |b| {
        b.iter(|| {
            for q in &qs {
                let request = Request::new(q, Transport::Udp);
                let outcome = engine.answer(zones, &request, &mut out, &mut table);
                black_box(matches!(outcome, Outcome::Answered { .. }));
            }
        })
    });
    let mut ahead: [Lookahead; 3] = Default::default();
    group.bench_function(format!("{label}-ahead"), |b| {
        b.iter(|| {
            // As `ternd`'s UDP workers: batches of BATCH queries, each with its own pins; a
            // query is located two queries before its answer and advanced one before.
            for batch in qs.chunks(BATCH) {
                let mut pins = Pins::new();
                for (i, q) in batch.iter().take(2).enumerate() {
                    engine.look_ahead(zones, &mut pins, q, &mut ahead[i]);
                }
                for (i, q) in batch.iter().enumerate() {
                    ahead[(i + 1) % 3].advance(&pins);
                    if let Some(next) = batch.get(i + 2) {
                        engine.look_ahead(zones, &mut pins, next, &mut ahead[(i + 2) % 3]);
                    }
                    let request = Request::new(q, Transport::Udp);
                    let current = &mut ahead[i % 3];
                    let outcome = engine
                        .answer_with(zones, &mut pins, &request, current, &mut out, &mut table);
                    black_box(matches!(outcome, Outcome::Answered { .. }));
                }
            }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
