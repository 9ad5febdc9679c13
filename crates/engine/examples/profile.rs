//! Profiling driver: the same zone and mix as benches/answer.rs, answered in a loop.
//! `valgrind --tool=callgrind target/release/examples/profile` (TERN_AHEAD=1: answer as
//! the UDP workers do, locating the next query first)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use std::path::Path;

use tern_engine::{Config, CookieSeen, Engine, Lookahead, Outcome, Report, Request, Transport};
use tern_wire::message::CompressionTable;
use tern_zone::{Pins, ZoneSet};
use tldmix::{from_files, queries, tld_zone, zone_set, Packed, Rng};

#[path = "../benches/support/tldmix.rs"]
mod tldmix;

fn main() {
    let names: usize =
        std::env::var("TERN_BENCH_NAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let rounds: usize = std::env::var("ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    // TERN_QUERIES: how many queries one round asks (a set larger than the caches, as a
    // server's load generator cycles through, takes 100,000 or more).
    let count: usize =
        std::env::var("TERN_QUERIES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let engine = Engine::new(Config::default());
    let mut out = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    // TERN_DO_SHARE=50: half the queries with DO (in the generated mix with
    // TERN_BENCH_NAMES=100000 TERN_QUERIES=200000, the bench's `tld-mix-do50` queries, made
    // as there after the `do0` ones from the same generator).
    let share: u64 = match std::env::var("TERN_DO") {
        Ok(v) if v == "1" => 100,
        _ => std::env::var("TERN_DO_SHARE").ok().and_then(|v| v.parse().ok()).unwrap_or(0),
    };
    // TERN_ZONE_FILE + TERN_QUERY_FILE (+ TERN_DO=1): profile a harness data set instead.
    let (zones, qs) = match (std::env::var("TERN_ZONE_FILE"), std::env::var("TERN_QUERY_FILE")) {
        (Ok(zone), Ok(queries)) => {
            from_files(Path::new(&zone), Path::new(&queries), count, share, &mut rng).unwrap()
        }
        _ => {
            let (text, owners) = tld_zone(names, &mut rng);
            let mut qs = queries(&owners, count, 0, &mut rng);
            if share > 0 {
                qs = queries(&owners, count, share, &mut rng);
            }
            (zone_set(&text), qs)
        }
    };
    let packed = Packed::new(&qs);
    let qs = packed.slices();
    let start = std::time::Instant::now();
    let mut answered = 0usize;
    for _ in 0..rounds {
        answered += run(&engine, &zones, &qs, &mut out, &mut table);
    }
    let per = start.elapsed().as_nanos() as f64 / (rounds * qs.len()) as f64;
    println!("{answered} answers, {per:.0} ns per answer");
}

#[inline(never)]
fn run(
    engine: &Engine,
    zones: &ZoneSet,
    qs: &[&[u8]],
    out: &mut [u8],
    table: &mut CompressionTable,
) -> usize {
    let ahead_on = std::env::var("TERN_AHEAD").is_ok_and(|v| v == "1");
    // TERN_REPORT=1 (with TERN_AHEAD=1): answer as the UDP workers do with rate limiting
    // on, with the report on each answer.
    let report = std::env::var("TERN_REPORT").is_ok_and(|v| v == "1");
    // How far ahead queries are located and advanced (TERN_LOCATE, TERN_ADVANCE).
    let knob = |name: &str, default: usize| {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let (locate, advance) = (knob("TERN_LOCATE", 2), knob("TERN_ADVANCE", 1));
    let ring = locate + 1;
    let mut ahead: Vec<Lookahead> = (0..ring).map(|_| Lookahead::default()).collect();
    let mut n = 0;
    // As a UDP worker: batches of TERN_BATCH queries (32, its `recvmmsg` size), each
    // with its own pins.
    for batch in qs.chunks(knob("TERN_BATCH", 32)) {
        let mut pins = Pins::new();
        for (i, q) in batch.iter().take(if ahead_on { locate } else { 0 }).enumerate() {
            engine.look_ahead(zones, &mut pins, q, &mut ahead[i]);
        }
        for (i, q) in batch.iter().enumerate() {
            let request = Request::new(q, Transport::Udp);
            let outcome = if ahead_on {
                // Located `locate` queries ahead, advanced `advance` ahead.
                ahead[(i + advance) % ring].advance(&pins);
                if let Some(next) = batch.get(i + locate) {
                    engine.look_ahead(zones, &mut pins, next, &mut ahead[(i + locate) % ring]);
                }
                let ahead = &mut ahead[i % ring];
                if report {
                    let mut report = Report::error(CookieSeen::None);
                    let outcome = engine.answer_reported(
                        zones,
                        &mut pins,
                        &request,
                        ahead,
                        out,
                        table,
                        &mut report,
                        &|class, tag| {
                            black_box((class, tag));
                        },
                    );
                    black_box(report);
                    outcome
                } else {
                    engine.answer_with(zones, &mut pins, &request, ahead, out, table)
                }
            } else {
                engine.answer(zones, &request, out, table)
            };
            n += usize::from(matches!(black_box(outcome), Outcome::Answered { .. }));
        }
    }
    n
}
