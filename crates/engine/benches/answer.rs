//! The engine alone, no sockets: answers per second on a TLD-like zone with the query
//! mix of `../shared/bench/genzone.py` (about 40% names that do not exist, the rest hits
//! over A/AAAA/NS/DS/MX/TXT/SOA, half of them below a delegation), with and without DO.
//! Each mix is answered two ways: one query at a time ([`Engine::answer`]), and as the
//! UDP workers answer a batch, locating the next query while answering the current one
//! (`-ahead`: [`Engine::look_ahead`] and [`Engine::answer_with`]).
//!
//! The queries lie back to back in one buffer ([`tldmix::Packed`]), as a batch lies in
//! the server's receive buffers.
//!
//! `cargo bench -p tern-engine --bench answer` (TERN_BENCH_NAMES sets the zone size).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tern_engine::{Config, Engine, Lookahead, Outcome, Request, Transport};
use tern_wire::message::CompressionTable;
use tern_zone::Pins;
use tldmix::{queries, tld_zone, zone_set, Packed, Rng};

/// Queries per batch in the `-ahead` variants: what one `recvmmsg` of a `ternd` UDP
/// worker reads at most.
const BATCH: usize = 32;

#[path = "support/tldmix.rs"]
mod tldmix;

fn bench(c: &mut Criterion) {
    let names: usize =
        std::env::var("TERN_BENCH_NAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (text, owners) = tld_zone(names, &mut rng);
    let zones = zone_set(&text);
    let engine = Engine::new(Config::default());
    let mut out = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let mut group = c.benchmark_group("engine");
    for (label, dnssec_share) in [("tld-mix-do0", 0), ("tld-mix-do50", 50)] {
        let packed = Packed::new(&queries(&owners, 10_000, dnssec_share, &mut rng));
        let qs = packed.slices();
        group.throughput(Throughput::Elements(qs.len() as u64));
        group.bench_function(label, |b| {
            b.iter(|| {
                for q in &qs {
                    let request =
                        Request { message: q, transport: Transport::Udp, tcp_keepalive: None };
                    let outcome = engine.answer(&zones, &request, &mut out, &mut table);
                    black_box(matches!(outcome, Outcome::Answered { .. }));
                }
            })
        });
        let mut ahead: [Lookahead; 3] = Default::default();
        group.bench_function(format!("{label}-ahead"), |b| {
            b.iter(|| {
                // As `ternd`'s UDP workers: batches of BATCH queries, each with its own
                // pins; a query is located two queries before its answer and advanced one
                // before.
                for batch in qs.chunks(BATCH) {
                    let mut pins = Pins::new();
                    for (i, q) in batch.iter().take(2).enumerate() {
                        engine.look_ahead(&zones, &mut pins, q, &mut ahead[i]);
                    }
                    for (i, q) in batch.iter().enumerate() {
                        ahead[(i + 1) % 3].advance(&pins);
                        if let Some(next) = batch.get(i + 2) {
                            engine.look_ahead(&zones, &mut pins, next, &mut ahead[(i + 2) % 3]);
                        }
                        let request =
                            Request { message: q, transport: Transport::Udp, tcp_keepalive: None };
                        let current = &mut ahead[i % 3];
                        let outcome = engine.answer_with(
                            &zones, &mut pins, &request, current, &mut out, &mut table,
                        );
                        black_box(matches!(outcome, Outcome::Answered { .. }));
                    }
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
