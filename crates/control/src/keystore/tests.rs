//! The key store: keys and state across restarts, crash leftovers, refusals of bad
//! files, hostile zone names, and BIND's keys imported (made by `dnssec-keygen` when it
//! is installed, as the test command installs it).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use tern_sign::policy::{Action, DsState, Policy};
use tern_wire::rdata;

use super::*;

const NOW: u64 = 1_800_000_000;
const DAY: u64 = 86_400;

fn zone() -> Name {
    "example.com.".parse().unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn why(err: Error) -> (PathBuf, Option<usize>, String) {
    match err {
        Error::KeyStore { file, line, why } => (file, line, why),
        other => panic!("not a key store error: {other}"),
    }
}

/// A store with the first keys of the default policy (KSK and ZSK).
fn store_with_keys(dir: &Path) -> KeyStore {
    let mut store = KeyStore::open(dir, &zone()).unwrap();
    let outcome = store.advance(&Policy::default(), NOW).unwrap();
    assert!(outcome.actions.iter().any(|a| matches!(a, Action::Generate { .. })));
    assert_eq!(store.keys().len(), 2);
    store
}

#[test]
fn keys_and_state_survive_restarts_through_a_rollover() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with_keys(dir.path());
    assert_eq!(store.dir(), dir.path().join("example.com."));
    assert_eq!(mode(store.dir()), 0o700);
    for info in store.keys() {
        let file = key_file::path(store.dir(), info.id);
        assert_eq!(mode(&file), 0o600, "{}", file.display());
        let key = store.signing_key(info.id).unwrap();
        assert_eq!((key.key_tag(), key.role()), (info.tag, info.role));
    }
    let ksk = store.keys().iter().find(|k| k.role == KeyRole::Ksk).unwrap().id;
    let policy = Policy::default();
    // Through the initial DS and a ZSK rollover, reopening the store at every step.
    let mut now = NOW;
    for _ in 0..40 {
        let outcome = store.advance(&policy, now).unwrap();
        for (id, present) in outcome.awaiting {
            store.observe_ds(id, present, now).unwrap();
        }
        let before: Vec<KeyInfo> = store.keys().to_vec();
        let dnskeys: Vec<Vec<u8>> =
            before.iter().map(|k| store.signing_key(k.id).unwrap().dnskey().to_vec()).collect();
        store = KeyStore::open(dir.path(), &zone()).unwrap();
        assert_eq!(store.keys(), before.as_slice());
        let again: Vec<Vec<u8>> =
            before.iter().map(|k| store.signing_key(k.id).unwrap().dnskey().to_vec()).collect();
        assert_eq!(again, dnskeys);
        let Some(next) = store.advance(&policy, now).unwrap().next else { break };
        now = next;
        if now > NOW + 70 * DAY {
            break;
        }
    }
    let ksk = store.keys().iter().find(|k| k.id == ksk).unwrap();
    assert!(matches!(ksk.ds, DsState::Seen { .. }), "{ksk:?}");
    let zsks = store.keys().iter().filter(|k| k.role == KeyRole::Zsk).count();
    assert!(store.state.next_id >= 4, "at least one ZSK rolled ({zsks} ZSKs kept)");
    // Forgotten keys' files are gone; the others are there.
    let files: Vec<String> = fs::read_dir(store.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pkcs8"))
        .collect();
    assert_eq!(files.len(), store.keys().len(), "{files:?}");
}

#[test]
fn crash_leftovers_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_keys(dir.path());
    let keys = store.keys().to_vec();
    let next = store.state.next_id;
    // A write killed before its rename leaves a temporary file; a key made just before
    // a crash leaves a key file the state does not name.
    fs::write(store.dir().join(".keys.state.4242.tmp"), "# tern key state 1\ngarbage").unwrap();
    fs::write(key_file::path(store.dir(), next), b"half a key").unwrap();
    drop(store);
    let mut store = KeyStore::open(dir.path(), &zone()).unwrap();
    assert_eq!(store.keys(), keys.as_slice());
    // A new key skips the orphan's number.
    let policy = Policy { algorithm: Algorithm::Ed25519, ..Policy::default() };
    store.advance(&policy, NOW + 1).unwrap();
    let new = store.keys().iter().filter(|k| k.algorithm == Algorithm::Ed25519);
    assert!(new.clone().count() == 2 && new.clone().all(|k| k.id > next), "{:?}", store.keys());
    assert_eq!(fs::read(key_file::path(store.dir(), next)).unwrap(), b"half a key");
}

