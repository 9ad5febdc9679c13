//! The builder gives the same zone whatever order the records come in: owners looked up
//! late (see `builder/space.rs`), owners that come back after others, NSEC3 records mixed
//! with the rest. Checked on the signed conformance zones, their lines shuffled.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;

use tern_wire::{Name, Rtype};
use tern_zone::parser::Options;
use tern_zone::{load_bytes, ZoneContents};

fn load(lines: &[&str], origin: &Name) -> ZoneContents {
    let text = lines.join("\n");
    load_bytes(text.as_bytes(), Path::new("shuffled"), origin, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .contents
}

/// Every record as text, sorted, and the node counts.
fn summary(zone: &ZoneContents) -> (Vec<String>, usize, usize) {
    let mut records = Vec::new();
    zone.for_each_record(|owner, rtype, ttl, rdata| {
        records.push(format!("{owner} {ttl} {rtype} {rdata:02x?}"));
    });
    records.sort();
    let nsec3 = zone.nsec3().map_or(0, |c| c.nodes().count());
    (records, zone.node_count(), nsec3)
}

/// A deterministic shuffle: an LCG-driven Fisher-Yates.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        items.swap(i, (seed >> 33) as usize % (i + 1));
    }
}

#[test]
fn shuffled_signed_zones_build_the_same() {
    let zones = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/zones");
    for (file, origin) in [
        ("optout.example.zone.signed", "optout.example."),
        ("secure.example.zone.signed", "secure.example."),
    ] {
        let text = std::fs::read_to_string(zones.join(file)).unwrap();
        let lines: Vec<&str> =
            text.lines().filter(|l| !l.is_empty() && !l.starts_with(';')).collect();
        let origin: Name = origin.parse().unwrap();
        let want = summary(&load(&lines, &origin));
        assert!(want.2 > 0 || file.starts_with("secure"), "{file}: an NSEC3 chain");
        for seed in 1..=20 {
            let mut shuffled = lines.clone();
            shuffle(&mut shuffled, seed);
            let zone = load(&shuffled, &origin);
            assert_eq!(summary(&zone), want, "{file}, shuffle {seed}");
            // Each owner is found under its name.
            let mut found = 0;
            zone.for_each_record(|owner, rtype, _, _| {
                if rtype != Rtype::NSEC3 && rtype != Rtype::RRSIG {
                    assert!(zone.find(owner).is_some(), "{owner} not found");
                    found += 1;
                }
            });
            assert!(found > 10);
        }
    }
}
