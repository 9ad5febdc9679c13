//! Parses one zone file a few times and prints the throughput of each run: a bench
//! binary for big files and for profilers (criterion's sampling is too slow for them).
//!
//! `TERN_BENCH_ZONE=/tmp/tld/zone.txt TERN_BENCH_ORIGIN=tld. TERN_BENCH_RUNS=5
//!  cargo bench -p tern-zone --bench parse_file`
//! The file is read into memory first; only parsing (to records handed to a counting
//! sink) is timed, by the wall clock and (on Linux) by the CPU time of the thread, which
//! a machine shared with other work disturbs less.

// A measuring harness, not library code: it may stop on a broken setup.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::time::Instant;

use tern_wire::Name;
use tern_zone::parser::{parse_bytes, Options, Record};

fn main() {
    let Ok(path) = std::env::var("TERN_BENCH_ZONE") else {
        eprintln!("parse_file: set TERN_BENCH_ZONE (and TERN_BENCH_ORIGIN) to measure a file");
        return;
    };
    let origin = std::env::var("TERN_BENCH_ORIGIN").unwrap_or_else(|_| "tld.".into());
    let runs: usize =
        std::env::var("TERN_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let origin: Name = origin.parse().unwrap_or_else(|e| panic!("origin: {e}"));
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut rates = Vec::new();
    for run in 1..=runs {
        let mut rdata_bytes = 0u64;
        let mut sink = |r: &Record<'_>| {
            rdata_bytes += r.rdata.len() as u64;
            Ok(())
        };
        let (start, cpu_start) = (Instant::now(), thread_cpu_seconds());
        let report = parse_bytes(&text, Path::new(&path), &origin, &Options::default(), &mut sink)
            .unwrap_or_else(|e| panic!("{e}"));
        let secs = start.elapsed().as_secs_f64();
        let cpu = thread_cpu_seconds().zip(cpu_start).map(|(end, start)| end - start);
        let rate = text.len() as f64 / secs / 1e6;
        let cpu_rate = cpu.map(|c| text.len() as f64 / c / 1e6);
        println!(
            "run {run}: {} bytes, {} records ({rdata_bytes} bytes of RDATA) in {secs:.3} s: {rate:.1} MB/s; CPU {}",
            text.len(),
            report.records,
            cpu_rate.map_or("unknown".to_owned(), |r| format!("{:.3} s: {r:.1} MB/s", cpu.unwrap_or(0.0))),
        );
        rates.push(cpu_rate.unwrap_or(rate));
    }
    rates.sort_by(f64::total_cmp);
    if let Some(median) = rates.get(rates.len() / 2) {
        println!("median {median:.1} MB/s (CPU time) over {runs} runs");
    }
}

/// CPU time of this thread in seconds (user + system), from `/proc/thread-self/stat`.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which is in parentheses): utime and stime are the
    // 12th and 13th of them, in clock ticks (100 per second on Linux).
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
