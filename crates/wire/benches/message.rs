//! Message benchmarks: parse a typical query; write a 20-RR referral with compression;
//! compress the names of a ~4 KiB message with the linear compressor and with a naive
//! quadratic one, side by side.
//!
//! Run: `cargo bench -p tern-wire --bench message`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

#[path = "../tests/support/naive.rs"]
#[allow(dead_code)]
mod naive;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use naive::NaiveCompressor;
use tern_wire::edns::OptionCode;
use tern_wire::message::{CompressionTable, MessageReader, MessageWriter, Section};
use tern_wire::{Class, Name, Rtype};

/// `www.example.com. A` with RD and EDNS (1232, DO, a client cookie): what resolvers send.
const QUERY: &[u8] = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01\
\x03www\x07example\x03com\x00\x00\x01\x00\x01\
\x00\x00\x29\x04\xd0\x00\x00\x80\x00\x00\x0c\x00\x0a\x00\x08\x01\x02\x03\x04\x05\x06\x07\x08";

fn parse_query(c: &mut Criterion) {
    let mut scratch = [0u8; 512];
    c.bench_function("parse typical query", |b| {
        b.iter(|| {
            let mut reader = MessageReader::new(black_box(QUERY)).unwrap();
            let q = reader.question().unwrap().unwrap();
            while reader.record(&mut scratch).unwrap().is_some() {}
            let edns = reader.edns().unwrap();
            let cookie = edns.option(OptionCode::COOKIE).unwrap().cookie().unwrap();
            black_box((q.qtype, edns.udp_payload_size(), cookie.client))
        })
    });
}

/// A referral from `com.` for `www.example.com.`: 6 NS, a DS, 6 A and 6 AAAA glue, OPT.
struct Referral {
    qname: Name,
    zone: Name,
    ns: Vec<(Name, Vec<u8>)>,
}

fn referral() -> Referral {
    let ns = (1..=6)
        .map(|i| {
            let host: Name = format!("ns{i}.example.com.").parse().unwrap();
            let rdata = host.as_wire().to_vec();
            (host, rdata)
        })
        .collect();
    Referral {
        qname: "www.example.com.".parse().unwrap(),
        zone: "example.com.".parse().unwrap(),
        ns,
    }
}

fn write_referral(w: &mut MessageWriter<'_>, r: &Referral) {
    w.set_id(0x1234);
    w.push_question(&r.qname, Rtype::A, Class::IN).unwrap();
    w.reserve(11).unwrap();
    for (_, rdata) in &r.ns {
        w.push_record(Section::Authority, &r.zone, Rtype::NS, Class::IN, 172800, rdata).unwrap();
    }
    let ds =
        [0x30, 0x39, 8, 2, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01];
    let mut ds_rdata = ds.to_vec();
    ds_rdata.extend_from_slice(&[0x5A; 20]);
    w.push_record(Section::Authority, &r.zone, Rtype::DS, Class::IN, 86400, &ds_rdata).unwrap();
    for (i, (host, _)) in r.ns.iter().enumerate() {
        let a = [192, 0, 2, i as u8];
        w.push_record(Section::Additional, host, Rtype::A, Class::IN, 172800, &a).unwrap();
    }
    for (i, (host, _)) in r.ns.iter().enumerate() {
        let mut aaaa = [0u8; 16];
        aaaa[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        aaaa[15] = i as u8;
        w.push_record(Section::Additional, host, Rtype::AAAA, Class::IN, 172800, &aaaa).unwrap();
    }
    w.reserve(0).unwrap();
    w.push_opt(1232, 0, 0x8000).unwrap();
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

/// Names of a ~4 KiB message: 40 owners in three zones, each with NS/MX-style targets.
fn names_4k() -> Vec<Name> {
    let mut names = Vec::new();
    let zones = ["example.com.", "example.net.", "sub.example.org."];
    for i in 0..60 {
        let zone = zones[i % zones.len()];
        names.push(format!("host{i}.{zone}").parse().unwrap());
        names.push(format!("mail{}.{zone}", i % 7).parse().unwrap());
        names.push(format!("ns{}.dns-provider.example.", i % 4).parse().unwrap());
    }
    names
}

fn compression_bench(c: &mut Criterion) {
    let names = names_4k();
    let mut buf = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    // The RDATA between names in a real message: 10 fixed bytes per name here.
    let filler = [0u8; 10];
    let linear_len = {
        let mut w = MessageWriter::new(&mut buf, 65535, &mut table).unwrap();
        for n in &names {
            w.write_name(n, true).unwrap();
            w.write_bytes(&filler).unwrap();
        }
        w.len()
    };
    let mut naive = NaiveCompressor::new();
    for n in &names {
        naive.write_name(n);
        naive.raw(&filler);
    }
    assert_eq!(linear_len, naive.msg.len());
    let uncompressed: usize = names.iter().map(|n| n.len() + filler.len()).sum::<usize>() + 12;
    eprintln!("{} names: {uncompressed} bytes uncompressed, {linear_len} compressed", names.len());
    let mut group = c.benchmark_group("compress 4 KiB message");
    group.throughput(Throughput::Elements(names.len() as u64));
    group.bench_function("linear (hash set)", |b| {
        b.iter(|| {
            let mut w = MessageWriter::new(&mut buf, 65535, &mut table).unwrap();
            for n in black_box(&names) {
                w.write_name(n, true).unwrap();
                w.write_bytes(&filler).unwrap();
            }
            black_box(w.len())
        })
    });
    group.bench_function("naive (quadratic)", |b| {
        b.iter(|| {
            naive.clear();
            for n in black_box(&names) {
                naive.write_name(n);
                naive.raw(&filler);
            }
            black_box(naive.msg.len())
        })
    });
    group.finish();
}

criterion_group!(benches, parse_query, referral_bench, compression_bench);
criterion_main!(benches);
