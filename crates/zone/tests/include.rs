//! `$INCLUDE`: relative paths, origin argument, scoping of origin, owner and TTLs,
//! nesting, and every way it can fail (disabled, missing file, recursion direct and
//! mutual, too deep, an error inside an included file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use common::{data, lines, records_of_file, records_of_text};
use tern_zone::parser::Options;
use tern_zone::Error;

#[test]
fn paths_origin_and_scope() {
    let (records, _) =
        records_of_file(&data("include/main.zone"), "example.", &Options::default()).unwrap();
    let got: Vec<String> = lines(&records).into_iter().skip(2).collect();
    assert_eq!(
        got,
        [
            "ns.example.\t300\tIN\tA\t192.0.2.1",
            "last.example.\t300\tIN\tA\t192.0.2.2",
            "h1.example.\t300\tIN\tA\t192.0.2.11",
            "h2.example.\t300\tIN\tA\t192.0.2.12",
            "h3.inner.example.\t300\tIN\tA\t192.0.2.13",
            "last.example.\t300\tIN\tA\t192.0.2.3",
            "h1.branch.example.\t300\tIN\tA\t192.0.2.11",
            "h2.branch.example.\t300\tIN\tA\t192.0.2.12",
            "h3.inner.branch.example.\t300\tIN\tA\t192.0.2.13",
            "after.example.\t300\tIN\tA\t192.0.2.4",
        ]
    );
}

#[test]
fn nested_paths_are_relative_to_each_file_and_ttl_is_scoped() {
    let (records, _) =
        records_of_file(&data("include/nested.zone"), "example.", &Options::default()).unwrap();
    assert_eq!(
        lines(&records),
        [
            "top.example.\t300\tIN\tA\t192.0.2.1",
            "one.example.\t60\tIN\tA\t192.0.2.2",
            "two.example.\t60\tIN\tA\t192.0.2.3",
        ]
    );
    // The $TTL 60 of level1.zone ends with it.
    let text = format!(
        "$TTL 300\n$INCLUDE {}\nback A 192.0.2.4\n",
        data("include/sub/level1.zone").display()
    );
    let (records, _) = records_of_text(text.as_bytes(), "example.", &Options::default()).unwrap();
    assert_eq!(records.last().unwrap().to_string(), "back.example.\t300\tIN\tA\t192.0.2.4");
}

#[test]
fn rfc1035_example_with_its_mailbox_file() {
    let options = Options { default_ttl: 60, ..Options::default() };
    let (records, report) =
        records_of_file(&data("rfc1035/isi.edu.zone"), "ISI.EDU.", &options).unwrap();
    assert_eq!(records.len(), 17);
    assert_eq!(records[11].to_string(), "MOE.ISI.EDU.\t60\tIN\tMB\tA.ISI.EDU.");
    assert_eq!(records[16].to_string(), "STOOGES.ISI.EDU.\t60\tIN\tMG\tCURLEY.ISI.EDU.");
    assert_eq!(report.warnings.len(), 1);
}

fn error_of(file: &str, options: &Options) -> Error {
    records_of_file(&data(file), "example.", options).unwrap_err()
}

#[test]
fn recursion_direct_and_mutual_is_refused() {
    let e = error_of("include/loop.zone", &Options::default());
    assert!(matches!(e, Error::Include { .. }));
    let text = e.to_string();
    assert!(text.contains("include/loop.zone:2:10: recursive $INCLUDE: '"), "{text}");
    assert!(text.ends_with("loop.zone' is already being read"), "{text}");

    let e = error_of("include/mutual-a.zone", &Options::default()).to_string();
    assert!(e.contains("include/mutual-b.zone:2:10: recursive $INCLUDE"), "{e}");
    assert!(e.contains("(included from "), "{e}");
    assert!(e.ends_with("include/mutual-a.zone:2)"), "{e}");
}

#[test]
fn depth_is_limited() {
    let shallow = Options { max_include_depth: 1, ..Options::default() };
    let e = error_of("include/nested.zone", &shallow).to_string();
    assert!(e.contains("sub/level1.zone:3:1: $INCLUDE nested deeper than 1 files"), "{e}");
    let deep_enough = Options { max_include_depth: 2, ..Options::default() };
    assert!(records_of_file(&data("include/nested.zone"), "example.", &deep_enough).is_ok());
}

