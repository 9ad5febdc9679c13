//! The NSEC3 links the adjust pass precomputes (matching or covering record per node,
//! and the cover of `*.<apex>`) agree with hashing and searching at query time, on the
//! NSEC3 opt-out zone of the conformance suite.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;

use tern_wire::Name;
use tern_zone::Nsec3Position;
use tern_zone::{Flags, Options, NSEC3_COVERS};

#[test]
fn precomputed_links_equal_query_time_lookups() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance/zones/optout.example.zone.signed");
    let origin: Name = "optout.example.".parse().unwrap();
    let loaded = tern_zone::load_file(&file, &origin, &Options::default(), &mut |_| {}).unwrap();
    let zone = loaded.contents;
    let chain = zone.nsec3().expect("an NSEC3 chain");
    let (mut matched, mut covered) = (0, 0);
    for id in 0..zone.node_count() as u32 {
        let node = zone.node(id).unwrap();
        if node.flags.intersects(Flags::PHANTOM | Flags::NONAUTH | Flags::BELOW_DNAME) {
            continue;
        }
        let expected = chain.find(&chain.params.hash(node.owner())).unwrap();
        match expected {
            Nsec3Position::Match(m) => {
                assert_eq!(node.nsec3, m, "{}", node.owner());
                matched += 1;
            }
            Nsec3Position::Covered(c) => {
                assert_eq!(node.nsec3, c | NSEC3_COVERS, "{}", node.owner());
                assert_eq!(zone.nsec3_cover(id), Some(c));
                covered += 1;
            }
        }
    }
    assert!(matched > 5 && covered > 0, "matched {matched}, covered {covered}");
    let wildcard: Name = "*.optout.example.".parse().unwrap();
    let expected = match chain.find(&chain.params.hash(&wildcard)).unwrap() {
        Nsec3Position::Match(id) | Nsec3Position::Covered(id) => id,
    };
    assert_eq!(zone.apex_wildcard_nsec3(), Some(expected));
}
