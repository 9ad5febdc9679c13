//! The DER walk that reads a client's or a primary's certificate (`tern_server::tls`:
//! its key pin and its end of validity) on arbitrary bytes: certificates come from the
//! network, presented in TLS handshakes. Reading never panics, and a certificate whose
//! pin is read reads the same way again; its end, when read, is a time between the
//! years 0 and 9999 (UTCTime: 1950 to 2049).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern_server::tls::{not_after, Pin};

fuzz_target!(|data: &[u8]| {
    let pin = Pin::of_certificate(data);
    assert_eq!(pin, Pin::of_certificate(data));
    if let Some(end) = not_after(data) {
        assert!((-62_167_219_200..=253_402_300_799).contains(&end), "{end}");
    }
});
