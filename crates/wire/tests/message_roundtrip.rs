//! Property tests: messages built → written → read back are equal; the linear compressor
//! compresses as well as the naive quadratic one; the reader never panics.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod support;

use proptest::prelude::*;
use support::naive::NaiveCompressor;
use tern_wire::message::{
    Compression, CompressionTable, Flags, MessageReader, MessageWriter, Section, MAX_RDATA_LEN,
};
use tern_wire::rdata::Field;
use tern_wire::{Class, Dname, Name, NameBuilder, Rtype};

/// A record to write.
#[derive(Debug, Clone)]
struct Rec {
    section: Section,
    owner: Name,
    rtype: Rtype,
    ttl: u32,
    rdata: Vec<u8>,
}

#[derive(Debug, Clone)]
struct Msg {
    id: u16,
    flags: u16,
    questions: Vec<(Name, Rtype)>,
    records: Vec<Rec>,
}

fn arb_name() -> impl Strategy<Value = Name> {
    let label = prop::sample::select(vec![
        &b"www"[..],
        b"WWW",
        b"mail",
        b"example",
        b"Example",
        b"com",
        b"COM",
        b"org",
        b"a",
        b"b",
        b"xn--bcher-kva",
        b"\x00\xff",
        b"*",
        b"ns1",
    ]);
    prop::collection::vec(label, 0..6).prop_map(|labels| {
        let mut b = NameBuilder::new();
        for l in labels {
            b.push_label(l).unwrap();
        }
        b.finish().unwrap().to_name()
    })
}

fn arb_rdata() -> impl Strategy<Value = (Rtype, Vec<u8>)> {
    let wire = |parts: Vec<Vec<u8>>| parts.concat();
    prop_oneof![
        any::<[u8; 4]>().prop_map(|a| (Rtype::A, a.to_vec())),
        arb_name().prop_map(|n| (Rtype::NS, n.as_wire().to_vec())),
        arb_name().prop_map(|n| (Rtype::CNAME, n.as_wire().to_vec())),
        (any::<u16>(), arb_name()).prop_map(move |(p, n)| (
            Rtype::MX,
            wire(vec![p.to_be_bytes().to_vec(), n.as_wire().to_vec()])
        )),
        (arb_name(), arb_name(), any::<[u8; 20]>()).prop_map(move |(m, r, t)| {
            (Rtype::SOA, wire(vec![m.as_wire().to_vec(), r.as_wire().to_vec(), t.to_vec()]))
        }),
        (any::<[u8; 6]>(), arb_name())
            .prop_map(move |(f, n)| (Rtype::SRV, wire(vec![f.to_vec(), n.as_wire().to_vec()]))),
        (arb_name(), prop::collection::vec(any::<u8>(), 0..8))
            .prop_map(move |(n, b)| (Rtype::NSEC, wire(vec![n.as_wire().to_vec(), b]))),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(|b| (Rtype(65280), b)),
        Just((Rtype::NS, Vec::new())),
    ]
}

fn arb_msg() -> impl Strategy<Value = Msg> {
    let section =
        prop::sample::select(vec![Section::Answer, Section::Authority, Section::Additional]);
    let record = (section, arb_name(), arb_rdata(), any::<u32>()).prop_map(
        |(section, owner, (rtype, rdata), ttl)| Rec { section, owner, rtype, ttl, rdata },
    );
    (
        any::<u16>(),
        any::<u16>(),
        prop::collection::vec((arb_name(), any::<u16>().prop_map(Rtype)), 0..3),
        prop::collection::vec(record, 0..12),
    )
        .prop_map(|(id, flags, questions, mut records)| {
            records.sort_by_key(|r| r.section);
            // OPT and TSIG are placement-checked by the reader; keep generated types away.
            records.retain(|r| r.rtype != Rtype::OPT && r.rtype != Rtype::TSIG);
            Msg { id, flags, questions, records }
        })
}

fn write(msg: &Msg, buf: &mut [u8], mode: Compression) -> usize {
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(buf, 65535, &mut table).unwrap();
    w.set_compression(mode);
    w.set_id(msg.id);
    w.set_flags(Flags(msg.flags));
    for (name, qtype) in &msg.questions {
        w.push_question(name, *qtype, Class::IN).unwrap();
    }
    for r in &msg.records {
        w.push_record(r.section, &r.owner, r.rtype, Class::IN, r.ttl, &r.rdata).unwrap();
    }
    w.len()
}

