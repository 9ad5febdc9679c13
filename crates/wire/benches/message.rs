//! Message benchmarks: parse a typical query; write a 20-RR referral with compression;
//! compress the names of a ~4 KiB message with the linear compressor and with a naive
//! quadratic one, side by side.
//!
//! Run: `cargo bench -p tern-wire --bench message`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

#[path = "../tests/support/naive.rs"]
#[allow(dead_code)]
mod naive;
#[path = "support/workloads.rs"]
mod workloads;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use naive::NaiveCompressor;
use tern_wire::message::{CompressionTable, MessageWriter};
use workloads::{compress_linear, names_4k, parse_query, referral, write_referral, FILLER, QUERY};

fn parse_query_bench(c: &mut Criterion) {
    let mut scratch = [0u8; 512];
    c.bench_function("parse typical query", |b| {
        b.iter(|| black_box(parse_query(black_box(QUERY), &mut scratch)))
    });
}

fn referral_bench(c: &mut Criterion) {
    let r = referral();
    let mut buf = [0u8; 1232];
    let mut table = CompressionTable::new();
    let len = {
        let mut w = MessageWriter::new(&mut buf, 1232, &mut table).unwrap();
        write_referral(&mut w, &r);
        w.len()
    };
    eprintln!("referral: 20 RRs in {len} bytes");
    c.bench_function("write 20-RR referral", |b| {
        b.iter(|| {
            let mut w = MessageWriter::new(&mut buf, 1232, &mut table).unwrap();
            write_referral(&mut w, black_box(&r));
            black_box(w.len())
        })
    });
}

fn compression_bench(c: &mut Criterion) {
    let names = names_4k();
    let mut buf = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let linear_len = compress_linear(&mut buf, &mut table, &names);
    let mut naive = NaiveCompressor::new();
    for n in &names {
        naive.write_name(n);
        naive.raw(&FILLER);
    }
    assert_eq!(linear_len, naive.msg.len());
    let uncompressed: usize = names.iter().map(|n| n.len() + FILLER.len()).sum::<usize>() + 12;
    eprintln!("{} names: {uncompressed} bytes uncompressed, {linear_len} compressed", names.len());
    let mut group = c.benchmark_group("compress 4 KiB message");
    group.throughput(Throughput::Elements(names.len() as u64));
    group.bench_function("linear (hash set)", |b| {
        b.iter(|| black_box(compress_linear(&mut buf, &mut table, black_box(&names))))
    });
    group.bench_function("naive (quadratic)", |b| {
        b.iter(|| {
            naive.clear();
            for n in black_box(&names) {
                naive.write_name(n);
                naive.raw(&FILLER);
            }
            black_box(naive.msg.len())
        })
    });
    group.finish();
}

criterion_group!(benches, parse_query_bench, referral_bench, compression_bench);
criterion_main!(benches);
