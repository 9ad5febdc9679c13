//! Presentation-format names: parsing never panics, and whatever parses prints back to
//! text that parses to the same wire form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern_wire::{Dname, Name};

fuzz_target!(|data: &[u8]| {
    let origin: Name = "origin.example.".parse().unwrap_or_else(|_| Name::root());
    if let Ok(name) = Name::parse_text(data, Some(&origin)) {
        let text = name.to_string();
        let back = Name::parse_text(text.as_bytes(), None).ok();
        assert_eq!(back.as_ref().map(|n| n.as_wire()), Some(name.as_wire()));
        assert!(Dname::from_wire(name.as_wire()).is_ok());
    }
});
