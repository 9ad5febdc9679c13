//! What the parser reads and how much: regular files only (a FIFO, `/dev/zero` or a
//! directory is refused, as the zone file or as an `$INCLUDE`), and the limits on file
//! size, line length and record count, each error naming its limit and where it was hit.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::records_of_file;
use tern_zone::parser::{parse_reader, Options};
use tern_zone::Error;

/// A fresh directory for files a test writes.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-zone-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Parses `path` on another thread and gives up after a while: before the fix a FIFO
/// blocked the open, and `/dev/zero` filled memory, forever.
fn error_within_seconds(path: &Path, options: &Options) -> String {
    let (tx, rx) = mpsc::channel();
    let (path, options) = (path.to_path_buf(), options.clone());
    std::thread::spawn(move || {
        let _ = tx.send(records_of_file(&path, "example.", &options).map(|(r, _)| r.len()));
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(Err(e)) => e.to_string(),
        Ok(Ok(n)) => panic!("read, {n} records"),
        Err(_) => panic!("still reading after 20 s"),
    }
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn only_regular_files_are_read() {
    let dir = scratch("regular");
    let fifo = dir.join("pipe");
    mkfifo(&fifo);
    let e = error_within_seconds(&fifo, &Options::default());
    assert_eq!(e, format!("{}: not a regular file (a FIFO)", fifo.display()));
    let e = error_within_seconds(Path::new("/dev/zero"), &Options::default());
    assert_eq!(e, "/dev/zero: not a regular file (a character device)");
    let e = error_within_seconds(&dir, &Options::default());
    assert!(e.ends_with(": not a regular file (a directory)"), "{e}");

    // The same through $INCLUDE: refused at the directive, which names the file.
    let main = dir.join("main.zone");
    std::fs::write(&main, "$TTL 60\n$INCLUDE /dev/zero\n").unwrap();
    let e = error_within_seconds(&main, &Options::default());
    assert_eq!(
        e,
        format!(
            "{}:2:10: cannot read '/dev/zero': not a regular file (a character device)",
            main.display()
        )
    );
    std::fs::write(&main, "$INCLUDE pipe\n").unwrap();
    let e = error_within_seconds(&main, &Options::default());
    assert!(e.ends_with("/pipe': not a regular file (a FIFO)"), "{e}");
    // A symbolic link is followed to what it names.
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero-link")).unwrap();
    std::fs::write(&main, "$INCLUDE zero-link\n").unwrap();
    let e = error_within_seconds(&main, &Options::default());
    assert!(e.ends_with("/zero-link': not a regular file (a character device)"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_over_the_size_limit_is_refused() {
    let dir = scratch("size");
    let big = dir.join("big.zone");
    std::fs::write(&big, "$TTL 60\n".repeat(20)).unwrap(); // 160 bytes
    let options = Options { max_file_size: 100, ..Options::default() };
    let e = records_of_file(&big, "example.", &options).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        format!("{}: 160 bytes, over the limit of 100 (max_file_size)", big.display())
    );
    let main = dir.join("main.zone");
    std::fs::write(&main, "$TTL 60\n$INCLUDE big.zone\n").unwrap();
    let e = records_of_file(&main, "example.", &options).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:2:10: cannot read '", main.display())), "{e}");
    assert!(e.ends_with("big.zone': 160 bytes, over the limit of 100 (max_file_size)"), "{e}");
    // At the limit is fine.
    let fits = Options { max_file_size: 160, ..Options::default() };
    assert!(records_of_file(&big, "example.", &fits).is_ok());
    // A reader (or a file that grows while it is read) is stopped where it passes the
    // limit, at the line it got to.
    let text = "a 60 A 192.0.2.1\n".repeat(10); // 170 bytes, 17 a line
    let e = parse_reader(
        text.as_bytes(),
        Path::new("r"),
        &common::name("example."),
        &options,
        32,
        &mut |_| Ok(()),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "r:6:1: the file is longer than the limit of 100 bytes (max_file_size): stopped reading"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_line_over_the_length_limit_stops_the_parse() {
    let dir = scratch("line");
    let path = dir.join("long.zone");
    let long_txt = format!("x 60 TXT \"{}\"\n", "a".repeat(200));
    std::fs::write(&path, format!("$TTL 60\nok A 192.0.2.1\n{long_txt}after A 192.0.2.2\n"))
        .unwrap();
    let options = Options { max_line_length: 100, collect_errors: true, ..Options::default() };
    let e = records_of_file(&path, "example.", &options).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:1: a line longer than the limit of 100 bytes (max_line_length): stopped reading",
            path.display()
        )
    );
    // Parenthesised lines are one entry (RFC 1035 §5.1), and count together.
    let split = format!("x 60 TXT (\n{}\n)\n", "\"aaaaaaaaaaaaaaaaaaaa\"\n".repeat(10));
    std::fs::write(&path, format!("$TTL 60\n{split}")).unwrap();
    let e = records_of_file(&path, "example.", &options).unwrap_err().to_string();
    assert!(e.contains("long.zone:2:1: a line longer than the limit of 100 bytes"), "{e}");
    // A line of exactly the limit is read, whatever the buffer started at.
    let exact = format!("x 60 TXT \"{}\"\n", "b".repeat(100 - 11));
    assert_eq!(exact.len(), 101, "100 bytes and the newline");
    std::fs::write(&path, &exact).unwrap();
    let (records, _) = records_of_file(&path, "example.", &options).unwrap();
    assert_eq!(records.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_100_mb_line_in_a_file_is_stopped_at_the_default_limit() {
    // Read as a file, a hostile line no longer grows the buffer to its own size.
    let line = std::iter::repeat_n(b'a', 100 << 20).chain(b" 1 A 192.0.2.1\n".iter().copied());
    let reader = std::io::Cursor::new(line.collect::<Vec<u8>>());
    let e = parse_reader(
        reader,
        Path::new("big"),
        &common::name("example."),
        &Options::default(),
        4096,
        &mut |_| Ok(()),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "big:1:1: a line longer than the limit of 1048576 bytes (max_line_length): stopped reading"
    );
}

#[test]
fn the_record_count_is_limited() {
    let text = "$TTL 60\na A 192.0.2.1\nb A 192.0.2.2\nc A 192.0.2.3\nd A 192.0.2.4\n";
    let options = Options { max_records: 3, collect_errors: true, ..Options::default() };
    let mut seen = 0;
    let e = tern_zone::parse_bytes(
        text.as_bytes(),
        Path::new("z"),
        &common::name("example."),
        &options,
        &mut |_| {
            seen += 1;
            Ok(())
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "z:5:1: more than 3 records, the limit (max_records): stopped reading"
    );
    assert_eq!(seen, 3);
    // $GENERATE counts too.
    let text = "$TTL 60\n$GENERATE 1-10 h$ A 192.0.2.1\n";
    let e = tern_zone::parse_bytes(
        text.as_bytes(),
        Path::new("z"),
        &common::name("example."),
        &options,
        &mut |_| Ok(()),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("z:2:1: more than 3 records"), "{e}");
}
