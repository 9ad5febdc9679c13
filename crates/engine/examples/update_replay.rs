//! Replays UPDATE messages against a zone through the engine as `ternd`'s zone writer is
//! to: `Engine::answer` (TSIG, the zone section, the access rules), then for a request
//! handed over `UpdateRequest::changes` against the current version, `apply`, and the
//! answer. Prints one line per message (the answer's RCODE, `+sig` when it carries a MAC),
//! `--`, then the zone's records in master format. `tests/interop/update_cases.py
//! --engine` compares that with BIND and Knot DNS.
//!
//! `update_replay ORIGIN ZONE_FILE KEY_NAME KEY_BASE64 MESSAGE_FILE...` (the key, as
//! hmac-sha256, may update the whole zone; messages are wire format, one per file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use tern_engine::{
    Access, Action, Config, Engine, Outcome, Request, Rule, Transport, UpdatePolicy, UpdateRefusal,
    ZoneAccess,
};
use tern_wire::message::{CompressionTable, Flags, MessageReader};
use tern_wire::tsig::{Algorithm, Key, TsigRecord};
use tern_wire::{rdata, Name, Rcode};
use tern_zone::{Options, ZoneContents, ZoneSet, ZoneSlot};

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [origin, file, key_name, secret, messages @ ..] = args.as_slice() else {
        panic!("usage: update_replay ORIGIN ZONE_FILE KEY_NAME KEY_BASE64 MESSAGE_FILE...");
    };
    let origin: Name = origin.parse().unwrap();
    let loaded =
        tern_zone::load_file(Path::new(file), &origin, &Options::default(), &mut |_| {}).unwrap();
    let slot = Arc::new(ZoneSlot::new(&origin));
    slot.publish(Arc::new(loaded.contents));
    let zones = ZoneSet::new(vec![Arc::clone(&slot)]);
    let key = Key::from_base64(key_name.parse().unwrap(), Algorithm::HmacSha256, secret).unwrap();
    let engine = Engine::new(Config::default());
    let mut access = Access { keys: vec![key.clone()], ..Access::default() };
    let rule = Rule {
        keys: vec![key.name().to_name()],
        actions: vec![Action::Update, Action::Transfer],
        ..Rule::default()
    };
    access.zones.insert((origin.clone(), ZoneAccess { rules: vec![rule].into() }));
    engine.set_access(access);
    for path in messages {
        let message = std::fs::read(path).unwrap();
        let answer = replay(&engine, &zones, &slot, &message);
        let flags = MessageReader::new(&answer).unwrap().header().flags;
        let rcode = Rcode::from_parts(flags.rcode_bits(), 0);
        let aa = if flags.has(Flags::AA) { "+aa" } else { "" };
        let signed = TsigRecord::find(&answer).ok().flatten().is_some_and(|t| !t.mac.is_empty());
        println!("{rcode}{aa}{}", if signed { "+sig" } else { "" });
    }
    println!("--");
    print_zone(&slot.contents_full().unwrap());
}

/// One message through the engine and, when handed over, the writer's steps.
fn replay(engine: &Engine, zones: &ZoneSet, slot: &ZoneSlot, message: &[u8]) -> Vec<u8> {
    let client: IpAddr = "127.0.0.1".parse().unwrap();
    let request = Request { client, clock: now, ..Request::new(message, Transport::Tcp) };
    let mut out = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    match engine.answer(zones, &request, &mut out, &mut table) {
        Outcome::Answered { len, .. } => out[..len].to_vec(),
        Outcome::Update(update) => {
            let zone = slot.contents_full().unwrap();
            let rcode = match update.changes(&zone, &UpdatePolicy::default(), now()) {
                Ok(changes) if changes.is_empty() => Rcode::NOERROR,
                Ok(changes) => match zone.apply(&changes) {
                    Ok((next, _)) => {
                        slot.publish(Arc::new(next));
                        Rcode::NOERROR
                    }
                    Err(e) => UpdateRefusal::from_apply(&e).rcode,
                },
                Err(refusal) => {
                    eprintln!("{}: {refusal}", update.zone());
                    refusal.rcode
                }
            };
            let len = update.answer(rcode, &mut out, now()).unwrap();
            out[..len].to_vec()
        }
        other => panic!("unexpected outcome {other:?}"),
    }
}

fn print_zone(zone: &ZoneContents) {
    zone.for_each_record(|owner, rtype, ttl, data| {
        println!("{owner} {ttl} IN {rtype} {}", rdata::to_text(rtype, data));
    });
}
