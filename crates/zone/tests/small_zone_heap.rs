//! The heap of a small hosting zone (issue 54: a million zones of 15 records each must
//! fit, data and all, in about 2,100 bytes a zone): counted by a global allocator, for
//! a loaded zone and for the version a change makes of it. The figures are what the
//! layout gives today, with a little room: a change that makes a small zone bigger
//! fails here. `cargo run --release -p tern-zone --example zone_heap` prints the parts.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

#[path = "common/heap.rs"]
mod heap;

use heap::{held, held_blocks, hosting_origin, hosting_zone, load, Counting, Parts};
use tern_wire::{rdata, Name, Rtype};
use tern_zone::{Changeset, RecordData};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Most bytes a loaded hosting zone may hold, its `Arc`ed snapshot included (1,432–1,512 at
/// this writing; 1,511–1,591 with a copy of the negative answer's SOA, 2,130 before the
/// RRset header and the boxed NSEC3 parts).
const LOADED_BUDGET: usize = 1_650;

/// Most allocations a loaded hosting zone may hold, besides the `Arc` the server keeps
/// it in: its node table and name index (a chunk and a list of chunks each), its
/// origin's name, and one pack for the nine nodes' data (at this writing; 7 with a copy
/// of the negative answer's SOA, 15 with a blob per node).
const LOADED_BLOCKS: isize = 6;

/// Loads a zone first, on this thread, so that the buffers a load keeps for the next
/// one (`encode_small`'s) are made before a zone's heap is counted: they are the loading
/// thread's, not any zone's.
fn warm_up() {
    let origin = hosting_origin(9999);
    drop(load(&hosting_zone(9999, &origin), &origin));
}

#[test]
fn a_hosting_zone_fits_its_budget() {
    warm_up();
    let mut totals = Vec::new();
    for index in [0, 1, 7, 300] {
        let origin = hosting_origin(index);
        let text = hosting_zone(index, &origin);
        let (zone, bytes) = held(|| load(&text, &origin));
        let parts = Parts::of(&zone, bytes);
        assert_eq!(zone.record_count(), 15);
        assert_eq!(parts.nodes, 9, "apex, mail, mx2, www, _tcp, _sip._tcp, sip, dyn, *.dyn");
        assert!(parts.total <= LOADED_BUDGET, "{origin}: {parts:?}, rest {}", parts.rest());
        totals.push(parts.total);
        let (_zone, blocks, _chunks) = held_blocks(|| load(&text, &origin));
        assert!(blocks <= LOADED_BLOCKS, "{origin}: {blocks} allocations");
    }
    eprintln!("heap of a hosting zone: {totals:?}");
}

#[test]
fn a_changed_version_shares_what_it_did_not_change() {
    let origin = hosting_origin(3);
    let (zone, loaded) = held(|| load(&hosting_zone(3, &origin), &origin));
    let soa = |serial: u32| {
        let text = format!(
            "ns1.hoster.example. hostmaster.hoster.example. {serial} 7200 3600 1209600 300"
        );
        let rdata = rdata::parse_str(Rtype::SOA, &text, None).unwrap();
        RecordData { owner: origin.parse().unwrap(), rtype: Rtype::SOA, ttl: 3600, rdata }
    };
    let new_name: Name = format!("new.{origin}").parse().unwrap();
    let added = RecordData {
        owner: new_name.clone(),
        rtype: Rtype::A,
        ttl: 3600,
        rdata: rdata::parse_str(Rtype::A, "192.0.2.77", None).unwrap(),
    };
    let change =
        Changeset { added: vec![added], ..Changeset::between(soa(2026112201), soa(2026112202)) };
    let ((next, _report), bytes) = held(|| zone.apply(&change).unwrap());
    assert_eq!((next.serial(), next.record_count()), (2026112202, 16));
    assert!(next.find(&new_name).is_some() && zone.find(&new_name).is_none());
    // Every node but the apex (its SOA changed) keeps its data where it was.
    let address = |z: &tern_zone::ZoneContents, id| z.node(id).unwrap().data_address();
    let shared =
        (1..zone.node_count() as u32).filter(|&id| address(&zone, id) == address(&next, id));
    assert_eq!(shared.count(), zone.node_count() - 1);
    assert_ne!(address(&zone, 0), address(&next, 0));
    assert!(bytes < loaded, "the new version holds {bytes} bytes, the loaded one {loaded}");
}