/// RDATA with its names lower-cased (compression may point to another spelling).
fn fold_names(rtype: Rtype, rdata: &[u8]) -> Vec<u8> {
    if rdata.is_empty() || !rtype.shape().has_names() {
        return rdata.to_vec();
    }
    let mut out = Vec::new();
    let mut pos = 0;
    for field in rtype.shape().fields {
        match *field {
            Field::Name => {
                let (n, len) = Dname::from_wire_prefix(&rdata[pos..]).unwrap();
                n.write_lowercase(&mut out);
                pos += len;
            }
            Field::Bytes(k) => {
                out.extend_from_slice(&rdata[pos..pos + usize::from(k)]);
                pos += usize::from(k);
            }
            Field::CharString => {
                let len = 1 + usize::from(rdata[pos]);
                out.extend_from_slice(&rdata[pos..pos + len]);
                pos += len;
            }
            Field::Rest => {
                out.extend_from_slice(&rdata[pos..]);
                pos = rdata.len();
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn write_then_read_is_identity(msg in arb_msg(), anchor in any::<bool>()) {
        let mut buf = vec![0u8; 65535];
        let mode = if anchor { Compression::Anchor } else { Compression::Table };
        let len = write(&msg, &mut buf, mode);
        let wire = &buf[..len];
        let mut reader = MessageReader::new(wire).unwrap();
        prop_assert_eq!(reader.header().id, msg.id);
        prop_assert_eq!(reader.header().flags.0, msg.flags);
        for (name, qtype) in &msg.questions {
            let q = reader.question().unwrap().unwrap();
            prop_assert_eq!(&q.name.to_name(), name);
            prop_assert_eq!(q.qtype, *qtype);
        }
        let mut scratch = vec![0u8; MAX_RDATA_LEN];
        for r in &msg.records {
            let got = reader.record(&mut scratch).unwrap().unwrap();
            prop_assert_eq!(got.section, r.section);
            prop_assert_eq!(&got.owner.to_name(), &r.owner);
            prop_assert_eq!((got.rtype, got.class, got.ttl), (r.rtype, Class::IN, r.ttl));
            // Types that are not decompressed keep their bytes exactly.
            if got.rtype.shape().decompress {
                prop_assert_eq!(fold_names(got.rtype, got.rdata), fold_names(r.rtype, &r.rdata));
            } else {
                prop_assert_eq!(got.rdata, &r.rdata[..]);
            }
        }
        prop_assert!(reader.record(&mut scratch).unwrap().is_none());
        prop_assert!(reader.is_done());
    }

    #[test]
    fn names_compress_as_well_as_the_naive_way(names in prop::collection::vec(arb_name(), 1..60)) {
        let mut buf = vec![0u8; 65535];
        let mut table = CompressionTable::new();
        let mut w = MessageWriter::new(&mut buf, 65535, &mut table).unwrap();
        let mut naive = NaiveCompressor::new();
        for n in &names {
            w.write_name(n, true).unwrap();
            naive.write_name(n);
        }
        prop_assert_eq!(w.len(), naive.msg.len());
        // Every name decodes back (case-insensitively) from where it was written.
        let written = w.as_bytes().to_vec();
        let mut pos = 12;
        for n in &names {
            let (got, next) = tern_wire::message::read_name(&written, pos).unwrap();
            prop_assert!(got.eq_ignore_case(n));
            pos = next;
        }
    }

    #[test]
    fn reader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut scratch = vec![0u8; 1024];
        if let Ok(mut reader) = MessageReader::new(&bytes) {
            while let Ok(Some(_)) = reader.question() {}
            while let Ok(Some(_)) = reader.record(&mut scratch) {}
        }
    }

    #[test]
    fn mutated_messages_parse_or_fail_cleanly(msg in arb_msg(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let mut buf = vec![0u8; 65535];
        let len = write(&msg, &mut buf, Compression::Table);
        let mut wire = buf[..len].to_vec();
        for (at, byte) in flips {
            let i = at.index(wire.len());
            wire[i] = byte;
        }
        let mut scratch = vec![0u8; MAX_RDATA_LEN];
        if let Ok(mut reader) = MessageReader::new(&wire) {
            loop {
                match reader.record(&mut scratch) {
                    Ok(Some(r)) => prop_assert!(r.end <= wire.len()),
                    Ok(None) => break,
                    Err(e) => {
                        prop_assert!(e.offset().is_some_and(|o| o <= wire.len()), "{e:?}");
                        break;
                    }
                }
            }
        }
    }
}