#[test]
fn bad_files_are_refused_with_file_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_keys(dir.path());
    let zdir = store.dir().to_owned();
    let state = zdir.join(STATE_FILE);
    let good_state = fs::read_to_string(&state).unwrap();
    let [a, b] = [store.keys()[0].id, store.keys()[1].id];
    let (file_a, file_b) = (key_file::path(&zdir, a), key_file::path(&zdir, b));
    let key_a = fs::read(&file_a).unwrap();
    drop(store);
    let open = || why(KeyStore::open(dir.path(), &zone()).unwrap_err());

    // A group-readable key file.
    fs::set_permissions(&file_a, fs::Permissions::from_mode(0o640)).unwrap();
    let (file, _, reason) = open();
    assert_eq!(file, file_a);
    assert!(reason.contains("mode 640"), "{reason}");
    fs::set_permissions(&file_a, fs::Permissions::from_mode(0o600)).unwrap();
    // Another key's file in its place (foreign), then garbage (corrupt), then none.
    fs::copy(&file_b, &file_a).unwrap();
    let (file, _, reason) = open();
    assert!(file == file_a && reason.starts_with("foreign"), "{reason}");
    fs::write(&file_a, b"\x30\x03junk").unwrap();
    assert!(open().2.starts_with("corrupt"));
    fs::remove_file(&file_a).unwrap();
    assert!(open().2.starts_with("missing"));
    // A symbolic link is not followed.
    std::os::unix::fs::symlink(&file_b, &file_a).unwrap();
    assert_eq!(open().2, "not a regular file");
    fs::remove_file(&file_a).unwrap();
    fs::write(&file_a, &key_a).unwrap();
    fs::set_permissions(&file_a, fs::Permissions::from_mode(0o600)).unwrap();
    KeyStore::open(dir.path(), &zone()).unwrap();

    // A foreign or corrupt state file, with the line.
    fs::write(&state, "zone example.com.\n").unwrap();
    let (file, line, reason) = open();
    assert_eq!((file, line), (state.clone(), Some(1)));
    assert!(reason.contains("not a Tern key state file"), "{reason}");
    fs::write(&state, good_state.replace(" role zsk ", " role qsk ")).unwrap();
    let (_, line, reason) = open();
    assert!(line.is_some_and(|l| l >= 3) && reason.contains("qsk"), "{line:?} {reason}");
    fs::write(&state, good_state.replace("next-id", "next-id 1\nnext-id")).unwrap();
    assert!(open().1 == Some(3));
    fs::write(&state, [0xff, 0xfe]).unwrap();
    assert!(open().2.contains("not text"));
    fs::write(&state, &good_state).unwrap();
    fs::set_permissions(&state, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&state).is_err() {
        // (root reads any file: the check is skipped then.)
        assert!(open().2.starts_with("unreadable"));
    }
    fs::set_permissions(&state, fs::Permissions::from_mode(0o644)).unwrap();
    KeyStore::open(dir.path(), &zone()).unwrap();
}

#[test]
fn hostile_zone_names_stay_in_the_key_directory() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["/tmp/x/pwn.", "\\.\\..\\.\\..etc.", "a\\000b.", "\\.hidden.", "..", "."];
    let mut dirs = Vec::new();
    for text in names {
        let Ok(zone) = text.parse::<Name>() else { continue };
        let store = KeyStore::open(dir.path(), &zone).unwrap();
        assert_eq!(store.dir().parent(), Some(dir.path()), "{text}: {}", store.dir().display());
        dirs.push(store.dir().to_owned());
    }
    let count = dirs.len();
    dirs.dedup();
    assert_eq!(dirs.len(), count, "one directory per zone");
    assert!(count >= 5);
}

