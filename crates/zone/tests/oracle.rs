//! Our parse against BIND's: every test zone (and the generated ones) is read by Tern and
//! by `named-checkzone -D` (BIND 9's canonical dump); both must hold the same set of
//! records. BIND's dump is read back with Tern's parser, so what is compared is owner
//! (case-insensitive), class, type, TTL and RDATA in wire form. Skipped, with a note,
//! where `named-checkzone` is not installed.
//!
//! Also the round trip: parse, print, parse again gives the same records in order.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{data, records_of_file, records_of_text};
use tern_zone::parser::{Options, RecordBuf};

/// The zones compared: file, origin, and the default TTL that makes a zone without any
/// TTL match BIND (which uses the SOA MINIMUM there).
const ZONES: &[(&str, &str, u32)] = &[
    ("example.zone", "example.com.", 3600),
    ("generate.zone", "example.", 3600),
    ("rfc1035/isi.edu.zone", "ISI.EDU.", 60),
    ("include/main.zone", "example.", 3600),
    ("types.zone", "types.example.", 3600),
    // Made by `genzone.py tld --names 1000` and `genzone.py hosting --zones 2`
    // (/work/shared/bench), and signed by BIND's dnssec-signzone (NSEC and NSEC3).
    ("generated/tld-1000.zone", "tld.", 3600),
    ("generated/ffxkt0.example.zone", "ffxkt0.example.", 3600),
    ("generated/signed-nsec.zone", "ffxkt0.example.", 3600),
    ("generated/signed-nsec3.zone", "ffxkt0.example.", 3600),
];

/// A record as compared: owner lower-cased.
type Key = (Vec<u8>, u16, u16, u32, Vec<u8>);

/// The set of records, each with its text for messages.
fn set(records: &[RecordBuf]) -> BTreeMap<Key, String> {
    let key = |r: &RecordBuf| {
        let mut owner = Vec::new();
        r.owner.write_lowercase(&mut owner);
        (owner, r.class.0, r.rtype.0, r.ttl, r.rdata.clone())
    };
    records.iter().map(|r| (key(r), r.to_string())).collect()
}

/// The texts of records in `a` but not in `b`.
fn missing(a: &BTreeMap<Key, String>, b: &BTreeMap<Key, String>) -> Vec<String> {
    a.iter().filter(|(k, _)| !b.contains_key(*k)).map(|(_, text)| text.clone()).collect()
}

/// BIND's records for a zone file, or `None` when BIND is not installed.
fn bind_records(path: &Path, origin: &str) -> Option<BTreeMap<Key, String>> {
    let out = std::env::temp_dir().join(format!("tern-oracle-{}-{origin}txt", std::process::id()));
    let dir = path.parent().unwrap();
    let status = Command::new("named-checkzone")
        .args(["-D", "-k", "ignore", "-i", "none", "-o"])
        .arg(&out)
        .arg(origin)
        .arg(path)
        .current_dir(dir)
        .output();
    let status = match status {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("named-checkzone: {e}"),
    };
    assert!(
        status.status.success(),
        "BIND rejects {}: {}",
        path.display(),
        String::from_utf8_lossy(&status.stdout)
    );
    let text = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    let (records, _) = records_of_text(&text, ".", &Options::untrusted())
        .unwrap_or_else(|e| panic!("BIND's dump of {} does not parse: {e}", path.display()));
    Some(set(&records))
}

fn compare_with_bind(file: &Path, origin: &str, default_ttl: u32) {
    let options = Options { default_ttl, ..Options::default() };
    let (ours, _) = records_of_file(file, origin, &options).unwrap();
    let ours = set(&ours);
    let Some(bind) = bind_records(file, origin) else {
        eprintln!("named-checkzone not installed: BIND comparison of {} skipped", file.display());
        return;
    };
    let only_ours = missing(&ours, &bind);
    let only_bind = missing(&bind, &ours);
    assert!(
        only_ours.is_empty() && only_bind.is_empty(),
        "{}: {} records only in Tern's parse {only_ours:?}, {} only in BIND's {only_bind:?}",
        file.display(),
        only_ours.len(),
        only_bind.len()
    );
    assert!(!ours.is_empty());
}

#[test]
fn same_records_as_bind() {
    for (file, origin, ttl) in ZONES {
        compare_with_bind(&data(file), origin, *ttl);
    }
}

#[test]
fn print_and_parse_again_gives_the_same_records() {
    for (file, origin, ttl) in ZONES {
        let options = Options { default_ttl: *ttl, ..Options::default() };
        let (first, _) = records_of_file(&data(file), origin, &options).unwrap();
        let printed: String = first.iter().map(|r| format!("{r}\n")).collect();
        let (again, report) = records_of_text(printed.as_bytes(), ".", &Options::untrusted())
            .unwrap_or_else(|e| panic!("{file}: printed text does not parse: {e}\n{printed}"));
        assert_eq!(first, again, "{file}");
        assert!(report.warnings.is_empty(), "{file}: {:?}", report.warnings);
    }
}
