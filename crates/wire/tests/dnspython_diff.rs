//! Differential test of `MessageReader` against dnspython (`dns.message.from_wire`).
//!
//! The same messages — hand-made, generated with `MessageWriter`, and generated then
//! mutated — go to both. Checked:
//! * valid messages: both accept, with equal header, questions, records and OPT;
//! * broken hand-made messages: both reject;
//! * mutated messages: the reader never rejects what dnspython accepts, and when both
//!   accept, the contents are equal. The documented differences are counted and printed:
//!   - dnspython decodes RDATA of every type it knows and rejects malformed fields; the
//!     reader only checks names (RDATA format is `rdata::validate`'s job, applied here
//!     too, but it knows fewer types than dnspython);
//!   - dnspython follows compression pointers in RDATA of types that must not be
//!     compressed (RRSIG, NSEC, DNAME, ... RFC 3597 §4); the reader returns those bytes as
//!     they are, where `rdata::validate` then rejects the pointer;
//!   - dnspython reads TTLs above 2^31-1 as 0 (RFC 2181 §8); the reader keeps them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod support;

use serde_json::{json, Value};
use support::oracle::{hex, unhex, Oracle};
use tern_wire::message::{
    CompressionTable, Flags, MessageReader, MessageWriter, Section, MAX_RDATA_LEN,
};
use tern_wire::{rdata, Class, Name, NameBuilder, Rtype};

/// What tern makes of a message, in the oracle's JSON shape.
fn tern_view(wire: &[u8]) -> Result<Value, String> {
    let mut reader = MessageReader::new(wire).map_err(|e| format!("{e:?}"))?;
    let mut questions = Vec::new();
    while let Some(q) = reader.question().map_err(|e| format!("{e:?}"))? {
        questions.push(json!([hex(q.name.as_wire()), q.qtype.0, q.qclass.0]));
    }
    let mut records = Vec::new();
    let mut opt = Value::Null;
    let mut scratch = vec![0u8; MAX_RDATA_LEN];
    while let Some(r) = reader.record(&mut scratch).map_err(|e| format!("{e:?}"))? {
        if r.rtype == Rtype::OPT {
            opt = json!([r.class.0, r.ttl, hex(r.rdata)]);
            continue;
        }
        let ttl = if r.ttl > 0x7FFF_FFFF { 0 } else { r.ttl };
        let section = r.section as u8;
        records.push(json!([
            section,
            hex(r.owner.as_wire()),
            r.rtype.0,
            r.class.0,
            ttl,
            hex(r.rdata)
        ]));
    }
    let h = reader.header();
    Ok(
        json!({"ok": true, "id": h.id, "flags": h.flags.0, "q": questions, "rr": records, "opt": opt}),
    )
}