#[test]
fn the_state_file_round_trips() {
    let mut keys = Vec::new();
    let states = [
        DsState::None,
        DsState::Submitted { at: 5 },
        DsState::Seen { at: 6 },
        DsState::Withdrawn { at: 7 },
        DsState::Gone { at: 8 },
    ];
    for (i, ds) in states.into_iter().enumerate() {
        let mut k = KeyInfo::new(i as u32 + 1, 100 + i as u16, Algorithm::ALL[i], KeyRole::Zsk, 1);
        k.published = Some(2);
        k.removed = (i % 2 == 0).then_some(9);
        k.ds = ds;
        k.role = [KeyRole::Ksk, KeyRole::Zsk, KeyRole::Csk][i % 3];
        keys.push(k);
    }
    let state = State { keys, next_id: 9 };
    let text = state_file::render(&state);
    assert_eq!(state_file::parse(Path::new("s"), &text).unwrap(), state);
    let truncated = text.rsplit_once(" ds ").unwrap().0;
    assert!(state_file::parse(Path::new("s"), truncated).is_err());
    let far = text.replacen("created 1 ", "created 18446744073709551615 ", 1);
    let why = state_file::parse(Path::new("s"), &far).unwrap_err().to_string();
    assert!(why.contains("9999"), "a time the policy's sums would overflow: {why}");
    let low = text.replace("next-id 9", "next-id 3");
    assert!(state_file::parse(Path::new("s"), &low).is_err(), "ids above next-id");
}

#[test]
fn bind_private_files_that_do_not_read_are_refused_with_the_line() {
    let file = Path::new("Kexample.com.+013+00001.private");
    let parse = |text: &str| why(bind::parse_private(file, text.as_bytes()).unwrap_err());
    let good = "Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: AAAA\nCreated: 20261129132153\n";
    let ok = bind::parse_private(file, good.as_bytes()).unwrap();
    assert_eq!(ok.algorithm, Algorithm::EcdsaP256Sha256);
    assert_eq!(ok.material, [vec![0, 0, 0]]);
    assert_eq!(ok.times.created, bind::parse_time("20261129132153"));
    assert_eq!(bind::parse_time("19700101000100"), Some(60));
    assert_eq!(parse("Algorithm: 13\n").1, Some(1));
    assert!(parse("Private-key-format: v1.4\n").2.contains("v1.4"));
    assert_eq!(parse(&good.replace("AAAA", "A!AA")).1, Some(3));
    assert_eq!(parse(&good.replace("20261129132153", "2026112913215x")).1, Some(4));
    assert_eq!(parse(&format!("{good}PrivateKey: AAAA\n")).1, Some(5));
    assert!(parse(&good.replace("13 (", "5 (")).2.contains("not imported"));
    assert!(parse(&format!("{good}Engine: pkcs11\n")).2.contains("HSM"));
    assert!(parse(&good.replace("PrivateKey: AAAA\n", "")).2.contains("no PrivateKey"));
    assert!(parse(&"; x\n".repeat(300)).2.contains("too many lines"));
    assert_eq!(parse("\u{0}\u{ff}").1, Some(1));
    assert!(why(bind::parse_private(file, &[0xff]).unwrap_err()).2.contains("UTF-8"));
    assert!(bind::parse_private(file, &vec![b'a'; bind::MAX_SIZE + 1]).is_err());
    let rsa = "Private-key-format: v1.2\nAlgorithm: 8 (RSASHA256)\nModulus: AAAA\n";
    assert!(parse(rsa).2.contains("no PublicExponent"));
}

