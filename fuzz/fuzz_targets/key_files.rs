//! The readers of key files (`tern_control::keystore`): BIND's `.private` and `.key`
//! files, imported from outside, and the key store's own state file, on arbitrary
//! bytes. Reading never panics; a `.private` file that reads has the key material its
//! algorithm needs; a state file that reads renders to text that reads back the same.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use tern_control::keystore::{bind, state_file};

fuzz_target!(|data: &[u8]| {
    let file = Path::new("Kfuzz.+013+00000.private");
    if let Ok(private) = bind::parse_private(file, data) {
        let expected = if private.algorithm.is_rsa() { 8 } else { 1 };
        assert_eq!(private.material.len(), expected);
        // Conversion refuses or succeeds, never panics, whatever the public key.
        let _ = bind::to_pkcs8(file, &private, data.get(..64).unwrap_or(data));
    }
    let _ = bind::parse_key(file, data);
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(state) = state_file::parse(file, text) {
            let again = state_file::render(&state);
            assert_eq!(state_file::parse(file, &again).ok(), Some(state));
        }
    }
});
