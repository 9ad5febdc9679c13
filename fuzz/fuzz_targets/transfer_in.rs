//! A zone transfer as a secondary receives it, from a hostile primary: the bytes are a
//! TCP stream of length-prefixed messages; the first byte picks AXFR or IXFR (and our
//! serial). Every message goes through the strict reader and every answer record into
//! `tern_zone::transfer::Incoming`, which then builds the zone or the changesets. No
//! panic, and every error is a value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern_wire::message::{MessageReader, Section, MAX_RDATA_LEN};
use tern_wire::{Name, NameBuilder};
use tern_zone::transfer::Incoming;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, mut stream)) = data.split_first() else { return };
    let origin: Name = "example.".parse().unwrap_or_else(|_| Name::root());
    let mut incoming = match selector & 3 {
        0 => Incoming::axfr(&origin),
        serial => Incoming::ixfr(&origin, u32::from(serial)),
    };
    let mut scratch = vec![0u8; MAX_RDATA_LEN];
    let mut owner = NameBuilder::new();
    'messages: while let Some((len, rest)) = stream.split_first_chunk::<2>() {
        let len = usize::from(u16::from_be_bytes(*len));
        let Some(message) = rest.get(..len) else { break };
        stream = rest.get(len..).unwrap_or(&[]);
        let Ok(mut reader) = MessageReader::new(message) else { break };
        loop {
            match reader.record_in(&mut owner, &mut scratch) {
                Ok(Some(r)) if r.section == Section::Answer => {
                    if incoming.record_read(&r).is_err() {
                        break 'messages;
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        if incoming.is_done() {
            break;
        }
    }
    let _ = incoming.finish();
});