/// `base` with `suffix` appended (key file names hold dots: no `with_extension`).
fn with(base: &Path, suffix: &str) -> PathBuf {
    let mut name = base.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Runs `dnssec-keygen` in `dir` for `args`; the key files' base path.
fn keygen(dir: &Path, args: &[&str]) -> PathBuf {
    let out = Command::new("dnssec-keygen")
        .args(["-q", "-K"])
        .arg(dir)
        .args(args)
        .arg("example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir.join(String::from_utf8(out.stdout).unwrap().trim())
}

#[test]
fn keys_made_by_dnssec_keygen_import_with_the_same_dnskey() {
    if Command::new("dnssec-keygen").arg("-h").output().is_err() {
        eprintln!("SKIPPED: dnssec-keygen (bind9-utils) is not installed");
        return;
    }
    let bind = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut store = KeyStore::open(dir.path(), &zone()).unwrap();
    let cases: [(&str, &[&str], KeyRole); 5] = [
        ("ECDSAP256SHA256", &["-f", "KSK"], KeyRole::Ksk),
        ("ECDSAP384SHA384", &[], KeyRole::Zsk),
        ("ED25519", &["-f", "KSK"], KeyRole::Csk),
        ("RSASHA256", &["-b", "2048"], KeyRole::Zsk),
        ("RSASHA512", &["-b", "2048", "-f", "KSK"], KeyRole::Ksk),
    ];
    for (alg, extra, role) in cases {
        let mut args = vec!["-a", alg];
        args.extend_from_slice(extra);
        let base = keygen(bind.path(), &args);
        let private = with(&base, ".private");
        let info = store.import_bind(&private, role == KeyRole::Csk, NOW * 2).unwrap();
        assert_eq!((info.role, info.algorithm.mnemonic()), (role, alg));
        // The DNSKEY and the tag are BIND's.
        let key_text = fs::read_to_string(with(&base, ".key")).unwrap();
        let (_, bind_dnskey) = bind::parse_key(Path::new("k"), key_text.as_bytes()).unwrap();
        let key = store.signing_key(info.id).unwrap();
        assert_eq!(key.dnskey(), bind_dnskey, "{alg}");
        let name = base.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with(&format!("+{:05}", info.tag)), "{name} {}", info.tag);
        let exported = store.dnskey_record(info.id, 3600).unwrap();
        let rdata_text = exported.split(" DNSKEY ").nth(1).unwrap().trim();
        assert_eq!(rdata::parse_str(Rtype::DNSKEY, rdata_text, None).unwrap(), bind_dnskey);
        // It signs what BIND's public key verifies; its timings are BIND's.
        tern_sign::verify(&bind_dnskey, b"data", &key.sign(b"data").unwrap()).unwrap();
        assert!(info.published.is_some() && info.active.is_some() && info.created <= NOW * 2);
        assert_eq!(info.ds, DsState::None);
        assert_eq!(mode(&key_file::path(store.dir(), info.id)), 0o600);
        // The DS exported is the one BIND's dnssec-dsfromkey gives.
        check_ds(&store, info.id, &base);
        // Importing it twice is refused.
        assert!(store.import_bind(&private, false, NOW * 2).is_err());
    }
    let store = KeyStore::open(dir.path(), &zone()).unwrap();
    assert_eq!(store.keys().len(), 5);
    // A key for another zone is refused.
    let other = tempfile::tempdir().unwrap();
    let out = Command::new("dnssec-keygen")
        .args(["-q", "-a", "ED25519", "-K"])
        .arg(other.path())
        .arg("example.net")
        .output()
        .unwrap();
    let base = other.path().join(String::from_utf8(out.stdout).unwrap().trim());
    let mut store = store;
    let err = why(store.import_bind(&with(&base, ".private"), false, NOW).unwrap_err());
    assert!(err.2.contains("not example.com."), "{}", err.2);
}

fn check_ds(store: &KeyStore, id: u32, base: &Path) {
    let Ok(out) = Command::new("dnssec-dsfromkey").arg("-2").arg(with(base, ".key")).output()
    else {
        eprintln!("SKIPPED: dnssec-dsfromkey is not installed");
        return;
    };
    let bind = String::from_utf8(out.stdout).unwrap();
    let bind = bind.split(" DS ").nth(1).unwrap().trim().to_owned();
    let ours = store.ds_record(id, 3600, DigestType::Sha256).unwrap().unwrap();
    let ours = ours.split(" DS ").nth(1).unwrap().trim().to_owned();
    let parse = |t: &str| rdata::parse_str(Rtype::DS, t, None).unwrap();
    assert_eq!(parse(&ours), parse(&bind));
}

/// An imported KSK that signs takes the role over from the store's own KSK (retired at
/// the import; the ZSK left alone) unless the parent was seen to have that KSK's DS;
/// the export gives the KSKs that are not retired, or one key by its id.
#[test]
fn an_imported_signing_key_takes_its_role_over_and_is_exported() {
    if Command::new("dnssec-keygen").arg("-h").output().is_err() {
        eprintln!("SKIPPED: dnssec-keygen (bind9-utils) is not installed");
        return;
    }
    let bind = tempfile::tempdir().unwrap();
    let base = keygen(bind.path(), &["-a", "ECDSAP256SHA256", "-f", "KSK"]);
    let private = with(&base, ".private");
    let at = NOW + DAY; // after BIND's times (now, by the machine's clock)
    for seen in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_with_keys(dir.path());
        let own = |store: &KeyStore, role| store.keys().iter().find(|k| k.role == role).cloned();
        let (ksk, zsk) = (own(&store, KeyRole::Ksk).unwrap(), own(&store, KeyRole::Zsk).unwrap());
        if seen {
            store.state.keys.iter_mut().for_each(|k| k.ds = DsState::Seen { at: NOW });
        }
        let info = store.import_bind(&private, false, at).unwrap();
        assert!(info.active.is_some() && info.retired.is_none(), "{info:?}");
        let now_of = |id| store.keys().iter().find(|k| k.id == id).unwrap().retired;
        assert_eq!(now_of(ksk.id), (!seen).then_some(at), "seen at the parent: {seen}");
        assert_eq!(now_of(zsk.id), None, "another role is left alone");
        let all = store.export(None, 3600).unwrap();
        let ksks = if seen { 2 } else { 1 };
        assert_eq!(all.lines().filter(|l| l.contains(" DNSKEY 257 ")).count(), ksks, "{all}");
        assert_eq!(all.lines().filter(|l| l.contains(" DS ")).count(), ksks, "{all}");
        assert!(all.contains(&store.dnskey_record(info.id, 3600).unwrap()), "{all}");
        let one = store.export(Some(zsk.id), 3600).unwrap();
        assert!(one.lines().count() == 2 && one.contains(" DNSKEY 256 "), "{one}");
        let why = why(store.export(Some(999), 3600).unwrap_err()).2;
        assert!(why.contains("no key 999"), "{why}");
        // Kept across a restart.
        let again = KeyStore::open(dir.path(), &zone()).unwrap();
        assert_eq!(again.keys(), store.keys());
    }
}