/// RDATA format check on top of the reader (what a server would apply to UPDATE data).
fn tern_validates(view: &Value) -> bool {
    view["rr"].as_array().unwrap().iter().all(|r| {
        let rtype = Rtype(r[2].as_u64().unwrap() as u16);
        let data = unhex(r[5].as_str().unwrap());
        data.is_empty() && rtype.shape().has_names() || rdata::validate(rtype, &data).is_ok()
    })
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn random_name(rng: &mut Rng) -> Name {
    let labels: [&[u8]; 10] = [
        b"www",
        b"Mail",
        b"example",
        b"EXAMPLE",
        b"com",
        b"org",
        b"a",
        b"x-y",
        b"\x00.\xff",
        b"_srv",
    ];
    let mut b = NameBuilder::new();
    for _ in 0..rng.below(5) {
        let label: &[u8] = rng.pick::<&[u8]>(&labels);
        b.push_label(label).unwrap();
    }
    b.finish().unwrap().to_name()
}

fn random_rdata(rng: &mut Rng) -> (Rtype, Vec<u8>) {
    let n = |rng: &mut Rng| random_name(rng).as_wire().to_vec();
    match rng.below(11) {
        0 => (Rtype::A, rng.next().to_be_bytes()[..4].to_vec()),
        1 => (Rtype::AAAA, [rng.next().to_be_bytes(), rng.next().to_be_bytes()].concat()),
        2 => (Rtype::NS, n(rng)),
        3 => (Rtype::CNAME, n(rng)),
        4 => (Rtype::PTR, n(rng)),
        5 => (Rtype::MX, [vec![0, 10], n(rng)].concat()),
        6 => (
            Rtype::SOA,
            [n(rng), n(rng), rng.next().to_be_bytes().repeat(3)[..20].to_vec()].concat(),
        ),
        7 => (Rtype::SRV, [vec![0, 1, 0, 2, 0, 53], n(rng)].concat()),
        8 => (Rtype::TXT, b"\x05hello\x00\x03a b".to_vec()),
        9 => (Rtype::NSEC, [n(rng), b"\x00\x01\x40".to_vec()].concat()),
        _ => (Rtype(65280), rng.next().to_be_bytes()[..(rng.below(8) as usize)].to_vec()),
    }
}

fn random_message(rng: &mut Rng) -> Vec<u8> {
    let mut buf = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 65535, &mut table).unwrap();
    w.set_id(rng.next() as u16);
    // Opcode QUERY: dnspython reads UPDATE messages with other rules.
    w.set_flags(Flags(rng.next() as u16 & !0x7800 & !0x000F));
    for _ in 0..rng.below(3) {
        w.push_question(&random_name(rng), Rtype(rng.below(300) as u16), Class::IN).unwrap();
    }
    let sections = [Section::Answer, Section::Authority, Section::Additional];
    let mut picked: Vec<Section> = (0..rng.below(10)).map(|_| *rng.pick(&sections)).collect();
    picked.sort();
    for section in picked {
        let (rtype, data) = random_rdata(rng);
        let ttl = if rng.below(8) == 0 {
            0x8000_0000 | rng.next() as u32
        } else {
            rng.below(86400) as u32
        };
        w.push_record(section, &random_name(rng), rtype, Class::IN, ttl, &data).unwrap();
    }
    if rng.below(2) == 0 {
        let mut opt = w.push_opt(1232, 0, 0x8000).unwrap();
        opt.nsid(b"").unwrap();
        opt.cookie(&[1; 8], &[]).unwrap();
        opt.option(tern_wire::edns::OptionCode(65001), b"\x01\x02").unwrap();
    }
    w.finish().to_vec()
}

fn mutate(rng: &mut Rng, msg: &[u8]) -> Vec<u8> {
    let mut m = msg.to_vec();
    match rng.below(4) {
        0 => {
            let i = rng.below(m.len() as u64) as usize;
            m[i] = rng.next() as u8;
        }
        1 => m.truncate(rng.below(m.len() as u64) as usize),
        2 => {
            let i = rng.below(m.len() as u64 + 1) as usize;
            m.insert(i, rng.next() as u8);
        }
        _ => {
            // A pointer somewhere: the most interesting mutation for a decompressor.
            let i = 12 + rng.below(m.len().saturating_sub(13).max(1) as u64) as usize;
            if i + 1 < m.len() {
                m[i] = 0xC0 | (rng.below(4) as u8);
                m[i + 1] = rng.next() as u8;
            }
        }
    }
    m
}

