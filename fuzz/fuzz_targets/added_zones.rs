//! The file of zones added at run time (`zones-added.toml`, `tern_server::config::added_file`):
//! an append-only TOML log whose changes end with CRC-32 mark lines, read at every start
//! beside the configuration. On arbitrary bytes, reading never panics; and whatever the
//! file held, a change appended to its committed part reads back as committed, with
//! nothing torn or damaged after it (what `zone-add` relies on after a crash).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use tern_server::config::added_file::{self, Tail};
use tern_server::config::Config;

/// The configuration the added zones join: a template they may name.
const MAIN: &str = "[server]\nlisten = []\nstorage = \"/nonexistent/tern-fuzz\"\n\
    [[template]]\nid = \"hosting\"\n";

/// A change as `zone-add` appends it.
const CHANGE: &str = "[[zone]]\nname = \"fuzz.example.\"\ntemplate = \"hosting\"\n";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let main = Path::new("/nonexistent/tern-fuzz/ternd.toml");
    let added = Path::new("/nonexistent/tern-fuzz/zones-added.toml");
    if let Ok(config) = Config::read(MAIN, main, Some((&text, added))) {
        assert!(config.added_log.committed <= config.added_log.len);
    }
    let (end, marked, tail) = added_file::committed(&text);
    assert!(end <= text.len());
    assert!(text.is_char_boundary(end));
    if let Tail::Torn(at) | Tail::Damaged(at) = tail {
        assert!(at <= text.len());
    }
    let committed = &text[..end];
    let after = added_file::with_change(committed, marked, CHANGE);
    assert_eq!(added_file::committed(&after), (after.len(), true, Tail::Clean));
});
