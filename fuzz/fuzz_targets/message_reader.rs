//! Raw bytes through every message parser: the reader, EDNS options, TSIG lookup and
//! verification. Nothing may panic; every error carries an offset within the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern_wire::message::{MessageReader, MAX_RDATA_LEN};
use tern_wire::tsig::{verify_message, Algorithm, Key, TsigRecord};

fuzz_target!(|data: &[u8]| {
    let mut scratch = vec![0u8; MAX_RDATA_LEN];
    if let Ok(mut reader) = MessageReader::new(data) {
        loop {
            match reader.record(&mut scratch) {
                Ok(Some(r)) => assert!(r.end <= data.len()),
                Ok(None) => break,
                Err(e) => {
                    assert!(e.offset().is_some_and(|o| o <= data.len()), "{e:?}");
                    break;
                }
            }
        }
        if let Some(edns) = reader.edns() {
            for option in edns.options() {
                let _ = option.cookie();
                let _ = option.client_subnet();
                let _ = option.tcp_keepalive();
                let _ = option.extended_error();
            }
        }
    }
    if let Ok(Some(tsig)) = TsigRecord::find(data) {
        let key = Key::new(tsig.key_name.to_name(), Algorithm::HmacSha256, b"fuzz");
        let _ = verify_message(data, &key, None, tsig.time_signed);
        let _ = verify_message(data, &key, Some(tsig.mac), 0);
    }
});
