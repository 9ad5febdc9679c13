//! A journal file's bytes, damaged any way: reading never panics, never allocates
//! beyond what the bytes can hold, and what it accepts writes back to the same frames.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern_journal::format;

fuzz_target!(|data: &[u8]| {
    // Half the inputs get a valid header, so that the frames behind it are explored.
    let mut bytes = Vec::with_capacity(data.len() + format::HEADER_LEN);
    if data.first().is_some_and(|b| b & 1 == 0) {
        bytes.extend_from_slice(&format::header());
    }
    bytes.extend_from_slice(data);
    let Ok(decoded) = format::decode(&bytes) else { return };
    assert!(decoded.valid_len <= bytes.len());
    let mut again = format::header().to_vec();
    for change in &decoded.changes {
        format::encode(change, &mut again).expect("a read changeset writes back");
    }
    let reread = format::decode(&again).expect("header");
    assert_eq!(reread.changes, decoded.changes);
    assert!(reread.damage.is_none());
});
