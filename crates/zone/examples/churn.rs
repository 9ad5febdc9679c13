//! A zone whose names churn, as `bench/update_rate.py` drives the server: a 1,000-
//! delegation zone (`tld.`, each delegation with glue) takes N one-record changes — add
//! `u<j>.tld. A`, and from the 500th on also remove the one added 500 before — applied in
//! place in batches of 256, each batch published (the version cloned) as a zone's writer
//! does. Prints the time per change and the size of the node table at the end, which
//! follows the live names (`docs/design.md`, names that go are reclaimed).
//! `cargo run --release -p tern-zone --example churn -- [N]` (default 300,000)
use std::time::Instant;

use tern_wire::{rdata, Name, Rtype};
use tern_zone::{Changeset, RecordData, ZoneBuilder, ZoneContents};

/// Names alive at once: a name is removed this many changes after it was added.
const LIFE: u32 = 500;
/// Changes applied in place between two published versions.
const BATCH: u32 = 256;

fn main() {
    let count: u32 = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(300_000);
    let mut zone = match delegations(1000) {
        Ok((zone, _)) => zone,
        Err(e) => {
            eprintln!("the zone does not build: {e}");
            return;
        }
    };
    let started = Instant::now();
    let mut published = zone.clone();
    for j in 0..count {
        let mut change = Changeset::default();
        change.added.push(host(j));
        if let Some(old) = j.checked_sub(LIFE) {
            change.removed.push(host(old));
        }
        if let Err(e) = zone.apply_in_place(&change) {
            eprintln!("change {j}: {e}");
            return;
        }
        if j % BATCH == BATCH - 1 {
            published = zone.clone();
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    drop(published);
    println!(
        "{count} changes: {seconds:.2} s, {:.2} µs a change; {} nodes ({} vacant), {} records",
        seconds * 1e6 / f64::from(count.max(1)),
        zone.node_count(),
        zone.vacant_count(),
        zone.record_count()
    );
}

/// `tld.` with its SOA and NS, and `count` delegations `d<i>.tld. NS ns.d<i>.tld.`
/// with their glue.
fn delegations(count: u32) -> Result<(ZoneContents, tern_zone::Report), tern_zone::Error> {
    let origin: Name = "tld.".parse().unwrap_or_else(|_| Name::root());
    let mut builder = ZoneBuilder::new(&origin);
    let mut add = |owner: &str, rtype: Rtype, text: &str| {
        let (Ok(name), Ok(data)) =
            (owner.parse::<Name>(), rdata::parse_str(rtype, text, Some(&origin)))
        else {
            return;
        };
        builder.add(&name, rtype, 3600, &data);
    };
    add("tld.", Rtype::SOA, "ns1 hostmaster 1 7200 3600 1209600 300");
    add("tld.", Rtype::NS, "ns1");
    add("ns1.tld.", Rtype::A, "192.0.2.1");
    for i in 0..count {
        add(&format!("d{i}.tld."), Rtype::NS, &format!("ns.d{i}"));
        add(&format!("ns.d{i}.tld."), Rtype::A, "192.0.2.2");
    }
    builder.finish()
}

/// The record of host `j`.
fn host(j: u32) -> RecordData {
    RecordData {
        owner: format!("u{j}.tld.").parse().unwrap_or_else(|_| Name::root()),
        rtype: Rtype::A,
        ttl: 300,
        rdata: vec![10, (j >> 16) as u8, (j >> 8) as u8, j as u8],
    }
}
