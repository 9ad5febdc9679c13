//! Refresh: exactly the expiring signatures replaced, signatures of a removed key gone
//! and a new key's made for every RRset, slices that together cover the zone.

use tern_wire::rdata::Rdata;
use tern_wire::Rtype;
use tern_zone::{RecordData, ZoneContents};

use super::*;
use crate::algorithm::Algorithm;
use crate::incremental::tests::{
    apex_records, denials, name, rec, same_records, validity, verify_zone, Signed,
};
use crate::key::{KeyRole, SigningKey};
use crate::validity::Validity;
use crate::zone::{sign_zone, DenialConfig};

fn zone_data() -> std::collections::BTreeSet<crate::incremental::tests::Rec> {
    let mut data = apex_records();
    for i in 0..40 {
        data.insert(rec(&format!("h{i}.example."), Rtype::A, 300, &format!("192.0.2.{i}")));
    }
    data.insert(rec("sub.example.", Rtype::NS, 3600, "ns.example.net."));
    data.insert(rec("*.w.example.", Rtype::TXT, 300, "w"));
    data
}

fn expiration(rdata: &[u8]) -> u32 {
    match Rdata::from_wire(Rtype::RRSIG, rdata).unwrap() {
        Rdata::Rrsig(r) => r.expiration,
        _ => unreachable!(),
    }
}

fn inception(rdata: &[u8]) -> u32 {
    match Rdata::from_wire(Rtype::RRSIG, rdata).unwrap() {
        Rdata::Rrsig(r) => r.inception,
        _ => unreachable!(),
    }
}

/// Now, in the refreshes below: after every inception the tests' validities have.
const NOW: u32 = 1_700_600_000;

fn everything(threshold: u32, serial: u32) -> RefreshOptions {
    RefreshOptions {
        threshold,
        now: NOW,
        serial,
        start: RefreshCursor::default(),
        max_names: usize::MAX,
        max_signatures: usize::MAX,
    }
}

/// Every signature of the zone, as (owner, covered type, expiration).
fn signatures(zone: &ZoneContents) -> Vec<RecordData> {
    let mut out = Vec::new();
    zone.for_each_record(|owner, rtype, ttl, rdata| {
        if rtype == Rtype::RRSIG {
            out.push(RecordData { owner: owner.to_name(), rtype, ttl, rdata: rdata.to_vec() });
        }
    });
    out
}

#[test]
fn exactly_the_expiring_signatures_are_replaced() {
    for denial in denials() {
        let options = SignOptions { denial, ..SignOptions::new(validity()) };
        let mut signed = Signed::new(
            zone_data(),
            vec![SigningKey::generate(Algorithm::Ed25519, KeyRole::Csk).unwrap()],
            options,
        );
        // The expirations spread over the last day of the validity: half before this.
        let threshold = validity().expiration() - 43_200;
        let expiring: Vec<RecordData> = signatures(&signed.zone)
            .into_iter()
            .filter(|r| expiration(&r.rdata) < threshold)
            .collect();
        assert!(expiring.len() > 10, "{}", expiring.len());
        let later = Validity::new(1_700_500_000, 1_700_500_000 + 30 * 86400)
            .unwrap()
            .with_jitter(86400, 9)
            .unwrap();
        signed.options.validity = later;
        let out = refresh(&signed.zone, &signed.keys, &signed.options, &everything(threshold, 2))
            .unwrap();
        assert_eq!(out.next, None);
        let soa_sig =
            |r: &&RecordData| tern_zone::records::covered_type(&r.rdata) == Some(Rtype::SOA);
        let mut removed: Vec<&RecordData> =
            out.change.removed.iter().filter(|r| !soa_sig(r)).collect();
        let mut want: Vec<&RecordData> = expiring.iter().filter(|r| !soa_sig(r)).collect();
        removed.sort_by_key(|r| (r.owner.clone(), r.rdata.clone()));
        want.sort_by_key(|r| (r.owner.clone(), r.rdata.clone()));
        assert_eq!(removed, want, "exactly the expiring ones");
        assert_eq!(out.signatures, out.change.removed.len(), "one made for each");
        signed.zone = signed.zone.apply(&out.change).unwrap().0;
        verify_zone(&signed.zone, &signed.keys);
        assert!(signatures(&signed.zone).iter().all(|r| expiration(&r.rdata) >= threshold));
        let again = refresh(&signed.zone, &signed.keys, &signed.options, &everything(threshold, 3))
            .unwrap();
        assert!(again.change.is_empty(), "nothing left to do");
    }
}

