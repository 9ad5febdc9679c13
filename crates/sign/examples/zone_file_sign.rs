//! A zone file signed whole, as a server signing it would: the file loaded with Tern's
//! parser into a snapshot, `sign_zone` with one CSK (ECDSA P-256) on N threads, and the
//! snapshot to serve built from the result (`SignedZone::to_contents`). Prints one JSON
//! line: each step's wall time, the signing's CPU time and the whole run's until the
//! snapshot is built, the signatures made, the peak
//! resident set (VmHWM), the resident set after each step, and the proportional set
//! size once only the snapshot to serve is kept and the server's housekeeping after a
//! load has run (`tern_zone::memory::after_load`: freed heap returned, huge pages),
//! beside the heap still in use then (`heap_kib`, glibc's count: what PSS holds beyond
//! it is the allocator's and the kernel's); and what aws-lc-rs alone signs per second
//! on as many threads as signed the zone (`--raw COUNT`, 0: not measured): the signed
//! data of the zone's first COUNT RRsets that the signer signs, made once from the
//! loaded zone, signed with the same key once just before `sign_zone` and once just
//! after the snapshot is built, so that a change in the machine's speed while the zone
//! is signed reaches the reference too (each pass reported, and both together); the
//! data are freed before the PSS is read.
//!
//! `bench/sign.py` runs it beside Knot DNS; figures in docs/benchmarks.md, "DNSSEC
//! signing".
//!
//! ```text
//! cargo build --profile perf -p tern-sign --example zone_file_sign
//! target/perf/examples/zone_file_sign FILE ORIGIN nsec|nsec3-optout THREADS [--raw COUNT]
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;
use std::time::Instant;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use tern_sign::names::Rdatas;
use tern_sign::rrsig::{signed_data, RrsetRef, Scratch};
use tern_sign::{
    sign_zone, Algorithm, DenialConfig, KeyRole, Nsec3Config, SignOptions, SigningKey, Validity,
};
use tern_wire::{Name, Rtype};
use tern_zone::parser::Options;
use tern_zone::{Flags, ZoneContents, APEX};

/// The command line.
struct Args {
    file: String,
    origin: Name,
    denial: DenialConfig,
    threads: usize,
    raw: usize,
}

fn parse_args() -> Args {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let usage = "FILE ORIGIN nsec|nsec3-optout THREADS [--raw COUNT]";
    assert!(argv.len() == 4 || argv.len() == 6, "usage: {usage}");
    let denial = match argv[2].as_str() {
        "nsec" => DenialConfig::Nsec,
        "nsec3-optout" => {
            DenialConfig::Nsec3(Nsec3Config { iterations: 0, salt: Vec::new(), opt_out: true })
        }
        other => panic!("{other}: nsec or nsec3-optout"),
    };
    let raw = if argv.len() == 6 && argv[4] == "--raw" { argv[5].parse().unwrap() } else { 0 };
    Args {
        file: argv[0].clone(),
        origin: argv[1].parse().unwrap(),
        denial,
        threads: argv[3].parse().unwrap(),
        raw,
    }
}

/// A field of /proc/self/status (`VmHWM`, `VmRSS`), in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The process's proportional set size, in KiB.
fn pss_kib() -> u64 {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap();
    let line = rollup.lines().find(|l| l.starts_with("Pss:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// User + system CPU seconds of the whole process so far (every thread, ended or not).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// The signed data (RFC 4034 §3.1.8.1) of the first `count` RRsets of the unsigned
/// `zone` that the signer signs (in the zone's node order: none of the signer's own
/// types, no NS below the apex), for aws-lc-rs to sign alone: one buffer and where each
/// ends.
fn sample(zone: &ZoneContents, key: &SigningKey, count: usize) -> Sample {
    let validity = Validity::new(1_800_000_000, 1_800_000_000 + 30 * 86400).unwrap();
    let times = (validity.inception(), validity.expiration());
    let mut scratch = Scratch::default();
    let mut data =
        Sample { bytes: Vec::with_capacity(count * 128), ends: Vec::with_capacity(count) };
    let remade = [Rtype::RRSIG, Rtype::NSEC, Rtype::NSEC3, Rtype::NSEC3PARAM, Rtype::DNSKEY];
    for id in 0..zone.node_count() as u32 {
        let Some(node) = zone.node(id).filter(|n| !n.flags.contains(Flags::PHANTOM)) else {
            continue;
        };
        let signed = |r: &tern_zone::Rrset<'_>| {
            r.has_records() && !remade.contains(&r.rtype) && (id == APEX || r.rtype != Rtype::NS)
        };
        for rrset in node.rrsets().filter(signed) {
            if data.ends.len() == count {
                return data;
            }
            let rdatas: Rdatas = rrset.rdatas().collect();
            let view = RrsetRef {
                owner: node.owner(),
                rtype: rrset.rtype,
                ttl: rrset.ttl,
                rdatas: &rdatas,
            };
            data.bytes.extend_from_slice(
                signed_data(&view, key, zone.origin(), times, &mut scratch).unwrap(),
            );
            data.ends.push(data.bytes.len());
        }
    }
    data
}

/// Signed data to sign: `bytes` cut at `ends`.
struct Sample {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Sample {
    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(start, &end)| &self.bytes[start..end])
    }
}

/// Bytes the allocator has handed out and not had back (glibc: every arena's in-use
/// chunks and the mapped ones), in KiB; 0 elsewhere.
fn heap_in_use_kib() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallinfo2 takes nothing and returns counts by value.
    unsafe {
        let info = libc::mallinfo2();
        return (info.uordblks + info.hblkhd) as u64 / 1024;
    }
    #[allow(unreachable_code)]
    0
}

