//! Zone names (a catalog member's PTR, a `zone-add` argument) to file names
//! (`tern_journal::files::stem`): whatever the name, its files stay in their directory
//! (no `/`, no leading dot, no NUL, a bounded length), and two names that differ (case
//! aside, RFC 4343) never get one file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use tern_journal::files::{stem, ZoneFiles, MAX_STEM};
use tern_wire::Dname;

fuzz_target!(|data: &[u8]| {
    // Two names in wire form, one after the other: each must be a valid name.
    let Ok((a, used)) = Dname::from_wire_prefix(data) else { return };
    let a = a.to_name();
    check(&a);
    let Ok((b, _)) = Dname::from_wire_prefix(data.get(used..).unwrap_or_default()) else {
        return;
    };
    let b = b.to_name();
    check(&b);
    let same = a.as_wire().eq_ignore_ascii_case(b.as_wire());
    assert_eq!(stem(&a) == stem(&b), same, "{a} and {b}");
});

fn check(zone: &Dname) {
    let s = stem(zone);
    assert!(s.len() <= MAX_STEM, "{s}");
    assert!(!s.starts_with('.'), "{s}");
    assert!(s.bytes().all(|b| b.is_ascii_graphic() && b != b'/' && b != b'\\'), "{s}");
    let dir = Path::new("/storage");
    let files = ZoneFiles::new(dir, zone);
    for path in [files.journal(), files.zone_copy()] {
        assert_eq!(path.parent(), Some(dir), "{}", path.display());
    }
}
