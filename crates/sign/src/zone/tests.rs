use std::borrow::Cow;

use tern_wire::rdata::{Rdata, Rrsig};

use super::*;
use crate::algorithm::Algorithm;
use crate::key::{verify, KeyRole};
use crate::names::is_signed;
use crate::rrsig::{signed_data, RrsetRef, Scratch};
use crate::testutil::zone;

const ZONE: &str = "@ 3600 SOA ns h 1 7200 3600 1209600 300\n@ NS ns\nns A 192.0.2.1\n\
    *.wild A 192.0.2.100\nsub NS ns.sub\nns.sub A 192.0.2.2\n\
    sub DS 1 13 2 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF\n\
    ins NS ns.example.net.\na.b.ent MX 10 ns\n@ CDS 1 13 2 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF\n";

fn validity() -> Validity {
    Validity::new(1_700_000_000, 1_700_000_000 + 30 * 86400)
        .unwrap()
        .with_jitter(86400, 42)
        .unwrap()
}

fn keys(algorithm: Algorithm, csk: bool) -> Vec<SigningKey> {
    let roles: &[KeyRole] = if csk { &[KeyRole::Csk] } else { &[KeyRole::Ksk, KeyRole::Zsk] };
    roles.iter().map(|&role| SigningKey::generate(algorithm, role).unwrap()).collect()
}

fn rrsig(rdata: &[u8]) -> Rrsig {
    match Rdata::from_wire(Rtype::RRSIG, rdata).unwrap() {
        Rdata::Rrsig(r) => r,
        other => panic!("{other:?}"),
    }
}

/// Verifies every RRSIG of `signed` with the key its tag names; returns (owner, type,
/// key role) of each.
fn verify_all(signed: &SignedZone, keys: &[SigningKey]) -> Vec<(String, Rtype, KeyRole)> {
    let mut seen = Vec::new();
    let mut scratch = Scratch::default();
    for owner in signed.owners() {
        for rrset in &owner.rrsets {
            for sig in &rrset.sigs {
                let fields = rrsig(sig);
                let key = keys.iter().find(|k| k.key_tag() == fields.key_tag).unwrap();
                let view = RrsetRef {
                    owner: &owner.name,
                    rtype: rrset.rtype,
                    ttl: rrset.ttl,
                    rdatas: &rrset.rdatas,
                };
                assert_eq!(fields.type_covered, rrset.rtype);
                let times = (fields.inception, fields.expiration);
                let data = signed_data(&view, key, signed.origin(), times, &mut scratch).unwrap();
                verify(key.dnskey(), data, &fields.signature).unwrap();
                assert!(fields.expiration <= validity().expiration());
                assert!(fields.expiration >= validity().expiration() - 86400);
                seen.push((owner.name.to_string(), rrset.rtype, key.role()));
            }
        }
    }
    seen
}

#[test]
fn every_authoritative_rrset_signed_by_the_right_key() {
    let z = zone("example.", ZONE);
    let keys = keys(Algorithm::EcdsaP256Sha256, false);
    let signed = sign_zone(&z, &keys, &SignOptions::new(validity())).unwrap();
    let seen = verify_all(&signed, &keys);
    assert_eq!(seen.len(), signed.signature_count());
    let has = |name: &str, t: Rtype| seen.iter().find(|s| s.0 == name && s.1 == t).map(|s| s.2);
    assert_eq!(has("example.", Rtype::DNSKEY), Some(KeyRole::Ksk));
    assert_eq!(has("example.", Rtype::CDS), Some(KeyRole::Ksk));
    assert_eq!(has("example.", Rtype::SOA), Some(KeyRole::Zsk));
    assert_eq!(has("sub.example.", Rtype::DS), Some(KeyRole::Zsk));
    assert_eq!(has("sub.example.", Rtype::NSEC), Some(KeyRole::Zsk));
    assert_eq!(has("ins.example.", Rtype::NSEC), Some(KeyRole::Zsk));
    assert_eq!(has("sub.example.", Rtype::NS), None, "delegation NS unsigned");
    assert_eq!(has("ins.example.", Rtype::NS), None);
    assert_eq!(has("ns.sub.example.", Rtype::A), None, "glue unsigned");
    assert_eq!(has("*.wild.example.", Rtype::A), Some(KeyRole::Zsk));
    let wild = signed.owners().iter().find(|o| o.name.is_wildcard()).unwrap();
    assert_eq!(rrsig(wild.rrset(Rtype::A).unwrap().sigs.first().unwrap()).labels, 2);
    // One signature per RRset: 14 RRsets (9 data, 2 key sets, 6 NSEC... counted below).
    let signed_rrsets: usize = signed
        .owners()
        .iter()
        .flat_map(|o| o.rrsets.iter().map(move |r| (o, r)))
        .filter(|(o, r)| is_signed(o, r.rtype))
        .count();
    assert_eq!(signed.signature_count(), signed_rrsets);
}

