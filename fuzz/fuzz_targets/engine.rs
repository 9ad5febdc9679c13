//! The query engine on arbitrary input: any bytes as a query, over UDP or TCP, against
//! fixed zones (a bit of every answer kind), with a TSIG key and rules that let anyone
//! transfer, NOTIFY and update (so the special paths run to the end: an update is
//! judged against the zone, its changeset applied, and answered). No panic, every
//! response and every message of a transfer parses with the strict reader, and
//! answering after a look-ahead (as the UDP workers do) gives the same bytes.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use tern_engine::{Access, Action, Config, Engine, Lookahead, Outcome, Request, Rule, Transport};
use tern_engine::{UpdatePolicy, UpdateRequest, ZoneAccess};
use tern_wire::tsig::{Algorithm, Key};
use tern_wire::message::{CompressionTable, MessageReader};
use tern_wire::Name;
use tern_zone::{Options, Pins, ZoneContents, ZoneSet, ZoneSlot};

const ZONE: &str = r#"$ORIGIN example.
$TTL 300
@ SOA ns1 hostmaster 1 7200 3600 1209600 300
@ NS ns1
@ NS ns2.other.
@ MX 10 mail
ns1 A 192.0.2.53
ns1 AAAA 2001:db8::53
mail A 192.0.2.25
www CNAME @
c1 CNAME c2
c2 CNAME c1
*.wild A 192.0.2.80
*.wild TXT "w"
*.cn CNAME www
sub NS ns.sub
sub NS ns1
ns.sub A 192.0.2.99
dn DNAME example.
long DNAME a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.long.example.
big TXT "0123456789012345678901234567890123456789012345678901234567890123456789"
big TXT "1123456789012345678901234567890123456789012345678901234567890123456789"
big TXT "2123456789012345678901234567890123456789012345678901234567890123456789"
big TXT "3123456789012345678901234567890123456789012345678901234567890123456789"
big TXT "4123456789012345678901234567890123456789012345678901234567890123456789"
big TXT "5123456789012345678901234567890123456789012345678901234567890123456789"
big TXT "6123456789012345678901234567890123456789012345678901234567890123456789"
svc HTTPS 1 . alpn=h2
"#;

fn origin() -> Name {
    "example.".parse().unwrap_or_else(|_| Name::root())
}

fn contents() -> Option<&'static Arc<ZoneContents>> {
    static CONTENTS: OnceLock<Option<Arc<ZoneContents>>> = OnceLock::new();
    CONTENTS
        .get_or_init(|| {
            let path = std::path::Path::new("fuzz");
            let loaded = tern_zone::load_bytes(ZONE.as_bytes(), path, &origin(), &Options::default());
            loaded.ok().map(|loaded| Arc::new(loaded.contents))
        })
        .as_ref()
}

fn zones() -> &'static ZoneSet {
    static ZONES: OnceLock<ZoneSet> = OnceLock::new();
    ZONES.get_or_init(|| {
        let slot = Arc::new(ZoneSlot::new(&origin()));
        if let Some(contents) = contents() {
            slot.publish(Arc::clone(contents));
        }
        ZoneSet::new(vec![slot])
    })
}

/// An update judged against the zone, its changeset applied, and its answer parsed.
fn check_update(update: &UpdateRequest, out: &mut [u8]) {
    let Some(zone) = contents() else { return };
    let rcode = match update.changes(zone, &UpdatePolicy::default(), 1_700_000_000) {
        Ok(change) if change.is_empty() => tern_wire::Rcode::NOERROR,
        Ok(change) => match zone.apply(&change) {
            Ok(_) => tern_wire::Rcode::NOERROR,
            Err(e) => tern_engine::UpdateRefusal::from_apply(&e).rcode,
        },
        Err(refusal) => refusal.rcode,
    };
    if let Some(len) = update.answer(rcode, out, 1_700_000_000) {
        let mut reader = MessageReader::new(out.get(..len).unwrap_or(&[])).expect("update answer header");
        reader.finish().expect("update answer parses");
    }
}

/// Anyone may transfer, notify and update `example.`; one key is known.
fn open_access() -> Access {
    let origin = origin();
    let key = Key::new("fuzz.key.".parse().unwrap_or_else(|_| Name::root()), Algorithm::HmacSha256, b"fuzz");
    let actions = vec![Action::Transfer, Action::Notify, Action::Update];
    let rule = Rule { actions, ..Rule::default() };
    let mut access = Access { keys: vec![key], ..Access::default() };
    access.zones.insert((origin, ZoneAccess { rules: vec![rule].into() }));
    access
}

/// One response's bytes and kind, for comparing outcomes.
fn summary(outcome: &Outcome, out: &[u8]) -> (u8, Vec<u8>) {
    match outcome {
        Outcome::Answered { len, .. } => (0, out.get(..*len).unwrap_or(&[]).to_vec()),
        Outcome::Notified { len, .. } => (1, out.get(..*len).unwrap_or(&[]).to_vec()),
        Outcome::Transfer(_) => (2, Vec::new()),
        Outcome::Dropped => (3, Vec::new()),
        Outcome::Update(update) => (4, update.bytes().to_vec()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, message)) = data.split_first() else { return };
    let transport = if selector & 1 == 0 { Transport::Udp } else { Transport::Tcp };
    let config =
        Config { nsid: Some(b"fuzz".to_vec()), version: Some("v".into()), ..Config::default() };
    let engine = Engine::new(config);
    engine.set_access(open_access());
    let mut out = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let request = Request { tcp_keepalive: Some(100), ..Request::new(message, transport) };
    let outcome = engine.answer(zones(), &request, &mut out, &mut table);
    let mut again = vec![0u8; 65535];
    let mut ahead = Lookahead::default();
    let mut pins = Pins::new();
    engine.look_ahead(zones(), &mut pins, message, &mut ahead);
    ahead.advance(&pins);
    let looked =
        engine.answer_with(zones(), &mut pins, &request, &mut ahead, &mut again, &mut table);
    assert_eq!(summary(&outcome, &out), summary(&looked, &again), "look-ahead changed the answer");
    match outcome {
        Outcome::Answered { len, .. } | Outcome::Notified { len, .. } => {
            let response = out.get(..len).unwrap_or(&[]);
            let mut reader = MessageReader::new(response).expect("response header");
            reader.finish().expect("response parses");
            if transport == Transport::Udp {
                assert!(len <= 1232, "UDP response of {len} bytes");
            }
        }
        Outcome::Transfer(mut transfer) => {
            assert_eq!(transport, Transport::Tcp, "a transfer over UDP");
            let mut messages = 0;
            while let Some(len) = transfer.next_message(&mut out, &mut table) {
                let mut reader = MessageReader::new(out.get(..len).unwrap_or(&[])).expect("header");
                reader.finish().expect("transfer message parses");
                messages += 1;
                assert!(messages < 1000, "a runaway transfer");
            }
        }
        Outcome::Update(update) => check_update(&update, &mut out),
        Outcome::Dropped => {}
    }
});
