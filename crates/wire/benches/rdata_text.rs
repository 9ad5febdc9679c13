//! Throughput of the RDATA presentation codecs on a zone-like mix of records: what the
//! zone-file parser pays per record for `parse_text`, and what printing costs.
//!
//! Run: `cargo bench -p tern-wire --bench rdata_text`.

// A measuring harness: a failure should stop it loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tern_wire::rdata::{self, Rdata};
use tern_wire::text::Lexer;
use tern_wire::{Name, Rtype};

const SIG: &str = "oJB1W6WNGv+ldvQ3WDG0MQkg5IEhjRip8WTrPYGv07h108dUKGMeDPKijVCHX3DDKdfb+v6oB9wfuh3DTJXUAfI/M0zmO/zz8bW0Rznl8O3tGNazPwQKkRN20XPXV6nwwfoXmJQbsLNrLfkGJ5D6fwFm8nN+6pBzeDQfsS3Ap3o=";
const KEY: &str = "AwEAAagAIKlVZrpC6Ia7gEzahOR+9W29euxhJhVVLOyQbSEW0O8gcCjFFVQUTf6v58fLjwBd0YI0EzrAcQqBGCzh/RStIoO8g0NfnfL2MTJRkxoXbfDaUeVPQuYEhg37NZWAJQ9VnMVDxP/VHL496M/QZxkjf5/Efucp2gaDX6RS6CXpoY68LsvPVjR0ZSwzz1apAzvN9dlzEheX7ICJBBtuA6G3LQpzW5hOA2hzCTMjJPJ8LbqF6dsV6DoBQzgul0sGIcGOYl7OyQdXfZ57relSQageu+ipAdTTJ25AsRTAoub8ONGcLmqrAmRLKBP1dfwhYB4N7knNnulqQxA+Uk1ihz0=";

/// A 32-character base32hex NSEC3 hash (20 bytes) derived from `i`.
fn hash32(i: u32) -> String {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let mut x = u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..32)
        .map(|_| {
            x = x.rotate_left(5) ^ 0x5DEE_CE66;
            char::from(DIGITS[(x & 31) as usize])
        })
        .collect()
}

/// (type, rdata text) pairs in the proportions of a signed delegation-heavy zone.
fn records() -> Vec<(Rtype, String)> {
    let mut out = Vec::new();
    for i in 0..2_000u32 {
        let (a, b) = (i % 250, i / 250);
        out.push((Rtype::NS, format!("ns{}.example.net.", i % 4)));
        out.push((Rtype::NS, format!("ns{}.example.net.", (i + 1) % 4)));
        out.push((Rtype::A, format!("192.0.{b}.{a}")));
        out.push((Rtype::AAAA, format!("2001:db8:{b:x}::{a:x}")));
        out.push((
            Rtype::DS,
            format!(
                "{} 13 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D",
                10_000 + i
            ),
        ));
        out.push((
            Rtype::RRSIG,
            format!(
                "DS 13 3 86400 20260201000000 20260101000000 {} example.com. {SIG}",
                20_000 + i % 3
            ),
        ));
        out.push((Rtype::NSEC3, format!("1 1 0 - {} NS DS RRSIG", hash32(i))));
        if i % 10 == 0 {
            out.push((Rtype::MX, format!("{} mail{}.example.com.", i % 50, i % 7)));
            out.push((Rtype::TXT, format!("\"v=spf1 ip4:192.0.2.{a} -all\" \"id={i}\"")));
            out.push((Rtype::NSEC, format!("host{i}.example.com. A AAAA RRSIG NSEC")));
        }
    }
    out.push((
        Rtype::SOA,
        "ns1.example.com. hostmaster.example.com. 2026010101 2h 1h 2w 1h".into(),
    ));
    out.push((Rtype::DNSKEY, format!("257 3 8 {KEY}")));
    out
}

#[inline(never)]
fn parse_all(records: &[(Rtype, String)], origin: &Name, out: &mut Vec<u8>) {
    for (rtype, text) in records {
        out.clear();
        rdata::parse_text(*rtype, &mut Lexer::for_fields(text.as_bytes()), Some(origin), out)
            .unwrap_or_else(|e| panic!("{rtype} {text}: {e}"));
    }
}

fn bench_mix(c: &mut Criterion) {
    let origin: Name = "example.com.".parse().unwrap();
    let records = records();
    let bytes: usize = records.iter().map(|(_, t)| t.len() + 1).sum();
    eprintln!("zone mix: {} records, {bytes} bytes of RDATA text", records.len());
    let mut wires = Vec::new();
    let mut out = Vec::new();
    for (t, text) in &records {
        out.clear();
        rdata::parse_text(*t, &mut Lexer::for_fields(text.as_bytes()), Some(&origin), &mut out)
            .unwrap();
        wires.push((*t, out.clone()));
    }

    let mut group = c.benchmark_group("rdata");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("parse_text zone mix", |b| {
        let mut out = Vec::with_capacity(1024);
        b.iter(|| parse_all(&records, &origin, &mut out));
    });
    group.bench_function("write_text zone mix", |b| {
        let mut text = String::with_capacity(1024);
        b.iter(|| {
            for (t, w) in &wires {
                text.clear();
                rdata::write_text(*t, w, &mut text);
            }
        });
    });
    group.bench_function("validate zone mix", |b| {
        b.iter(|| {
            for (t, w) in &wires {
                rdata::validate(*t, w).unwrap();
            }
        });
    });
    group.bench_function("Rdata::from_wire zone mix", |b| {
        b.iter(|| {
            for (t, w) in &wires {
                std::hint::black_box(Rdata::from_wire(*t, w).unwrap());
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("rdata parse_text by type");
    for rtype in [
        Rtype::A,
        Rtype::AAAA,
        Rtype::NS,
        Rtype::MX,
        Rtype::TXT,
        Rtype::DS,
        Rtype::RRSIG,
        Rtype::NSEC,
        Rtype::NSEC3,
    ] {
        let subset: Vec<(Rtype, String)> =
            records.iter().filter(|(t, _)| *t == rtype).cloned().collect();
        let bytes: usize = subset.iter().map(|(_, t)| t.len() + 1).sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_with_input(BenchmarkId::from_parameter(rtype), &subset, |b, subset| {
            let mut out = Vec::with_capacity(1024);
            b.iter(|| parse_all(subset, &origin, &mut out));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = bench_mix
}
criterion_main!(benches);
