//! Instruction-count driver for the message workloads, immune to machine load: run it
//! under callgrind with 1 and with N+1 iterations and divide the difference by N.
//!
//! `valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/deps/message_counts-* WORKLOAD ITERATIONS`
//! with WORKLOAD one of `parse`, `referral`, `compress`. `scripts`-free: see
//! docs/benchmarks.md for the exact commands.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

#[path = "support/workloads.rs"]
mod workloads;

use std::hint::black_box;

use tern_wire::message::{CompressionTable, MessageWriter};
use workloads::{compress_linear, names_4k, parse_query, referral, write_referral, QUERY};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` runs every bench target with `--bench`: do nothing then.
    let (Some(workload), Some(count)) = (args.get(1), args.get(2)) else {
        return;
    };
    let iterations: u64 = count.parse().unwrap();
    let mut buf = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let mut scratch = [0u8; 512];
    let r = referral();
    let names = names_4k();
    for _ in 0..iterations {
        match workload.as_str() {
            "parse" => {
                black_box(parse_query(black_box(QUERY), &mut scratch));
            }
            "referral" => {
                let mut w = MessageWriter::new(&mut buf, 1232, &mut table).unwrap();
                write_referral(&mut w, black_box(&r));
                black_box(w.len());
            }
            "compress" => {
                black_box(compress_linear(&mut buf, &mut table, black_box(&names)));
            }
            other => panic!("unknown workload {other}"),
        }
    }
}