#[test]
fn signed_zones_load_and_resign_to_the_same_records() {
    let z = zone("example.", ZONE);
    for (denial, expect) in [
        (DenialConfig::Nsec, tern_zone::Denial::Nsec),
        (DenialConfig::Nsec3(Nsec3Config::default()), tern_zone::Denial::Nsec3),
        (
            DenialConfig::Nsec3(Nsec3Config { opt_out: true, ..Default::default() }),
            tern_zone::Denial::Nsec3,
        ),
    ] {
        let keys = keys(Algorithm::Ed25519, true);
        let options = SignOptions { denial, ..SignOptions::new(validity()) };
        let signed = sign_zone(&z, &keys, &options).unwrap();
        let mut count = 0;
        signed.for_each_record(|_, _, _, _| count += 1);
        let contents = signed.clone().to_contents().unwrap();
        assert_eq!(contents.denial(), expect);
        assert_eq!(contents.record_count(), count);
        // Signed again from the signed snapshot: its DNSSEC records are replaced, and
        // Ed25519 being deterministic, by the same ones.
        let again = sign_zone(&contents, &keys, &options).unwrap();
        assert_eq!(records(&again), records(&signed));
    }
}

fn records(signed: &SignedZone) -> Vec<(String, Rtype, u32, Vec<u8>)> {
    let mut out = Vec::new();
    signed.for_each_record(|o, t, ttl, rd| {
        out.push((o.to_string().to_lowercase(), t, ttl, rd.to_vec()))
    });
    out.sort();
    out
}

#[test]
fn the_signed_zone_holds_no_slack_and_no_copy() {
    // A zone has millions of these lists: room beyond what they hold, or copies of the
    // loaded zone's records, would be a large share of the signer's memory.
    let z = zone("example.", ZONE);
    let keys = keys(Algorithm::EcdsaP256Sha256, false);
    let signed = sign_zone(&z, &keys, &SignOptions::new(validity())).unwrap();
    let made = [Rtype::DNSKEY, Rtype::NSEC];
    for owner in signed.owners() {
        assert!(matches!(owner.name, Cow::Borrowed(_)), "{}", owner.name);
        for rrset in &owner.rrsets {
            let what = format!("{} {}", owner.name, rrset.rtype);
            assert_eq!(rrset.rdatas.is_borrowed(), !made.contains(&rrset.rtype), "{what}");
            let (used, room) = rrset.rdatas.bytes_used();
            assert_eq!(room, used, "{what}");
            let (used, room) = rrset.sigs.bytes_used();
            assert_eq!(room, used, "{what}");
        }
        if owner.kind != Kind::Apex {
            assert!(owner.rrsets.capacity() <= owner.rrsets.len() + 1, "{}", owner.name);
        }
    }
}

#[test]
fn the_thread_count_changes_nothing() {
    let mut text = ZONE.to_string();
    for i in 0..300 {
        text.push_str(&format!("h{i} A 192.0.2.{}\nh{i} TXT \"{i}\"\n", i % 250));
    }
    let z = zone("example.", &text);
    let keys = keys(Algorithm::Ed25519, false);
    let nsec3 = DenialConfig::Nsec3(Nsec3Config::default());
    let one = SignOptions { denial: nsec3, ..SignOptions::new(validity()) };
    let first = sign_zone(&z, &keys, &one).unwrap();
    assert!(first.signature_count() > 900);
    for threads in [2, 3, 7] {
        let options = SignOptions { threads, ..one.clone() };
        assert_eq!(records(&sign_zone(&z, &keys, &options).unwrap()), records(&first), "{threads}");
    }
}

#[test]
fn ttls_of_keys_and_denial_records() {
    let z = zone("example.", ZONE);
    let keys = keys(Algorithm::EcdsaP256Sha256, true);
    let signed = sign_zone(&z, &keys, &SignOptions::new(validity())).unwrap();
    let apex = &signed.owners()[0];
    assert_eq!(apex.rrset(Rtype::DNSKEY).unwrap().ttl, 3600, "the SOA's");
    assert_eq!(apex.rrset(Rtype::NSEC).unwrap().ttl, 300, "min(SOA TTL, MINIMUM)");
    let options = SignOptions { dnskey_ttl: Some(60), ..SignOptions::new(validity()) };
    let signed = sign_zone(&z, &keys, &options).unwrap();
    assert_eq!(signed.owners()[0].rrset(Rtype::DNSKEY).unwrap().ttl, 60);
}

#[test]
fn unusable_key_sets_are_refused() {
    let z = zone("example.", ZONE);
    let options = SignOptions::new(validity());
    assert_eq!(sign_zone(&z, &[], &options).err(), Some(Error::Keys("no key")));
    let ksk = SigningKey::generate(Algorithm::Ed25519, KeyRole::Ksk).unwrap();
    assert!(matches!(sign_zone(&z, &[ksk], &options), Err(Error::Keys(_))));
    let mut mixed = keys(Algorithm::Ed25519, false);
    mixed.push(SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Zsk).unwrap());
    assert!(matches!(check_keys(&mixed), Err(Error::Keys(_))), "P-256 has no KSK");
}
