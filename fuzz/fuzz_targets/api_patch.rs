//! The HTTP API's RRset changes (`PATCH /api/v1/zones/{zone}/rrsets`) on arbitrary
//! bodies, planned against a small zone (`tern_server::http::rrsets::plan`, the pure
//! function the handler calls). Planning never panics. A body it accepts, turned into
//! the edit the zone's writer makes and applied by the engine, must be accepted by the
//! engine as well (what the plan lets through is not refused later) and give exactly
//! what was asked: every replaced RRset holds its records and no others (compared in
//! canonical form) with its TTL, and every deleted RRset is gone — no record is left
//! out without a word, as UPDATE's rules would leave it.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tern_engine::UpdatePolicy;
use tern_server::http::rrsets::plan;
use tern_wire::{Name, Rtype};
use tern_zone::records::canonical_eq;
use tern_zone::{Options, ZoneContents};

const ZONE: &str = r#"$ORIGIN example.
$TTL 300
@ SOA ns1 hostmaster 7 7200 3600 1209600 300
@ NS ns1
@ NS ns2.other.
@ MX 10 mail
@ TXT "v=spf1 -all"
ns1 A 192.0.2.53
mail A 192.0.2.25
mail AAAA 2001:db8::25
www CNAME @
ftp CNAME www
*.wild A 192.0.2.80
sub NS ns.sub
ns.sub A 192.0.2.99
srv SRV 10 60 5060 mail
"#;

fn zone() -> Option<&'static ZoneContents> {
    static ZONE_CONTENTS: OnceLock<Option<ZoneContents>> = OnceLock::new();
    ZONE_CONTENTS
        .get_or_init(|| {
            let origin: Name = "example.".parse().ok()?;
            let path = std::path::Path::new("fuzz");
            let loaded = tern_zone::load_bytes(ZONE.as_bytes(), path, &origin, &Options::default());
            loaded.ok().map(|loaded| loaded.contents)
        })
        .as_ref()
}

/// The RDATA and TTL of `owner` `rtype` in `zone` (`None`: no such RRset).
fn rrset(zone: &ZoneContents, owner: &Name, rtype: Rtype) -> Option<(u32, Vec<Vec<u8>>)> {
    let node = zone.node(zone.find(owner)?)?;
    let rrset = node.rrset(rtype).filter(|r| r.has_records())?;
    Some((rrset.ttl, rrset.rdatas().map(<[u8]>::to_vec).collect()))
}

/// Whether `a` and `b` hold the same records in canonical form (duplicates aside).
fn same_records(rtype: Rtype, a: &[Vec<u8>], b: &[Vec<u8>]) -> bool {
    let within = |x: &[Vec<u8>], y: &[Vec<u8>]| {
        x.iter().all(|rd| y.iter().any(|other| canonical_eq(rtype, rd, other)))
    };
    within(a, b) && within(b, a)
}

fuzz_target!(|body: &[u8]| {
    let Some(zone) = zone() else { return };
    let Ok(plan) = plan(body, zone) else { return };
    let steps = plan.txn_steps();
    assert_eq!(steps.is_empty(), plan.is_empty());
    let change =
        plan.edit().changeset(zone, &UpdatePolicy::default(), 1_700_000_000).unwrap_or_else(
            |refusal| panic!("planned, then refused by the engine: {}", refusal.reason),
        );
    // A change the zone cannot take as a whole is refused by the writer (409).
    let Ok((after, _)) = zone.apply(&change) else { return };
    for ((owner, rtype), wanted) in plan.replaced() {
        let got = rrset(&after, &owner, rtype);
        let Some((ttl, got)) = got else { panic!("{owner} {rtype}: replaced, but gone") };
        assert!(
            same_records(rtype, &wanted.rdatas, &got),
            "{owner} {rtype}: not the records asked"
        );
        // TTLs with the top bit set may be taken as something else (RFC 2181 §8).
        if wanted.ttl <= i32::MAX as u32 {
            assert_eq!(ttl, wanted.ttl, "{owner} {rtype}: not the TTL asked");
        }
    }
    for (owner, rtype) in plan.deleted() {
        assert!(rrset(&after, &owner, rtype).is_none(), "{owner} {rtype}: deleted, but there");
    }
});
