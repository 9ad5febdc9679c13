//! Profiling driver for zone transfers in: reads a transfer's messages (framed as on
//! TCP, as `tern-engine`'s `axfr` example writes them with TERN_WRITE) and times reading
//! them into `transfer::Incoming` and building the zone, as a secondary does.
//!
//! `TERN_STREAM=stream.bin TERN_ORIGIN=tld. target/release/examples/transfer_in`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::time::Instant;

use tern_wire::message::{MessageReader, Section, MAX_RDATA_LEN};
use tern_wire::{Name, NameBuilder};
use tern_zone::transfer::{Incoming, Received};

/// Reads every message into the transfer (apart, for `--toggle-collect='*read_all*'`).
#[inline(never)]
fn read_all(origin: &Name, stream: &[u8]) -> Incoming {
    let mut incoming = Incoming::axfr(origin);
    let mut scratch = vec![0u8; MAX_RDATA_LEN];
    let mut owner = NameBuilder::new();
    let mut rest = stream;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
        let message = &rest[2..2 + len];
        rest = &rest[2 + len..];
        let mut reader = MessageReader::new(message).unwrap();
        while let Some(r) = reader.record_in(&mut owner, &mut scratch).unwrap() {
            if r.section == Section::Answer {
                incoming.record_read(&r).unwrap();
            }
        }
    }
    incoming
}

fn main() {
    // On a thread of its own, as in `ternd`: its allocations come from a thread's
    // arena, which glibc grows differently from the main one.
    std::thread::spawn(run).join().unwrap();
}

fn run() {
    let stream = std::fs::read(std::env::var("TERN_STREAM").expect("TERN_STREAM")).unwrap();
    let origin: Name =
        std::env::var("TERN_ORIGIN").unwrap_or_else(|_| "tld.".into()).parse().unwrap();
    let started = Instant::now();
    let incoming = read_all(&origin, &stream);
    let read = started.elapsed();
    let Received::Full(zone, _) = incoming.finish().unwrap() else { panic!("not a zone") };
    let total = started.elapsed();
    println!(
        "{} records: read {:.3} s, built {:.3} s, total {:.3} s; resident {} MB, peak {} MB",
        zone.record_count(),
        read.as_secs_f64(),
        (total - read).as_secs_f64(),
        total.as_secs_f64(),
        status_mb("VmRSS:"),
        status_mb("VmHWM:")
    );
}

/// A size from /proc/self/status, in MB (0 when it cannot be read).
fn status_mb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_default();
    let kb: u64 =
        line.trim_start_matches(field).trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
    kb / 1024
}
