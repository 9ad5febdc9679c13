//! Where a zone's heap goes, counted by a global allocator (the sizes asked for, as
//! heaptrack counts them; the allocator's own slack is not in them): a small hosting
//! zone (`genzone.py hosting`'s shape, 15 records) by part, and a zone of many
//! delegations (`genzone.py delegations`' shape) in all and per delegation.
//!
//! `cargo run --release -p tern-zone --example zone_heap -- [DELEGATIONS]`
//! (default 100,000; 0 skips the big zone).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

#[path = "../tests/common/heap.rs"]
mod heap;

use heap::{
    delegation_zone, held, held_blocks, hosting_origin, hosting_zone, load, Counting, Parts,
};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let delegations: usize =
        std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let origin = hosting_origin(1);
    let text = hosting_zone(1, &origin);
    let (zone, bytes) = held(|| load(&text, &origin));
    let parts = Parts::of(&zone, bytes);
    println!("hosting zone {origin}: {} nodes, {} records", parts.nodes, zone.record_count());
    println!("| part | bytes |\n|---|---:|");
    println!("| the version (`ZoneContents` in its `Arc`) | {} |", parts.version);
    println!("| node table (32 bytes a node) | {} |", parts.table);
    println!("| node data (blobs, 8-byte header each) | {} |", parts.blobs);
    println!("| the rest (name index, chunk lists, negative SOA, origin, …) | {} |", parts.rest());
    println!("| **total** | **{}** |", parts.total);
    let (_zone, allocations, chunks) = held_blocks(|| load(&text, &origin));
    println!("{allocations} allocations, {chunks} bytes as glibc's malloc holds them");
    if delegations > 0 {
        let text = delegation_zone(delegations);
        let (zone, bytes) = held(|| load(&text, "tld."));
        let per = bytes as f64 / delegations as f64;
        println!(
            "\n{delegations} delegations: {} nodes, {} records, {bytes} bytes, {per:.1} a delegation",
            zone.node_count(),
            zone.record_count()
        );
    }
}