/// The store's own KSK, whose DS the parent holds, keeps signing beside an imported
/// KSK until the imported key's DS is seen (here the parent acts at once: every DS
/// asked for is seen, every one withdrawn is gone): then the own KSK retires and its
/// DNSKEY leaves (IpubP after), its DS is withdrawn, and it is forgotten with its file;
/// the CDS lists the imported key alone, and the export gives it alone.
#[test]
fn a_kept_ksk_retires_once_the_imported_one_s_ds_is_seen() {
    if Command::new("dnssec-keygen").arg("-h").output().is_err() {
        eprintln!("SKIPPED: dnssec-keygen (bind9-utils) is not installed");
        return;
    }
    let bind = tempfile::tempdir().unwrap();
    let base = keygen(bind.path(), &["-a", "ECDSAP256SHA256", "-f", "KSK"]);
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with_keys(dir.path());
    let own = store.keys().iter().find(|k| k.role == KeyRole::Ksk).unwrap().id;
    store.state.keys.iter_mut().for_each(|k| k.ds = DsState::Seen { at: NOW });
    let at = NOW + DAY;
    let new = store.import_bind(&with(&base, ".private"), false, at).unwrap().id;
    let policy = Policy::default();
    let state = |store: &KeyStore, id| store.keys().iter().find(|k| k.id == id).cloned();
    let (mut now, mut seen, mut retired) = (at, None, None);
    while now < at + 90 * DAY {
        let outcome = store.advance(&policy, now).unwrap();
        for (id, present) in outcome.awaiting {
            store.observe_ds(id, present, now).unwrap();
        }
        if let Some(DsState::Seen { at }) = state(&store, new).map(|k| k.ds) {
            seen = seen.or(Some(at));
        }
        if retired.is_none() {
            retired = state(&store, own).and_then(|k| k.retired);
            assert!(retired.is_none() || seen.is_some(), "retired before the new DS was seen");
        }
        let Some(next) = store.advance(&policy, now).unwrap().next else { break };
        now = next;
    }
    let (seen, retired) = (seen.unwrap(), retired.unwrap());
    assert_eq!(retired, seen + policy.parent_interval());
    assert!(state(&store, own).is_none(), "forgotten: {:?}", store.keys());
    assert!(!key_file::path(store.dir(), own).exists());
    let sets = tern_sign::policy::key_sets(&policy, store.keys(), now);
    assert_eq!(sets.cds, tern_sign::policy::Cds::Keys(vec![new]));
    assert_eq!(sets.sign_keys, [new]);
    let ksks = store.export(None, 3600).unwrap();
    assert_eq!(ksks.lines().filter(|l| l.contains(" DNSKEY 257 ")).count(), 1, "{ksks}");
    assert!(ksks.contains(&store.dnskey_record(new, 3600).unwrap()), "{ksks}");
}
