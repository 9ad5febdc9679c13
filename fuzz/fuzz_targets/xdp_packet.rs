//! Raw frames through the XDP path's header parser (`tern_server::io::xdp::packet`): nothing
//! may panic; what it accepts lies within the frame, can be answered, and the answer's
//! headers parse back with the addresses and ports swapped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern_server::io::xdp::packet::{parse, write_headers};

fuzz_target!(|frame: &[u8]| {
    let Some(query) = parse(frame) else { return };
    assert!(query.payload().end <= frame.len());
    let mut out = vec![0u8; query.header_len() + query.payload_len];
    let payload = query.payload();
    out[query.header_len()..].copy_from_slice(&frame[payload]);
    let len = write_headers(&mut out, frame, &query, query.payload_len);
    assert_eq!(len, Some(out.len()));
    if query.local.port() != 0 {
        let answer = parse(&out).expect("an answer parses");
        assert_eq!((answer.client, answer.local), (query.local, query.client));
        assert_eq!(answer.link_len, query.link_len);
        assert_eq!(&out[answer.payload()], &frame[query.payload()]);
    }
});