#[test]
fn missing_files_and_disabled_include() {
    let e = error_of("include/missing.zone", &Options::default()).to_string();
    assert!(e.contains("include/missing.zone:2:10: cannot read '"), "{e}");
    assert!(e.contains("no-such-file.zone': No such file or directory"), "{e}");
    let e = error_of("include/main.zone", &Options::untrusted()).to_string();
    assert!(e.contains("include/main.zone:7:1: $INCLUDE is not allowed"), "{e}");
    let e =
        records_of_file(&data("include/none.zone"), "example.", &Options::default()).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
}

#[test]
fn errors_inside_included_files_name_file_and_chain() {
    let e = error_of("include/bad-inner.zone", &Options::default());
    let text = e.to_string();
    assert!(
        text.contains(
            "include/sub/bad.zone:2:17: expected an IPv4 address, found 'not-an-address'"
        ),
        "{text}"
    );
    assert!(text.ends_with("/include/bad-inner.zone:2)"), "{text}");
    let at = e.position().unwrap();
    assert_eq!(at.included_from.len(), 1);
    assert_eq!(at.included_from[0].1, 2);

    // Collecting: the error inside, and the records around it.
    let options = Options { collect_errors: true, ..Options::default() };
    let mut owners = Vec::new();
    let result = tern_zone::parse_file(
        &data("include/bad-inner.zone"),
        &common::name("example."),
        &options,
        &mut |r| {
            owners.push(r.owner.to_string());
            Ok(())
        },
    );
    assert!(result.is_err());
    assert_eq!(owners, ["x.example.", "fine.example.", "y.example."]);
}

#[test]
fn in_memory_text_includes_relative_to_the_working_directory() {
    // parse_bytes with a source without a directory: paths are used as written.
    let text = format!("$INCLUDE {}\n", data("include/sub/level2.zone").display());
    let (records, _) = records_of_text(text.as_bytes(), "example.", &Options::default()).unwrap();
    assert_eq!(lines(&records), ["two.example.\t3600\tIN\tA\t192.0.2.3"]);
}

/// A fresh directory for files a test writes, removed first if a previous run left it.
fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-zone-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn an_included_secrets_file_is_not_quoted_whole() {
    let dir = scratch("secrets");
    let secret = "4f9c2b7e1a6d8e3f0b5c9a2d7e4f1b8c6a3d0e9f7b2c5a8d1e4f";
    std::fs::write(dir.join("secrets.env"), format!("db_password {secret}\n")).unwrap();
    std::fs::write(dir.join("main.zone"), "$INCLUDE secrets.env\n").unwrap();
    let e = records_of_file(&dir.join("main.zone"), "example.", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("secrets.env:1:13: expected a TTL"), "{e}");
    assert!(e.contains(&format!("found '{}… (52 bytes)'", &secret[..40])), "{e}");
    assert!(!e.contains(secret), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn findings_about_included_records_name_the_included_file() {
    let dir = scratch("findings");
    std::fs::write(dir.join("hosts.zone"), "; hosts\nwww A 192.0.2.1\nwww CNAME other\n").unwrap();
    let main = "$TTL 60\n@ SOA ns hm 1 2 3 4 5\n@ NS ns.other.\n$INCLUDE hosts.zone\n";
    std::fs::write(dir.join("main.zone"), main).unwrap();
    let e = tern_zone::load_file(
        &dir.join("main.zone"),
        &common::name("example."),
        &Options::default(),
        &mut |_| {},
    )
    .unwrap_err();
    let Error::Semantic(report) = &e else { panic!("{e}") };
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [format!(
            "{}: error: www.example. CNAME exists beside A data",
            dir.join("hosts.zone:2").display()
        )]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file that includes itself under another name — a hard link, a symbolic link — is
/// the same file: refused as recursive (files are compared by device and inode).
#[test]
fn recursion_through_another_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.zone");
    std::fs::write(
        &main,
        "$ORIGIN example.\n@ 300 IN SOA ns host 1 2 3 4 5\n$INCLUDE linked.zone\n",
    )
    .unwrap();
    std::fs::hard_link(&main, dir.path().join("linked.zone")).unwrap();
    let e = records_of_file(&main, "example.", &Options::default()).unwrap_err().to_string();
    assert!(e.contains("recursive $INCLUDE: '"), "{e}");
    assert!(e.contains("linked.zone' is already being read"), "{e}");

    std::fs::write(&main, "$ORIGIN example.\n@ 300 IN SOA ns host 1 2 3 4 5\n$INCLUDE sym.zone\n")
        .unwrap();
    std::os::unix::fs::symlink("main.zone", dir.path().join("sym.zone")).unwrap();
    let e = records_of_file(&main, "example.", &Options::default()).unwrap_err().to_string();
    assert!(e.contains("sym.zone' is already being read"), "{e}");
}
