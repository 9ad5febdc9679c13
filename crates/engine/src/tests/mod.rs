//! Engine tests: literal zones, queries built with the message writer, responses
//! rendered like `dig` output so expectations read as DNS.

mod answers;
mod control;
mod defences;
mod protocol;

use std::path::Path;
use std::sync::Arc;

use tern_wire::edns::Edns;
use tern_wire::message::{CompressionTable, Flags, MessageReader, MessageWriter, Section};
use tern_wire::{rdata, Class, Name, Opcode, Rtype};
use tern_zone::{load_bytes, Options, ZoneSet, ZoneSlot};

use crate::{Config, Engine, Outcome, Request, Transport};

/// Builds a zone set from (origin, records) pairs; records are `owner ttl TYPE rdata`
/// lines with names relative to the origin, read by the zone-file loader (lines are
/// trimmed first: the literals are indented, and in a zone file a leading blank means
/// "the previous owner").
pub fn zones(list: &[(&str, &str)]) -> ZoneSet {
    let mut slots = Vec::new();
    for (origin, text) in list {
        let name: Name = origin.parse().unwrap();
        let text: String = text.lines().map(|l| format!("{}\n", l.trim())).collect();
        let loaded = load_bytes(text.as_bytes(), Path::new(origin), &name, &Options::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let slot = Arc::new(ZoneSlot::new(&name));
        slot.publish(Arc::new(loaded.contents));
        slots.push(slot);
    }
    ZoneSet::new(slots)
}

/// How to ask.
#[derive(Clone, Copy)]
pub struct Ask {
    pub edns: Option<(u16, u8, bool)>, // (payload, version, DO)
    pub transport: Transport,
    pub opcode: Opcode,
    pub class: Class,
}

impl Default for Ask {
    fn default() -> Self {
        Ask {
            edns: Some((1232, 0, false)),
            transport: Transport::Udp,
            opcode: Opcode::QUERY,
            class: Class::IN,
        }
    }
}

/// DO=1 with a 1232-byte buffer.
pub fn dnssec() -> Ask {
    Ask { edns: Some((1232, 0, true)), ..Ask::default() }
}

/// Builds a query message.
pub fn query(qname: &str, qtype: Rtype, ask: Ask) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(0x1234);
    let mut flags = Flags(Flags::RD);
    flags.set_opcode(ask.opcode);
    w.set_flags(flags);
    w.push_question(&qname.parse::<Name>().unwrap(), qtype, ask.class).unwrap();
    if let Some((payload, version, dnssec_ok)) = ask.edns {
        w.push_opt(payload, version, if dnssec_ok { Edns::DO } else { 0 }).unwrap();
    }
    w.finish().to_vec()
}

/// Sends raw bytes to the engine; `None` when it drops them.
pub fn raw(set: &ZoneSet, config: Config, message: &[u8], transport: Transport) -> Option<Vec<u8>> {
    let engine = Engine::new(config);
    let mut out = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let request = Request { tcp_keepalive: Some(100), ..Request::new(message, transport) };
    match engine.answer(set, &request, &mut out, &mut table) {
        Outcome::Answered { len, .. } | Outcome::Notified { len, .. } => Some(out[..len].to_vec()),
        Outcome::Dropped | Outcome::Transfer(_) | Outcome::Update(_) => None,
    }
}

/// Asks with default settings and renders the response.
pub fn ask(set: &ZoneSet, qname: &str, qtype: Rtype) -> String {
    ask_with(set, qname, qtype, Ask::default())
}

/// Asks and renders the response.
pub fn ask_with(set: &ZoneSet, qname: &str, qtype: Rtype, how: Ask) -> String {
    let response =
        raw(set, Config::default(), &query(qname, qtype, how), how.transport).expect("no answer");
    render(&response)
}

/// Renders a response: `RCODE flags | section: rr; rr | ...` (OPT shown as `OPT(size,do)`).
pub fn render(msg: &[u8]) -> String {
    let mut reader = MessageReader::new(msg).unwrap();
    let h = *reader.header();
    let mut flags = Vec::new();
    for (bit, name) in [(Flags::AA, "aa"), (Flags::TC, "tc"), (Flags::RD, "rd"), (Flags::AD, "ad")]
    {
        if h.flags.has(bit) {
            flags.push(name);
        }
    }
    while reader.question().unwrap().is_some() {}
    let mut scratch = vec![0u8; 65535];
    let mut sections: Vec<(Section, Vec<String>)> = Vec::new();
    let mut rcode_ext = 0u8;
    while let Some(rr) = reader.record(&mut scratch).unwrap() {
        let text = if rr.rtype == Rtype::OPT {
            rcode_ext = (rr.ttl >> 24) as u8;
            format!("OPT({},{})", rr.class.0, if rr.ttl & 0x8000 != 0 { "do" } else { "-" })
        } else {
            format!("{} {} {} {}", rr.owner, rr.ttl, rr.rtype, rdata::to_text(rr.rtype, rr.rdata))
        };
        match sections.last_mut() {
            Some((s, list)) if *s == rr.section => list.push(text),
            _ => sections.push((rr.section, vec![text])),
        }
    }
    let rcode = tern_wire::Rcode::from_parts(h.flags.rcode_bits(), rcode_ext);
    let mut out = format!("{rcode} {}", flags.join(" "));
    for (section, list) in sections {
        let name = match section {
            Section::Answer => "an",
            Section::Authority => "au",
            Section::Additional => "ad",
            Section::Question => "qd",
        };
        out.push_str(&format!(" | {name}: {}", list.join("; ")));
    }
    out
}

/// A zone with a bit of everything.
pub const EXAMPLE: &str = r#"
@ 3600 SOA ns1 hostmaster 1 7200 3600 1209600 300
@ 3600 NS ns1
@ 3600 NS ns2.other.
@ 3600 MX 10 mail
@ 3600 A 192.0.2.1
ns1 3600 A 192.0.2.53
ns1 3600 AAAA 2001:db8::53
mail 3600 A 192.0.2.25
www 300 CNAME @
chain1 300 CNAME chain2
chain2 300 CNAME www
loop1 300 CNAME loop2
loop2 300 CNAME loop1
out 300 CNAME www.other.
dangling 300 CNAME nothing
*.wild 300 A 192.0.2.80
*.wild 300 TXT "wild"
exists.wild 300 TXT "real"
a.ent.wild 300 A 192.0.2.81
*.cname 300 CNAME www
sub 3600 NS ns.sub
sub 3600 NS ns1
sub 3600 NS ns.elsewhere.other.
ns.sub 3600 A 192.0.2.99
deep.below.sub 3600 A 192.0.2.100
secure 3600 NS ns.secure
secure 3600 DS 12345 13 2 ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB
ns.secure 3600 A 192.0.2.98
dn 300 DNAME target
x.target 300 A 192.0.2.70
_sip._tcp 300 SRV 10 60 5060 sip
sip 300 A 192.0.2.60
"#;

pub fn example() -> ZoneSet {
    zones(&[("example.", EXAMPLE)])
}