/// What aws-lc-rs alone did on `threads` threads at once (as many as signed the zone,
/// so that both figures are taken with the same cores busy), signing each of `data`
/// once with the key's private key: (signatures, seconds of wall time, seconds of the
/// process's CPU time).
fn raw_run(key: &SigningKey, data: &Sample, threads: usize) -> (f64, f64, f64) {
    let pkcs8 = key.to_pkcs8().unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8).unwrap();
    let parts: Vec<&[u8]> = data.iter().collect();
    let share = parts.len().div_ceil(threads.max(1));
    let (start, cpu) = (Instant::now(), cpu_seconds());
    std::thread::scope(|scope| {
        for part in parts.chunks(share) {
            let pair = &pair;
            scope.spawn(move || {
                let rng = SystemRandom::new();
                for d in part {
                    std::hint::black_box(pair.sign(&rng, d).unwrap());
                }
            });
        }
    });
    (parts.len() as f64, start.elapsed().as_secs_f64(), cpu_seconds() - cpu)
}

/// Signatures per second of wall time and per second of CPU time over `runs`.
fn rates(runs: &[(f64, f64, f64)]) -> (f64, f64) {
    let (count, wall, cpu) =
        runs.iter().fold((0.0, 0.0, 0.0), |(n, w, c), r| (n + r.0, w + r.1, c + r.2));
    (count / wall.max(1e-6), count / cpu.max(0.01))
}

fn main() {
    let args = parse_args();
    let started = Instant::now();
    let loaded =
        tern_zone::load_file(Path::new(&args.file), &args.origin, &Options::default(), &mut |_| {})
            .unwrap();
    let load_s = started.elapsed().as_secs_f64();
    let rss_loaded = status_kib("VmRSS:");
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Csk).unwrap();
    let data = sample(&loaded.contents, &key, args.raw);
    let measured = !data.ends.is_empty();
    let raw_before = if measured { raw_run(&key, &data, args.threads) } else { (0.0, 0.0, 0.0) };
    let validity = Validity::new(1_800_000_000, 1_800_000_000 + 30 * 86400).unwrap();
    let options =
        SignOptions { denial: args.denial, threads: args.threads, ..SignOptions::new(validity) };
    let keys = [key];
    let (sign_start, sign_cpu) = (Instant::now(), cpu_seconds());
    let signed = sign_zone(&loaded.contents, &keys, &options).unwrap();
    let (sign_s, sign_cpu_s) = (sign_start.elapsed().as_secs_f64(), cpu_seconds() - sign_cpu);
    let rss_signed = status_kib("VmRSS:");
    let signatures = signed.signature_count();
    let build_start = Instant::now();
    let contents = signed.to_contents().unwrap();
    let build_s = build_start.elapsed().as_secs_f64();
    let rss_built = status_kib("VmRSS:");
    let (total_s, cpu_s) = (started.elapsed().as_secs_f64(), cpu_seconds());
    let raw_after = if measured { raw_run(&keys[0], &data, args.threads) } else { (0.0, 0.0, 0.0) };
    drop(data);
    drop(loaded);
    tern_zone::memory::after_load(); // the server's housekeeping after a load
    let (pss, peak, heap) = (pss_kib(), status_kib("VmHWM:"), heap_in_use_kib());
    let (raw_wall, raw_cpu) = if measured { rates(&[raw_before, raw_after]) } else { (0.0, 0.0) };
    let (before, after) = (rates(&[raw_before]).1, rates(&[raw_after]).1);
    let (before, after) = if measured { (before, after) } else { (0.0, 0.0) };
    println!(
        "{{\"load_s\": {load_s:.3}, \"sign_s\": {sign_s:.3}, \"sign_cpu_s\": {sign_cpu_s:.2}, \
         \"build_s\": {build_s:.3}, \"total_s\": {total_s:.3}, \"cpu_s\": {cpu_s:.2}, \"signatures\": {signatures}, \
         \"records\": {}, \"pss_kib\": {pss}, \"heap_kib\": {heap}, \"peak_rss_kib\": {peak}, \
         \"rss_loaded_kib\": {rss_loaded}, \"rss_signed_kib\": {rss_signed}, \
         \"rss_built_kib\": {rss_built}, \
         \"raw_sig_s\": {raw_wall:.0}, \"raw_sig_cpu_s\": {raw_cpu:.0}, \
         \"raw_before_sig_cpu_s\": {before:.0}, \"raw_after_sig_cpu_s\": {after:.0}}}",
        contents.record_count()
    );
}
