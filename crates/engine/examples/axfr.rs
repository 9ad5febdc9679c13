//! Profiling driver for zone transfers out: loads a zone file and writes its AXFR, every
//! message, as `ternd` would send it (optionally TSIG-signed), timing the transfer alone.
//!
//! `TERN_ZONE_FILE=tld.zone TERN_ORIGIN=tld. [TERN_TSIG=1] [ROUNDS=3]
//!  [TERN_WRITE=stream.bin] target/release/examples/axfr` (or under
//! `valgrind --tool=callgrind`). TERN_WRITE keeps the last round's messages, framed as on
//! TCP, for the receiving side's driver (`tern-zone`'s `transfer_in` example).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tern_engine::{Access, Action, Config, Engine, Outcome, Request, Rule, Transport, ZoneAccess};
use tern_wire::message::{CompressionTable, MessageWriter};
use tern_wire::tsig::{Algorithm, Key, TsigFields};
use tern_wire::{Class, Name, Rtype};
use tern_zone::{Options, ZoneSet, ZoneSlot};

fn main() {
    let file = std::env::var("TERN_ZONE_FILE").expect("TERN_ZONE_FILE");
    let origin: Name =
        std::env::var("TERN_ORIGIN").unwrap_or_else(|_| "tld.".into()).parse().unwrap();
    let rounds: usize = std::env::var("ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let signed = std::env::var("TERN_TSIG").is_ok_and(|v| v == "1");
    let loaded =
        tern_zone::load_file(Path::new(&file), &origin, &Options::default(), &mut |_| {}).unwrap();
    let records = loaded.contents.record_count();
    let slot = Arc::new(ZoneSlot::new(&origin));
    slot.publish(Arc::new(loaded.contents));
    let zones = ZoneSet::new(vec![slot]);
    let key = Key::new("k.".parse().unwrap(), Algorithm::HmacSha256, b"0123456789abcdef");
    let engine = Engine::new(Config::default());
    let mut access = Access { keys: vec![key.clone()], ..Access::default() };
    let rule = Rule { actions: vec![Action::Transfer], ..Rule::default() };
    access.zones.insert((origin.clone(), ZoneAccess { rules: vec![rule].into() }));
    engine.set_access(access);
    let query = request(&origin, signed.then_some(&key));
    let mut out = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    for _ in 0..rounds {
        let request = Request { clock: || 1_700_000_000, ..Request::new(&query, Transport::Tcp) };
        let Outcome::Transfer(mut transfer) = engine.answer(&zones, &request, &mut out, &mut table)
        else {
            panic!("not a transfer")
        };
        let started = Instant::now();
        let (mut bytes, mut messages) = (0usize, 0usize);
        let mut kept = Vec::new();
        let keep = std::env::var_os("TERN_WRITE");
        while let Some(len) = transfer.next_message(&mut out, &mut table) {
            bytes += len;
            messages += 1;
            if keep.is_some() {
                kept.extend_from_slice(&(len as u16).to_be_bytes());
                kept.extend_from_slice(&out[..len]);
            }
        }
        if let Some(path) = &keep {
            std::fs::write(path, &kept).unwrap();
        }
        let elapsed = started.elapsed();
        let per = elapsed.as_nanos() as f64 / records as f64;
        println!(
            "{records} records, {messages} messages, {:.1} MB in {:.3} s: {per:.0} ns per record",
            bytes as f64 / 1e6,
            elapsed.as_secs_f64()
        );
    }
}

fn request(origin: &Name, key: Option<&Key>) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(7);
    w.push_question(origin, Rtype::AXFR, Class::IN).unwrap();
    if let Some(key) = key {
        w.sign_tsig(key, None, &TsigFields::at(1_700_000_000)).unwrap();
    }
    w.finish().to_vec()
}
