//! A journal file's bytes, damaged any way: reading never panics, never allocates
//! beyond what the bytes can hold, and what it accepts (before and after damage) writes
//! back to the same frames; a torn tail has nothing intact after it.
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
    assert!(!decoded.torn || decoded.later.is_empty());
    let mut again = format::header().to_vec();
    for change in decoded.changes.iter().chain(&decoded.later) {
        format::encode(change, &mut again).expect("a read changeset writes back");
    }
    let reread = format::decode(&again).expect("header");
    let all: Vec<_> = decoded.changes.iter().chain(&decoded.later).cloned().collect();
    assert_eq!(reread.changes, all);
    assert!(reread.damage.is_none());
});
