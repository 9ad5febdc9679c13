//! Zones signed by this crate, checked by two independent validators: `ldns-verify-zone`
//! (Debian package ldnsutils) and BIND's `dnssec-verify` (bind9-utils), both of which
//! must accept them. `scripts/test-all.sh` installs both; a missing validator fails the
//! test, naming its package.
//!
//! The zone is the conformance suite's `secure.example.` (delegations with and without
//! DS, glue, wildcards, an empty non-terminal, CNAME and DNAME) with a few names added:
//! an empty non-terminal that only an insecure delegation makes (left out of an opt-out
//! chain), a secure delegation below an empty non-terminal with glue two labels below
//! it, and a wildcard below an empty non-terminal. Each zone is signed with NSEC, NSEC3
//! and NSEC3 with opt-out, by ECDSA P-256 and Ed25519 keys, as KSK+ZSK and as a CSK, and
//! by the other algorithms in one of the two ways.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use tern_sign::{
    refresh, sign_change, sign_zone, Algorithm, CdsRecords, DenialConfig, KeyRole, Nsec3Config,
    RefreshCursor, RefreshOptions, SignOptions, SignedZone, SigningKey, Validity,
};
use tern_wire::{Dname, Name, Rtype};
use tern_zone::{load_bytes, Changeset, Options, RecordData, ZoneContents};

const ORIGIN: &str = "secure.example.";

const EXTRA: &str = "
a.optout-only   NS      ns.example.net.
deep.ent2       NS      ns.x.deep.ent2
deep.ent2       DS      31589 13 2 D16F955378FF6FEC27611EAC56BA77A36C8045615842E3D572BE55678C9A1546
ns.x.deep.ent2  A       192.0.2.12
*.w.ent3        TXT     \"wildcard below an empty non-terminal\"
";

