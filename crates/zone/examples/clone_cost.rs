//! What a new version of a large zone costs before any change: the clone of the served
//! version (a pointer and a count per copy-on-write chunk) and, apart, its drop, with
//! the caches emptied before each round, as between two changes of a server that answers
//! meanwhile (a 64 MiB buffer is written through first).
//!
//! `clone_cost ZONE_FILE ORIGIN [ROUNDS=300] [huge]` prints the median and 90th
//! percentile of each, in microseconds; `huge` backs the zone with huge pages first, as
//! the server does after a load (`tern_zone::memory::after_load`).

#![allow(clippy::indexing_slicing)]

use std::path::Path;
use std::time::Instant;

use tern_wire::Name;
use tern_zone::Options;

const USAGE: &str = "usage: clone_cost ZONE_FILE ORIGIN [ROUNDS] [huge]";

/// Ends the program with `why` (a bad argument or zone file).
fn fail(why: impl std::fmt::Display) -> ! {
    eprintln!("clone_cost: {why}\n{USAGE}");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, origin, rest @ ..] = args.as_slice() else { fail("ZONE_FILE and ORIGIN needed") };
    let origin: Name = origin.parse().unwrap_or_else(|e| fail(format!("origin {origin}: {e}")));
    let rounds: usize = rest
        .first()
        .map_or(Ok(300), |n| n.parse())
        .unwrap_or_else(|e| fail(format!("ROUNDS: {e}")))
        .max(1);
    let zone = tern_zone::load_file(Path::new(file), &origin, &Options::default(), &mut |_| {})
        .unwrap_or_else(|e| fail(e))
        .contents;
    if rest.get(1).is_some_and(|a| a == "huge") {
        tern_zone::memory::after_load();
    }
    let mut evict = vec![0u8; 64 << 20];
    let (mut clones, mut drops) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        evict.iter_mut().step_by(64).for_each(|b| *b = b.wrapping_add(round as u8));
        let began = Instant::now();
        let copy = std::hint::black_box(zone.clone());
        clones.push(began.elapsed().as_secs_f64() * 1e6);
        let began = Instant::now();
        drop(copy);
        drops.push(began.elapsed().as_secs_f64() * 1e6);
    }
    let at = |times: &mut Vec<f64>, q: f64| {
        times.sort_by(f64::total_cmp);
        times[((times.len() - 1) as f64 * q) as usize]
    };
    println!(
        "{} records, {rounds} rounds: clone median {:.1} µs, p90 {:.1}; drop median {:.1} µs, p90 {:.1} (evicted {})",
        zone.record_count(),
        at(&mut clones, 0.5),
        at(&mut clones, 0.9),
        at(&mut drops, 0.5),
        at(&mut drops, 0.9),
        evict.first().copied().unwrap_or(0),
    );
}