/// Hand-made broken messages: both must reject.
fn broken() -> Vec<Vec<u8>> {
    let header = |qd: u8, an: u8, ar: u8| vec![0, 1, 0, 0, 0, qd, 0, an, 0, 0, 0, ar];
    let q = |name: &[u8]| [header(1, 0, 0), name.to_vec(), vec![0, 1, 0, 1]].concat();
    let opt = b"\x00\x00\x29\x10\x00\x00\x00\x00\x00\x00\x00".to_vec();
    let mut long = header(1, 0, 0);
    for _ in 0..5 {
        long.push(63);
        long.extend_from_slice(&[b'a'; 63]);
    }
    long.extend_from_slice(b"\x00\x00\x01\x00\x01");
    vec![
        q(b"\xc0\x0c"),                                                   // pointer to itself
        q(b"\xc0\x10\x00"),                                               // forward pointer
        q(b"\x01a\x40\x00"),                                              // label type 0x40
        q(b"\x01a\x80\x00"),                                              // label type 0x80
        q(b"\x03ab"),                                                     // truncated label
        [q(b"\x00"), vec![0]].concat(),                                   // trailing byte
        long,                                                             // name over 255 bytes
        [header(0, 0, 2), opt.clone(), opt.clone()].concat(),             // two OPT
        [header(0, 1, 0), opt.clone()].concat(), // OPT in the answer section
        [header(0, 0, 1), b"\x01a".to_vec(), opt[1..].to_vec()].concat(), // OPT owner not root
        b"\x00\x01\x00".to_vec(),                // short header
        [header(0, 1, 0), b"\x00\x00\x01\x00\x01\x00\x00\x00\x00\x00\x05\x01\x02".to_vec()]
            .concat(), // RDATA cut
    ]
}

#[test]
fn reader_agrees_with_dnspython() {
    let Some(mut oracle) = Oracle::start() else {
        return;
    };
    let mut ask = |wire: &[u8]| oracle.ask(json!({"op": "parse", "wire": hex(wire)}));

    for (i, msg) in broken().iter().enumerate() {
        let py = ask(msg);
        assert_eq!(py["ok"], false, "broken #{i}: dnspython accepted");
        assert!(tern_view(msg).is_err(), "broken #{i}: tern accepted");
    }

    let mut rng = Rng(0x7e57_5eed_0bad_cafe);
    let mut valid = 0;
    let mut mutated = Vec::new();
    for _ in 0..600 {
        let msg = random_message(&mut rng);
        let py = ask(&msg);
        let ours = tern_view(&msg).expect("tern rejects its own message");
        assert_eq!(py["ok"], true, "dnspython rejects {}: {py}", hex(&msg));
        assert!(tern_validates(&ours));
        assert_eq!(ours, py, "contents differ for {}", hex(&msg));
        valid += 1;
        for _ in 0..4 {
            mutated.push(mutate(&mut rng, &msg));
        }
    }

    let (mut agree, mut py_stricter, mut validate_stricter, mut py_decompressed) = (0, 0, 0, 0);
    for msg in &mutated {
        let py = ask(msg);
        let ours = tern_view(msg);
        match (&ours, py["ok"].as_bool().unwrap()) {
            (Err(e), true) => panic!("reader rejects ({e}) what dnspython accepts: {}", hex(msg)),
            (Err(_), false) => agree += 1,
            (Ok(_), false) => py_stricter += 1,
            (Ok(view), true) if view == &py => agree += 1,
            (Ok(view), true) if !tern_validates(view) => validate_stricter += 1,
            (Ok(view), true) => {
                // Only RDATA of types never decompressed may differ, dnspython's longer.
                assert_eq!(
                    view["rr"].as_array().unwrap().len(),
                    py["rr"].as_array().unwrap().len()
                );
                for (a, b) in
                    view["rr"].as_array().unwrap().iter().zip(py["rr"].as_array().unwrap())
                {
                    if a != b {
                        let rtype = Rtype(a[2].as_u64().unwrap() as u16);
                        assert!(
                            !rtype.shape().decompress && rtype.shape().has_names(),
                            "{a} vs {b}"
                        );
                    }
                }
                py_decompressed += 1;
            }
        }
    }
    eprintln!(
        "dnspython differential: {} broken both reject, {valid} valid equal; {} mutated: {agree} agree, \
         {py_stricter} rejected by dnspython only (RDATA decoding), {validate_stricter} accepted by \
         dnspython but failing rdata::validate, {py_decompressed} with pointers dnspython follows \
         in never-compressed RDATA",
        broken().len(),
        mutated.len()
    );
    assert!(agree * 2 > mutated.len());
}