fn unsigned_zone() -> ZoneContents {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance/zones/secure.example.zone");
    let text = std::fs::read_to_string(&path).unwrap() + EXTRA;
    let origin: Name = ORIGIN.parse().unwrap();
    match load_bytes(text.as_bytes(), &path, &origin, &Options::default()) {
        Ok(loaded) => loaded.contents,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

/// Valid from an hour ago for 30 days, expirations spread over the last 5 (the
/// validators check signatures against the real clock).
fn validity() -> Validity {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as u32;
    Validity::new(now - 3600, now + 30 * 86400).unwrap().with_jitter(5 * 86400, 1).unwrap()
}

fn write_zone(signed: &SignedZone, path: &Path) {
    let mut text = String::new();
    signed.for_each_record(|owner, rtype, ttl, rdata| line(&mut text, owner, rtype, ttl, rdata));
    std::fs::write(path, text).unwrap();
}

fn write_contents(zone: &ZoneContents, path: &Path) {
    let mut text = String::new();
    zone.for_each_record(|owner, rtype, ttl, rdata| line(&mut text, owner, rtype, ttl, rdata));
    std::fs::write(path, text).unwrap();
}

fn line(text: &mut String, owner: &Dname, rtype: Rtype, ttl: u32, rdata: &[u8]) {
    let data = tern_wire::rdata::to_text(rtype, rdata);
    text.push_str(&format!("{owner} {ttl} IN {rtype} {data}\n"));
}

/// Runs a validator; a missing one fails with the package that has it.
fn run(program: &str, package: &str, args: &[&str]) -> (bool, String) {
    let output = Command::new(program).args(args).output().unwrap_or_else(|e| {
        panic!("cannot run {program} ({e}): install the Debian package {package} (scripts/test-all.sh does)")
    });
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

/// Both validators on the zone file at `path`. A zone signed by a CSK alone has no key
/// without the SEP flag, which dnssec-verify takes for a missing ZSK unless told (`-z`)
/// that KSKs sign everything.
fn validate(path: &Path, csk: bool, what: &str) {
    let file = path.to_str().unwrap();
    let (ok, out) = run("ldns-verify-zone", "ldnsutils", &[file]);
    assert!(
        ok && out.contains("Zone is verified and complete"),
        "ldns-verify-zone refused {what}:\n{out}"
    );
    let mut args = vec!["-o", ORIGIN, file];
    if csk {
        args.insert(0, "-z");
    }
    let (ok, out) = run("dnssec-verify", "bind9-utils", &args);
    assert!(ok && out.contains("Zone fully signed"), "dnssec-verify refused {what}:\n{out}");
}

fn denials() -> [(&'static str, DenialConfig); 3] {
    let opt_out = Nsec3Config { opt_out: true, ..Nsec3Config::default() };
    [
        ("nsec", DenialConfig::Nsec),
        ("nsec3", DenialConfig::Nsec3(Nsec3Config::default())),
        ("nsec3-optout", DenialConfig::Nsec3(opt_out)),
    ]
}

fn sign_and_validate(algorithm: Algorithm, roles: &[KeyRole]) {
    let zone = unsigned_zone();
    let keys: Vec<SigningKey> =
        roles.iter().map(|&r| SigningKey::generate(algorithm, r).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    for (name, denial) in denials() {
        let options = SignOptions { denial, threads: 2, ..SignOptions::new(validity()) };
        let signed = sign_zone(&zone, &keys, &options).unwrap();
        let contents = signed.clone().to_contents().unwrap();
        assert_eq!(contents.denial() == tern_zone::Denial::Nsec, name == "nsec");
        let path: PathBuf = dir.path().join(format!("{name}.zone"));
        write_zone(&signed, &path);
        let what = format!("{algorithm} {roles:?} {name}");
        validate(&path, roles == [KeyRole::Csk], &what);
        check_shape(&signed, name);
    }
}

/// What the validators do not all insist on: the opt-out chain leaves out the insecure
/// delegations and the empty non-terminal only one of them makes; the other chains do
/// not.
fn check_shape(signed: &SignedZone, name: &str) {
    let nsec3 = signed.owners().iter().filter(|o| o.rrset(Rtype::NSEC3).is_some()).count();
    let nsec = signed.owners().iter().filter(|o| o.rrset(Rtype::NSEC).is_some()).count();
    match name {
        // 16 authoritative names (the apex included) and 6 delegation points, 2 of them
        // with DS (glue has no denial record); with NSEC3 also the 8 empty
        // non-terminals; opt-out leaves out the 4 insecure delegations and the empty
        // non-terminal `optout-only`, which only one of them makes.
        "nsec" => assert_eq!((nsec, nsec3), (22, 0)),
        "nsec3" => assert_eq!((nsec, nsec3), (0, 30)),
        _ => assert_eq!((nsec, nsec3), (0, 25)),
    }
}

#[test]
fn ecdsa_p256_ksk_and_zsk() {
    sign_and_validate(Algorithm::EcdsaP256Sha256, &[KeyRole::Ksk, KeyRole::Zsk]);
}

#[test]
fn ecdsa_p256_csk() {
    sign_and_validate(Algorithm::EcdsaP256Sha256, &[KeyRole::Csk]);
}

#[test]
fn ed25519_ksk_and_zsk() {
    sign_and_validate(Algorithm::Ed25519, &[KeyRole::Ksk, KeyRole::Zsk]);
}

#[test]
fn ed25519_csk() {
    sign_and_validate(Algorithm::Ed25519, &[KeyRole::Csk]);
}

#[test]
fn ecdsa_p384_csk() {
    sign_and_validate(Algorithm::EcdsaP384Sha384, &[KeyRole::Csk]);
}

#[test]
fn rsasha256_ksk_and_zsk() {
    sign_and_validate(Algorithm::RsaSha256, &[KeyRole::Ksk, KeyRole::Zsk]);
}

#[test]
fn rsasha512_csk() {
    sign_and_validate(Algorithm::RsaSha512, &[KeyRole::Csk]);
}

/// The validators do check: one changed byte in one signature, and both refuse the zone.
#[test]
fn a_forged_signature_is_refused_by_both() {
    let keys = [SigningKey::generate(Algorithm::Ed25519, KeyRole::Csk).unwrap()];
    let unsigned = unsigned_zone();
    let signed = sign_zone(&unsigned, &keys, &SignOptions::new(validity())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forged.zone");
    write_zone(&signed, &path);
    let text = std::fs::read_to_string(&path).unwrap();
    let line =
        text.lines().find(|l| l.starts_with("www.secure.example. 3600 IN RRSIG A ")).unwrap();
    // A base64 letter inside the signature (its last field), changed.
    let at = line.rfind(' ').unwrap() + 10;
    let changed = if &line[at..=at] == "A" { "B" } else { "A" };
    let forged = format!("{}{changed}{}", &line[..at], &line[at + 1..]);
    std::fs::write(&path, text.replace(line, &forged)).unwrap();
    let file = path.to_str().unwrap();
    let (ok, out) = run("ldns-verify-zone", "ldnsutils", &[file]);
    assert!(!ok && out.contains("www.secure.example."), "ldns-verify-zone accepted it:\n{out}");
    let (ok, out) = run("dnssec-verify", "bind9-utils", &["-z", "-o", ORIGIN, file]);
    assert!(!ok, "dnssec-verify accepted it:\n{out}");
}

/// The change from `zone` to its next serial that removes and adds `removed` and
/// `added` (`owner TYPE RDATA`, owners relative to the origin, TTL 3600).
fn change(zone: &ZoneContents, removed: &[&str], added: &[&str]) -> Changeset {
    let origin: Name = ORIGIN.parse().unwrap();
    let record = |text: &&str| {
        let fields: Vec<&str> = text.splitn(3, ' ').collect();
        let owner = Name::parse_text(fields[0].as_bytes(), Some(&origin)).unwrap();
        let rtype = Rtype::from_mnemonic(fields[1].as_bytes()).unwrap();
        let rdata = tern_wire::rdata::parse_str(rtype, fields[2], Some(&origin)).unwrap();
        RecordData { owner, rtype, ttl: 3600, rdata }
    };
    let from = zone.soa_record().unwrap();
    let rdata = tern_zone::records::with_soa_serial(&from.rdata, zone.serial() + 1).unwrap();
    let mut change = Changeset::between(from.clone(), RecordData { rdata, ..from });
    change.removed = removed.iter().map(record).collect();
    change.added = added.iter().map(record).collect();
    change
}

const DS: &str = "31589 13 2 D16F955378FF6FEC27611EAC56BA77A36C8045615842E3D572BE55678C9A1546";

/// A chain of changes signed incrementally — names added and removed, a secure
/// delegation with glue, a cut removed (its glue becomes authoritative), an insecure
/// delegation alone below a new empty non-terminal, a wildcard, an empty non-terminal
/// emptied, DS and CDS added — then a ZSK rolled by refresh: both validators accept the
/// zone after the changes and after the refresh, with NSEC, NSEC3 and opt-out.
#[test]
fn incremental_changes_and_refresh_validate() {
    let ds = format!("d1 DS {DS}");
    let ds2 = format!("insecure2 DS {DS}");
    let cds = format!("@ CDS {DS}");
    let steps: [(&[&str], Vec<&str>); 5] = [
        (&["www AAAA 2001:db8::80"], vec!["new1 A 192.0.2.201"]),
        (&["mail A 192.0.2.25"], vec!["d1 NS ns.d1", "ns.d1 A 192.0.2.202", &ds]),
        (&["insecure NS ns1.insecure", "insecure NS ns.example.net."], vec!["x.y.deep TXT deep"]),
        (&[], vec!["i1.ent9 NS ns.example.net.", "*.wc TXT wild"]),
        (&["a.b.ent A 192.0.2.7"], vec![&ds2, &cds]),
    ];
    let ksk = SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Ksk).unwrap();
    let zsk = SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Zsk).unwrap();
    let copy = |k: &SigningKey| {
        SigningKey::from_pkcs8(k.algorithm(), k.role(), &k.to_pkcs8().unwrap()).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, denial) in denials() {
        let keys = [copy(&ksk), copy(&zsk)];
        let options = SignOptions { denial, ..SignOptions::new(validity()) };
        let mut zone = sign_zone(&unsigned_zone(), &keys, &options).unwrap().to_contents().unwrap();
        for (removed, added) in &steps {
            let signed =
                sign_change(&zone, &change(&zone, removed, added), &keys, &options).unwrap();
            zone = zone.apply(&signed).unwrap().0;
        }
        let path = dir.path().join(format!("{name}-changed.zone"));
        write_contents(&zone, &path);
        validate(&path, false, &format!("{name} after changes"));
        let rolled =
            [copy(&ksk), SigningKey::generate(Algorithm::EcdsaP256Sha256, KeyRole::Zsk).unwrap()];
        let options = SignOptions { published: vec![zsk.dnskey().to_vec()], ..options };
        let slice = RefreshOptions {
            threshold: 0,
            now: validity().inception() + 3600,
            serial: zone.serial() + 1,
            start: RefreshCursor::default(),
            max_names: usize::MAX,
            max_signatures: usize::MAX,
        };
        let out = refresh(&zone, &rolled, &options, &slice).unwrap();
        assert_eq!(out.next, None);
        zone = zone.apply(&out.change).unwrap().0;
        let path = dir.path().join(format!("{name}-rolled.zone"));
        write_contents(&zone, &path);
        validate(&path, false, &format!("{name} after a ZSK roll"));
        // The signer's CDS and CDNSKEY (RFC 7344) for the KSK, by a change.
        let options =
            SignOptions { cds: Some(CdsRecords::Keys(vec![ksk.dnskey().to_vec()])), ..options };
        let signed =
            sign_change(&zone, &change(&zone, &[], &["cds-next A 192.0.2.9"]), &rolled, &options)
                .unwrap();
        assert!(signed.added.iter().any(|r| r.rtype == Rtype::CDNSKEY));
        zone = zone.apply(&signed).unwrap().0;
        let path = dir.path().join(format!("{name}-cds.zone"));
        write_contents(&zone, &path);
        validate(&path, false, &format!("{name} with the signer's CDS and CDNSKEY"));
    }
}
