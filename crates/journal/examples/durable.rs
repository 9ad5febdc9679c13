//! Durable commits per second: the journal (one write and one `fdatasync` per batch)
//! against redb (a durable write transaction per batch), for small changesets like an
//! UPDATE's, one per commit and in groups. The measurement behind the choice of an
//! append-only file (docs/design.md, "The journal").
//!
//! `cargo run --release -p tern-journal --example durable -- [DIR] [COMMITS]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::time::Instant;

use redb::{Database, TableDefinition};
use tern_journal::Journal;
use tern_wire::{rdata, Rtype};
use tern_zone::{Changeset, RecordData};

const TABLE: TableDefinition<u64, &[u8]> = TableDefinition::new("changes");

fn change(serial: u32) -> Changeset {
    let soa = |s: u32| {
        let text = format!("ns.example. h.example. {s} 60 60 600 60");
        RecordData {
            owner: "example.".parse().unwrap(),
            rtype: Rtype::SOA,
            ttl: 60,
            rdata: rdata::parse_str(Rtype::SOA, &text, None).unwrap(),
        }
    };
    let txt = RecordData {
        owner: format!("_acme-challenge.host{serial}.example.").parse().unwrap(),
        rtype: Rtype::TXT,
        ttl: 60,
        rdata: rdata::parse_str(
            Rtype::TXT,
            "\"a-token-of-43-characters-like-acme-gives-out\"",
            None,
        )
        .unwrap(),
    };
    Changeset { added: vec![txt], ..Changeset::between(soa(serial), soa(serial + 1)) }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).map_or_else(|| std::env::temp_dir().join("tern-durable"), Into::into);
    let commits: u32 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2000);
    std::fs::create_dir_all(&dir).unwrap();
    for batch in [1u32, 16] {
        let path = dir.join(format!("j{batch}.journal"));
        let _ = std::fs::remove_file(&path);
        let mut journal = Journal::open(&path).unwrap().journal;
        let started = Instant::now();
        for n in 0..commits / batch {
            let changes: Vec<Changeset> = (0..batch).map(|i| change(n * batch + i)).collect();
            journal.append(&changes).unwrap();
        }
        report("journal", batch, commits, started);
        let path = dir.join(format!("r{batch}.redb"));
        let _ = std::fs::remove_file(&path);
        let db = Database::create(&path).unwrap();
        let started = Instant::now();
        let mut bytes = Vec::new();
        for n in 0..commits / batch {
            let tx = db.begin_write().unwrap();
            {
                let mut table = tx.open_table(TABLE).unwrap();
                for i in 0..batch {
                    bytes.clear();
                    tern_journal::format::encode(&change(n * batch + i), &mut bytes).unwrap();
                    table.insert(u64::from(n * batch + i), bytes.as_slice()).unwrap();
                }
            }
            tx.commit().unwrap();
        }
        report("redb", batch, commits, started);
    }
}

fn report(what: &str, batch: u32, commits: u32, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    let per = f64::from(commits) / secs;
    println!("{what:8} batch {batch:2}: {commits} changesets in {secs:.2} s = {per:.0} durable changesets/s");
}
