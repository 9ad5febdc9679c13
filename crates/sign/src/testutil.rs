//! Test helpers: zones from zone-file text.

use tern_wire::Name;
use tern_zone::{load_bytes, Options, ZoneContents};

/// The zone at `origin` from `text` (relative owners, `$TTL 3600`).
pub fn zone(origin: &str, text: &str) -> ZoneContents {
    let origin: Name = origin.parse().unwrap();
    let text = format!("$ORIGIN {origin}\n$TTL 3600\n{text}");
    let path = std::path::Path::new("test.zone");
    match load_bytes(text.as_bytes(), path, &origin, &Options::default()) {
        Ok(loaded) => loaded.contents,
        Err(e) => panic!("{e}"),
    }
}