/// A ZSK replaced (the old one published while it retires) and an algorithm added: once
/// refreshed, the zone is what whole signing with the new keys makes, and no signature
/// of the old ZSK is left.
#[test]
fn signatures_follow_the_keys() {
    for denial in denials() {
        let options = SignOptions { denial: denial.clone(), ..SignOptions::new(validity()) };
        let ksk = || SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Ksk).unwrap();
        let zsk = || SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Zsk).unwrap();
        let mut signed = Signed::new(zone_data(), vec![ksk(), zsk()], options);
        let old_zsk = signed.keys.pop().unwrap();
        signed.keys.push(zsk());
        signed.keys.push(SigningKey::generate(Algorithm::Ed25519, KeyRole::Csk).unwrap());
        signed.options.published = vec![old_zsk.dnskey().to_vec()];
        let mut serial = 1; // the zone's
        let mut slice = RefreshOptions { max_names: 7, ..everything(0, serial + 1) };
        for _ in 0..100 {
            let out = refresh(&signed.zone, &signed.keys, &signed.options, &slice).unwrap();
            if !out.change.is_empty() {
                signed.zone = signed.zone.apply(&out.change).unwrap().0;
                serial += 1;
            }
            let Some(next) = out.next else { break };
            slice = RefreshOptions { start: next, serial: serial + 1, ..slice };
        }
        assert!(signatures(&signed.zone).iter().all(|r| {
            let Rdata::Rrsig(f) = Rdata::from_wire(Rtype::RRSIG, &r.rdata).unwrap() else {
                panic!()
            };
            f.key_tag != old_zsk.key_tag()
        }));
        let mut all = zone_data();
        all.insert(rec(
            "example.",
            Rtype::SOA,
            3600,
            &format!("ns h {serial} 7200 3600 1209600 300"),
        ));
        let unsigned = crate::incremental::tests::build(&all);
        let whole = sign_zone(&unsigned, &signed.keys, &signed.options).unwrap();
        same_records(&signed.zone, &whole.to_contents().unwrap(), &format!("{denial:?}"));
        verify_zone(&signed.zone, &signed.keys);
    }
}

/// Slices end after their names or signatures, and carry on where they ended.
#[test]
fn slices_are_bounded() {
    let options = SignOptions { denial: DenialConfig::Nsec, ..SignOptions::new(validity()) };
    let keys = vec![SigningKey::generate(Algorithm::Ed25519, KeyRole::Csk).unwrap()];
    let signed = Signed::new(zone_data(), keys, options);
    let threshold = validity().expiration() + 1; // every signature
    let slice = RefreshOptions { max_signatures: 10, ..everything(threshold, 2) };
    let first = refresh(&signed.zone, &signed.keys, &signed.options, &slice).unwrap();
    // Up to 10 planned, the last name's may pass it; the SOA's comes on top.
    assert!((10..=14).contains(&first.signatures), "{}", first.signatures);
    let next = first.next.unwrap();
    let rest = RefreshOptions { start: next, max_signatures: usize::MAX, ..slice };
    let second = refresh(&signed.zone, &signed.keys, &signed.options, &rest).unwrap();
    assert_eq!(second.next, None);
    let total = signatures(&signed.zone).len();
    assert_eq!(first.signatures + second.signatures, total + 1, "the SOA's twice");
    assert!(refresh(
        &signed.zone,
        &signed.keys,
        &signed.options,
        &RefreshOptions { serial: 1, ..slice }
    )
    .is_err());
    let _ = name("example.");
}

/// The clock was ahead when the zone was signed, then set back: every signature whose
/// inception is after now (not yet valid to a validator) is replaced, though none
/// expires; then nothing is left to do. Signatures valid already at now stay.
#[test]
fn signatures_not_yet_valid_after_the_clock_went_back_are_replaced() {
    let options = SignOptions { denial: DenialConfig::Nsec, ..SignOptions::new(validity()) };
    let keys = vec![SigningKey::generate(Algorithm::Ed25519, KeyRole::Csk).unwrap()];
    let mut signed = Signed::new(zone_data(), keys, options);
    let made = validity().inception();
    let all = signatures(&signed.zone).len();
    assert!(signatures(&signed.zone).iter().all(|r| inception(&r.rdata) == made));
    // A second after the inception: valid; nothing to do.
    let at = |now: u32, serial: u32| RefreshOptions { now, ..everything(0, serial) };
    let out = refresh(&signed.zone, &signed.keys, &signed.options, &at(made + 1, 2)).unwrap();
    assert!(out.change.is_empty(), "signatures valid at now stay");
    // The clock set back two days: every signature is not yet valid.
    let now = made - 2 * 86_400;
    signed.options.validity = Validity::new(now - 3600, now + 30 * 86_400).unwrap();
    let out = refresh(&signed.zone, &signed.keys, &signed.options, &at(now, 2)).unwrap();
    assert_eq!(out.next, None);
    assert_eq!(out.change.removed.iter().filter(|r| r.rtype == Rtype::RRSIG).count(), all);
    signed.zone = signed.zone.apply(&out.change).unwrap().0;
    let sigs = signatures(&signed.zone);
    assert_eq!(sigs.len(), all);
    assert!(sigs.iter().all(|r| inception(&r.rdata) <= now), "none in the future");
    verify_zone(&signed.zone, &signed.keys);
    let again = refresh(&signed.zone, &signed.keys, &signed.options, &at(now, 3)).unwrap();
    assert!(again.change.is_empty(), "nothing left to do");
}
