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
    sign_zone, Algorithm, DenialConfig, KeyRole, Nsec3Config, SignOptions, SignedZone, SigningKey,
    Validity,
};
use tern_wire::{Name, Rtype};
use tern_zone::{load_bytes, Options, ZoneContents};

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
    signed.for_each_record(|owner, rtype, ttl, rdata| {
        let data = tern_wire::rdata::to_text(rtype, rdata);
        text.push_str(&format!("{owner} {ttl} IN {rtype} {data}\n"));
    });
    std::fs::write(path, text).unwrap();
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
        let contents = signed.to_contents().unwrap();
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
    let signed = sign_zone(&unsigned_zone(), &keys, &SignOptions::new(validity())).unwrap();
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
