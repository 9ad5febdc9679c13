//! Message reader and writer tests with literal wire bytes.

use super::*;
use crate::error::Error;
use crate::name::Name;
use crate::types::{Class, Opcode, Rcode, Rtype};

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

/// A query for `www.example.com. A` with ID 0x1234, RD, and an OPT record (payload 1232,
/// DO) carrying a client COOKIE.
const QUERY: &[u8] = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01\
\x03www\x07example\x03com\x00\x00\x01\x00\x01\
\x00\x00\x29\x04\xd0\x00\x00\x80\x00\x00\x0c\x00\x0a\x00\x08\x01\x02\x03\x04\x05\x06\x07\x08";

/// A response: question `example.com. MX`, answer `example.com. 300 MX 10 mail.example.com.`
/// (exchange compressed to the question), authority `example.com. NS ns.example.com.`.
const RESPONSE: &[u8] = b"\xab\xcd\x84\x00\x00\x01\x00\x01\x00\x01\x00\x00\
\x07example\x03com\x00\x00\x0f\x00\x01\
\xc0\x0c\x00\x0f\x00\x01\x00\x00\x01\x2c\x00\x09\x00\x0a\x04mail\xc0\x0c\
\xc0\x0c\x00\x02\x00\x01\x00\x00\x01\x2c\x00\x05\x02ns\xc0\x0c";

/// A record reduced to what the tests compare.
type Rr = (Section, String, Rtype, Vec<u8>);

fn read_all(msg: &[u8]) -> Result<(Vec<Question>, Vec<Rr>), Error> {
    let mut reader = MessageReader::new(msg)?;
    let mut questions = Vec::new();
    while let Some(q) = reader.question()? {
        questions.push(q);
    }
    let mut records = Vec::new();
    let mut scratch = [0u8; MAX_RDATA_LEN];
    while let Some(r) = reader.record(&mut scratch)? {
        records.push((r.section, r.owner.to_string(), r.rtype, r.rdata.to_vec()));
    }
    assert!(reader.is_done());
    Ok((questions, records))
}

#[test]
fn reads_a_query_with_edns() {
    let mut reader = MessageReader::new(QUERY).unwrap();
    let h = *reader.header();
    assert_eq!(h.id, 0x1234);
    assert!(h.flags.has(Flags::RD) && !h.flags.has(Flags::QR));
    assert_eq!(h.flags.opcode(), Opcode::QUERY);
    let q = reader.question().unwrap().unwrap();
    assert_eq!(q.name.to_string(), "www.example.com.");
    assert_eq!((q.qtype, q.qclass), (Rtype::A, Class::IN));
    assert_eq!((q.offset, q.end), (12, 33));
    assert_eq!(&QUERY[q.offset..q.end - 4], q.name.as_wire());
    assert!(reader.question().unwrap().is_none());
    let mut scratch = [0u8; 64];
    let opt = reader.record(&mut scratch).unwrap().unwrap();
    assert_eq!(
        (opt.section, opt.rtype, opt.offset, opt.rdata_offset),
        (Section::Additional, Rtype::OPT, 33, 44)
    );
    assert!(reader.record(&mut scratch).unwrap().is_none());
    assert!(reader.is_done());
    assert_eq!(reader.section_offset(Section::Answer), Some(33));
    assert_eq!(reader.section_offset(Section::Additional), Some(33));
    assert_eq!(reader.opt_offset(), Some(33));
    let edns = reader.edns().unwrap();
    assert_eq!(edns.udp_payload_size(), 1232);
    assert!(edns.dnssec_ok());
    let cookie = edns.option(crate::edns::OptionCode::COOKIE).unwrap();
    assert_eq!(cookie.offset, 48);
    assert_eq!(cookie.cookie().unwrap().client, [1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn reads_and_expands_a_compressed_response() {
    let (questions, records) = read_all(RESPONSE).unwrap();
    assert_eq!(questions.len(), 1);
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].0, Section::Answer);
    assert_eq!(records[0].1, "example.com.");
    assert_eq!(records[0].3, b"\x00\x0a\x04mail\x07example\x03com\x00");
    assert_eq!(records[1].0, Section::Authority);
    assert_eq!(records[1].3, b"\x02ns\x07example\x03com\x00");
}

#[test]
fn rdata_of_non_decompressed_types_is_a_slice() {
    // An SRV whose target is a pointer: RFC 3597 §4 lets receivers decompress it.
    let mut msg = RESPONSE[..12].to_vec();
    msg[4..12].copy_from_slice(&[0, 1, 0, 1, 0, 0, 0, 0]);
    msg.extend_from_slice(b"\x07example\x03com\x00\x00\x21\x00\x01");
    msg.extend_from_slice(
        b"\xc0\x0c\x00\x21\x00\x01\x00\x00\x00\x3c\x00\x08\x00\x01\x00\x02\x00\x35\xc0\x0c",
    );
    let (_, records) = read_all(&msg).unwrap();
    assert_eq!(records[0].3, b"\x00\x01\x00\x02\x00\x35\x07example\x03com\x00");
    // An NSEC (never compressed) keeps its bytes as they are, pointer and all.
    let mut msg = RESPONSE[..12].to_vec();
    msg[4..12].copy_from_slice(&[0, 1, 0, 1, 0, 0, 0, 0]);
    msg.extend_from_slice(b"\x07example\x03com\x00\x00\x2f\x00\x01");
    msg.extend_from_slice(b"\xc0\x0c\x00\x2f\x00\x01\x00\x00\x00\x3c\x00\x05\xc0\x0c\x00\x01\x40");
    let (_, records) = read_all(&msg).unwrap();
    assert_eq!(records[0].3, b"\xc0\x0c\x00\x01\x40");
}

#[test]
fn every_truncation_point_is_an_error() {
    for msg in [QUERY, RESPONSE] {
        for len in 0..msg.len() {
            let err = read_all(&msg[..len]).unwrap_err();
            assert!(
                matches!(err, Error::Truncated { .. } | Error::BadRdata { .. }),
                "length {len}: {err:?}"
            );
            assert!(err.offset().unwrap() <= len, "length {len}: {err:?}");
        }
        assert!(read_all(msg).is_ok());
    }
}

#[test]
fn trailing_bytes_after_the_last_section() {
    let mut msg = RESPONSE.to_vec();
    msg.push(0);
    assert_eq!(read_all(&msg).unwrap_err(), Error::TrailingData { offset: RESPONSE.len() });
    let mut header_only = b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
    assert!(MessageReader::new(&header_only).unwrap().is_done());
    header_only.push(1);
    assert_eq!(MessageReader::new(&header_only).unwrap_err(), Error::TrailingData { offset: 12 });
}

#[test]
fn bad_names_in_messages() {
    // QNAME is a pointer to itself, a forward pointer, into the header (allowed: it is
    // below), a 0x40 label.
    let header = b"\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00";
    let with = |name: &[u8]| {
        let mut m = header.to_vec();
        m.extend_from_slice(name);
        m.extend_from_slice(b"\x00\x01\x00\x01");
        read_all(&m)
    };
    assert_eq!(with(b"\xc0\x0c").unwrap_err(), Error::BadPointer { offset: 12 });
    assert_eq!(with(b"\xc0\x0e\x00").unwrap_err(), Error::BadPointer { offset: 12 });
    assert_eq!(with(b"\x01a\x80").unwrap_err(), Error::BadLabelType { offset: 14 });
    // A pointer to offset 11 reads the header's last byte (0: the root) - legal.
    assert_eq!(with(b"\x01a\xc0\x0b").unwrap().0[0].name.to_string(), "a.");
    // A pointer to offset 5 reads "\x01\x00": label "\0" then the root.
    assert_eq!(with(b"\xc0\x05").unwrap().0[0].name.as_wire(), b"\x01\x00\x00");
}

/// Builds a message with `answers` answer records and the given additional records.
fn with_additional(records: &[&[u8]], counts: [u16; 4]) -> Vec<u8> {
    let mut m = vec![0u8; 12];
    for (i, c) in counts.iter().enumerate() {
        m[4 + 2 * i..6 + 2 * i].copy_from_slice(&c.to_be_bytes());
    }
    for r in records {
        m.extend_from_slice(r);
    }
    m
}

const OPT: &[u8] = b"\x00\x00\x29\x10\x00\x00\x00\x00\x00\x00\x00";
const A: &[u8] = b"\x00\x00\x01\x00\x01\x00\x00\x00\x00\x00\x04\x7f\x00\x00\x01";
const TSIG: &[u8] = b"\x03key\x00\x00\xfa\x00\xff\x00\x00\x00\x00\x00\x1d\
\x0bhmac-sha256\x00\
\x00\x00\x00\x00\x00\x00\x01\x2c\x00\x00\x00\x00\x00\x00\x00\x00";

#[test]
fn opt_placement_rules() {
    assert!(read_all(&with_additional(&[A, OPT], [0, 0, 0, 2])).is_ok());
    let two = read_all(&with_additional(&[OPT, OPT], [0, 0, 0, 2])).unwrap_err();
    assert_eq!(two, Error::BadOpt { offset: 23, reason: "more than one OPT record" });
    let in_answer = read_all(&with_additional(&[OPT], [0, 1, 0, 0])).unwrap_err();
    assert_eq!(
        in_answer,
        Error::BadOpt { offset: 12, reason: "OPT outside the additional section" }
    );
    let owner = b"\x01a\x00\x00\x29\x10\x00\x00\x00\x00\x00\x00\x00";
    let err = read_all(&with_additional(&[owner], [0, 0, 0, 1])).unwrap_err();
    assert_eq!(err, Error::BadOpt { offset: 12, reason: "OPT owner is not the root" });
    // Option framing: an option claiming 4 bytes with only 2 present.
    let bad = b"\x00\x00\x29\x10\x00\x00\x00\x00\x00\x00\x06\x00\x0a\x00\x04\x01\x02";
    let err = read_all(&with_additional(&[bad], [0, 0, 0, 1])).unwrap_err();
    assert_eq!(err, Error::BadOpt { offset: 23, reason: "option runs past the OPT RDATA" });
}

#[test]
fn tsig_must_be_last() {
    let ok = with_additional(&[A, OPT, TSIG], [0, 0, 0, 3]);
    let mut reader = MessageReader::new(&ok).unwrap();
    reader.finish().unwrap();
    assert_eq!(reader.tsig_offset(), Some(12 + A.len() + OPT.len()));
    let err = read_all(&with_additional(&[TSIG, A], [0, 0, 0, 2])).unwrap_err();
    assert_eq!(err, Error::BadTsig { offset: 12, reason: "TSIG is not the last record" });
    let err = read_all(&with_additional(&[TSIG, A], [0, 1, 0, 1])).unwrap_err();
    assert_eq!(err, Error::BadTsig { offset: 12, reason: "TSIG is not the last record" });
}

#[test]
fn skipping_validates_without_a_buffer() {
    let mut reader = MessageReader::new(RESPONSE).unwrap();
    reader.skip_to(Section::Authority).unwrap();
    assert_eq!(reader.section(), Some(Section::Authority));
    assert_eq!(reader.section_offset(Section::Answer), Some(29));
    let mut scratch = [0u8; 32];
    let ns = reader.record(&mut scratch).unwrap().unwrap();
    assert_eq!(ns.rtype, Rtype::NS);
    assert!(reader.record(&mut scratch).unwrap().is_none());
    // A compressed name in skipped RDATA is still checked.
    let mut broken = RESPONSE.to_vec();
    let at = broken.len() - 1;
    broken[at] = 0x50; // NS target pointer now points forward
    let mut reader = MessageReader::new(&broken).unwrap();
    assert!(matches!(reader.finish(), Err(Error::BadPointer { .. })));
}

fn writer_bytes(f: impl FnOnce(&mut MessageWriter<'_>)) -> Vec<u8> {
    let mut buf = [0u8; 4096];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 4096, &mut table).unwrap();
    f(&mut w);
    w.finish().to_vec()
}

#[test]
fn writes_rfc1035_compression_example() {
    // F.ISI.ARPA, FOO.F.ISI.ARPA and ARPA as owners (RFC 1035 §4.1.4's names).
    let msg = writer_bytes(|w| {
        for n in ["F.ISI.ARPA.", "FOO.F.ISI.ARPA.", "ARPA.", "."] {
            w.push_record(Section::Answer, &name(n), Rtype::A, Class::IN, 0, &[1, 2, 3, 4])
                .unwrap();
        }
    });
    let rr = |owner: &[u8]| {
        let mut v = owner.to_vec();
        v.extend_from_slice(b"\x00\x01\x00\x01\x00\x00\x00\x00\x00\x04\x01\x02\x03\x04");
        v
    };
    let mut expected = b"\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00".to_vec();
    expected.extend(rr(b"\x01F\x03ISI\x04ARPA\x00")); // at 12
    expected.extend(rr(b"\x03FOO\xc0\x0c")); // points to F.ISI.ARPA
    expected.extend(rr(b"\xc0\x12")); // ARPA at 12 + 6
    expected.extend(rr(b"\x00")); // the root is never a pointer
    assert_eq!(msg, expected);
    let (_, records) = read_all(&msg).unwrap();
    let owners: Vec<_> = records.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(owners, ["F.ISI.ARPA.", "FOO.F.ISI.ARPA.", "ARPA.", "."]);
}

#[test]
fn compression_ignores_case_and_respects_rfc3597() {
    let msg = writer_bytes(|w| {
        w.push_question(&name("Example.COM."), Rtype::MX, Class::IN).unwrap();
        let mx = b"\x00\x0a\x04mail\x07example\x03com\x00";
        w.push_record(Section::Answer, &name("example.com."), Rtype::MX, Class::IN, 60, mx)
            .unwrap();
        // SRV targets are never compressed (RFC 2782, RFC 3597 §4).
        let srv = b"\x00\x01\x00\x02\x00\x35\x04mail\x07example\x03com\x00";
        w.push_record(
            Section::Additional,
            &name("_x.example.com."),
            Rtype::SRV,
            Class::IN,
            60,
            srv,
        )
        .unwrap();
    });
    let mut expected = b"\x00\x00\x00\x00\x00\x01\x00\x01\x00\x00\x00\x01".to_vec();
    expected.extend_from_slice(b"\x07Example\x03COM\x00\x00\x0f\x00\x01");
    expected.extend_from_slice(
        b"\xc0\x0c\x00\x0f\x00\x01\x00\x00\x00\x3c\x00\x09\x00\x0a\x04mail\xc0\x0c",
    );
    expected.extend_from_slice(b"\x02_x\xc0\x0c\x00\x21\x00\x01\x00\x00\x00\x3c\x00\x18");
    expected.extend_from_slice(b"\x00\x01\x00\x02\x00\x35\x04mail\x07example\x03com\x00");
    assert_eq!(msg, expected);
}

#[test]
fn rollback_restores_length_counts_and_targets() {
    let mut buf = [0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.push_question(&name("a.example."), Rtype::A, Class::IN).unwrap();
    let mark = w.mark();
    let before = w.as_bytes().to_vec();
    w.push_record(Section::Answer, &name("zzz.other."), Rtype::A, Class::IN, 0, &[1; 4]).unwrap();
    w.push_record(Section::Authority, &name("other."), Rtype::A, Class::IN, 0, &[1; 4]).unwrap();
    w.rollback(mark);
    assert_eq!(w.as_bytes(), &before[..]);
    assert_eq!(w.count(Section::Answer), 0);
    // "other." was a target before the rollback; it must not be pointed to now.
    w.push_record(Section::Answer, &name("x.other."), Rtype::A, Class::IN, 0, &[2; 4]).unwrap();
    w.push_record(Section::Answer, &name("other."), Rtype::A, Class::IN, 0, &[3; 4]).unwrap();
    let msg = w.finish().to_vec();
    let (_, records) = read_all(&msg).unwrap();
    let owners: Vec<_> = records.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(owners, ["x.other.", "other."]);
    // The second "other." is a pointer into the first record's owner.
    assert_eq!(&msg[msg.len() - 16..msg.len() - 14], b"\xc0\x1d");
}

#[test]
fn no_space_leaves_the_message_unchanged() {
    let mut buf = [0u8; 64];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 60, &mut table).unwrap();
    w.push_question(&name("example."), Rtype::TXT, Class::IN).unwrap();
    let before = w.as_bytes().to_vec();
    let big = [7u8; 40];
    let err = w.push_record(Section::Answer, &name("example."), Rtype::TXT, Class::IN, 0, &big);
    assert_eq!(err, Err(Error::NoSpace));
    assert_eq!(w.as_bytes(), &before[..]);
    // Reservation: ordinary records cannot use it, OPT can.
    w.reserve(11).unwrap();
    let fits = [7u8; 60 - 25 - 12 - 11 - 1];
    assert_eq!(
        w.push_record(Section::Answer, &name("example."), Rtype::TXT, Class::IN, 0, &[7u8; 13]),
        Err(Error::NoSpace)
    );
    w.push_record(Section::Answer, &name("example."), Rtype::TXT, Class::IN, 0, &fits[..0])
        .unwrap();
    assert_eq!(w.len(), 25 + 12);
    w.push_opt(1232, 0, 0).unwrap();
    assert_eq!(w.len(), 48);
    assert_eq!(w.header().counts, [1, 1, 0, 1]);
}

#[test]
fn sections_in_order_and_rcode_split() {
    let mut buf = [0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(0xbeef);
    w.set_flag(Flags::QR | Flags::AA, true);
    w.push_record(Section::Authority, &name("x."), Rtype::A, Class::IN, 0, &[0; 4]).unwrap();
    let err = w.push_record(Section::Answer, &name("x."), Rtype::A, Class::IN, 0, &[0; 4]);
    assert!(matches!(err, Err(Error::Malformed { .. })));
    assert!(w.push_question(&name("x."), Rtype::A, Class::IN).is_err());
    w.set_rcode(Rcode::BADCOOKIE);
    w.push_opt(4096, 0, crate::edns::Edns::DO).unwrap();
    w.set_rcode(Rcode::BADVERS);
    let msg = w.finish().to_vec();
    let mut reader = MessageReader::new(&msg).unwrap();
    reader.finish().unwrap();
    let h = reader.header();
    assert_eq!(h.id, 0xbeef);
    assert!(h.flags.has(Flags::QR | Flags::AA));
    assert_eq!(reader.edns().unwrap().rcode(h.flags), Rcode::BADVERS);
    assert!(reader.edns().unwrap().dnssec_ok());
}

#[test]
fn names_past_0x4000_are_not_targets() {
    let mut buf = vec![0u8; 40000];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 40000, &mut table).unwrap();
    let filler = [0u8; 16500];
    w.push_record(Section::Answer, &name("."), Rtype::NULL, Class::IN, 0, &filler[..16400])
        .unwrap();
    assert!(w.len() > 0x4000);
    w.push_record(Section::Answer, &name("late.example."), Rtype::A, Class::IN, 0, &[0; 4])
        .unwrap();
    let at = w.len();
    w.push_record(Section::Answer, &name("late.example."), Rtype::A, Class::IN, 0, &[0; 4])
        .unwrap();
    // Written in full again: the first copy is beyond pointer range.
    assert_eq!(&w.as_bytes()[at..at + 14], b"\x04late\x07example\x00");
    let msg = w.finish().to_vec();
    assert!(read_all(&msg).is_ok());
}

/// Writes a referral-like response in the given compression mode.
fn referral(mode: super::Compression) -> Vec<u8> {
    let mut buf = vec![0u8; 1232];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 1232, &mut table).unwrap();
    w.set_compression(mode);
    w.push_question(&name("www.Foo.example."), Rtype::A, Class::IN).unwrap();
    for target in ["ns1.foo.example.", "ns.other.net.", "ns2.foo.example."] {
        let rdata = name(target).as_wire().to_vec();
        w.push_record(Section::Authority, &name("foo.example."), Rtype::NS, Class::IN, 60, &rdata)
            .unwrap();
    }
    let soa = [name("ns1.example.").as_wire(), name("hm.example.").as_wire(), &[0; 20]].concat();
    w.push_record(Section::Authority, &name("example."), Rtype::SOA, Class::IN, 60, &soa).unwrap();
    w.push_record(Section::Additional, &name("ns1.foo.example."), Rtype::A, Class::IN, 60, &[1; 4])
        .unwrap();
    w.finish().to_vec()
}

#[test]
fn anchor_mode_reads_back_like_table_mode() {
    let table = read_all(&referral(super::Compression::Table)).unwrap();
    let anchor_msg = referral(super::Compression::Anchor);
    let anchor = read_all(&anchor_msg).unwrap();
    assert_eq!(anchor, table);
    // Names sharing the query name's tail point into the question.
    assert!(anchor_msg.len() < 200, "{} bytes", anchor_msg.len());
    let ns1 = b"\x03ns1\xc0\x10"; // "ns1" + pointer to "Foo.example." at 16
    assert!(anchor_msg.windows(ns1.len()).any(|w| w == ns1));
}

#[test]
fn prepared_records_get_their_pointers_and_fit_or_are_refused() {
    // "ns1" + pointer, as NegativeSoa prepares an SOA's MNAME; owner is a slot too.
    let record = b"\x00\x00\x00\x02\x00\x01\x00\x00\x0e\x10\x00\x06\x03ns1\x00\x00";
    let mut buf = [0u8; 64];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 60, &mut table).unwrap();
    w.push_question(&name("x.Example."), Rtype::A, Class::IN).unwrap();
    // The apex "Example." is at 12 + 2 in the question.
    assert_eq!(w.push_prepared(Section::Authority, (record, b""), &[0, 16], 14), Ok(Some(14)));
    // The same record in two pieces is written the same.
    let (head, tail) = record.split_at(13);
    let mut buf2 = [0u8; 64];
    let mut table2 = CompressionTable::new();
    let mut w2 = MessageWriter::new(&mut buf2, 60, &mut table2).unwrap();
    w2.push_question(&name("x.Example."), Rtype::A, Class::IN).unwrap();
    assert_eq!(w2.push_prepared(Section::Authority, (head, tail), &[0, 16], 14), Ok(Some(14)));
    assert_eq!(w2.as_bytes(), w.as_bytes());
    assert_eq!(w.last_owner_at(), Some(14));
    // Out of bounds: a target past the end, a slot outside the record, no room.
    assert!(w.push_prepared(Section::Authority, (record, b""), &[0], 60).is_err());
    let before = w.as_bytes().to_vec();
    assert!(w.push_prepared(Section::Authority, (record, b""), &[17], 14).is_err());
    assert_eq!(w.push_prepared(Section::Authority, (record, b""), &[0], 14), Err(Error::NoSpace));
    assert_eq!(w.as_bytes(), &before[..]);
    let msg = w.finish().to_vec();
    let (_, records) = read_all(&msg).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].1, "Example.");
    assert_eq!(records[0].2, Rtype::NS);
    assert_eq!(records[0].3, name("ns1.Example.").as_wire());
}

/// An NS RRset written with `push_rrset` (RDATA bytes) or `push_name_rrset` (names),
/// owner by name or at its place in the question, in the given compression mode; then
/// as much of it again as fits in `limit`; with where each target decodes from.
fn ns_rrset(
    mode: super::Compression,
    by_name: bool,
    owner_at: bool,
    limit: usize,
) -> (Vec<u8>, Vec<Option<std::num::NonZeroU16>>) {
    let targets = [name("ns1.foo.example."), name("ns.other.net."), name("NS2.Foo.example.")];
    let owner = name("foo.example.");
    let mut buf = vec![0u8; 1232];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, limit, &mut table).unwrap();
    w.set_compression(mode);
    w.push_question(&name("www.Foo.example."), Rtype::A, Class::IN).unwrap();
    let head = RrsetHead {
        owner: if owner_at { Owner::At(16) } else { Owner::Name(&owner) },
        rtype: Rtype::NS,
        class: Class::IN,
        ttl: 60,
    };
    let mut positions = Vec::new();
    for _ in 0..2 {
        let mut names_at = [None; 3];
        let written = if by_name {
            w.push_name_rrset(
                Section::Authority,
                &head,
                targets.iter().map(|n| &**n),
                &mut names_at,
            )
        } else {
            let rdatas = targets.iter().map(|n| n.as_wire());
            w.push_rrset(Section::Authority, &head, rdatas, &mut names_at)
        };
        if written.is_err() {
            assert_eq!(names_at, [None; 3]);
            break;
        }
        assert!(names_at.iter().all(Option::is_some), "{names_at:?}");
        positions.extend(names_at);
    }
    (w.finish().to_vec(), positions)
}

#[test]
fn name_rrsets_are_written_as_their_rdata_would_be() {
    use super::Compression::{Anchor, Table};
    for mode in [Anchor, Table] {
        for owner_at in [false, true] {
            for limit in [1232, 100, 40] {
                let by_name = ns_rrset(mode, true, owner_at, limit);
                assert_eq!(by_name, ns_rrset(mode, false, owner_at, limit), "{mode:?} {limit}");
                let (_, records) = read_all(&by_name.0).unwrap();
                let expect = match limit {
                    1232 => 6,
                    100 => 3,
                    _ => 0,
                };
                assert_eq!(records.len(), expect, "{mode:?} {owner_at} {limit}");
            }
        }
    }
}

/// Targets that are the question's name, the root, or nothing like it: written by name
/// with the owner in the question (in anchor mode, the anchored fast path), the bytes and
/// target positions are those of the RDATA written as it is.
#[test]
fn anchored_name_records_match_the_rdata_path() {
    use super::Compression::{Anchor, Table};
    let targets = [name("WWW.foo.example."), name("."), name("a.b.c."), name("x.EXAMPLE.")];
    let write = |mode, by_name: bool| {
        let mut buf = vec![0u8; 512];
        let mut table = CompressionTable::new();
        let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
        w.set_compression(mode);
        w.push_question(&name("www.Foo.example."), Rtype::NS, Class::IN).unwrap();
        let head = RrsetHead { owner: Owner::At(12), rtype: Rtype::NS, class: Class::IN, ttl: 7 };
        let mut names_at = [None; 4];
        let written = if by_name {
            let names = targets.iter().map(|n| &**n);
            w.push_name_rrset(Section::Answer, &head, names, &mut names_at)
        } else {
            let rdatas = targets.iter().map(|n| n.as_wire());
            w.push_rrset(Section::Answer, &head, rdatas, &mut names_at)
        };
        (written, names_at.map(|at| at.map(u16::from)), w.finish().to_vec())
    };
    for mode in [Anchor, Table] {
        let by_name = write(mode, true);
        assert_eq!(by_name, write(mode, false), "{mode:?}");
        let (_, records) = read_all(&by_name.2).unwrap();
        let rdatas: Vec<_> = records.iter().map(|r| r.3.to_ascii_lowercase()).collect();
        let expect: Vec<_> = targets.iter().map(|t| t.as_wire().to_ascii_lowercase()).collect();
        assert_eq!(rdatas, expect, "{mode:?}");
    }
    let (_, names_at, _) = write(Anchor, true);
    assert_eq!(names_at[0], Some(12), "the question's name is a pointer to it");
    assert_eq!(names_at[1], None, "the root is never pointed to");
}

#[test]
fn name_rrsets_only_for_types_whose_rdata_is_one_name() {
    let mut buf = [0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.push_question(&name("example."), Rtype::MX, Class::IN).unwrap();
    let target = name("mx.example.");
    for rtype in [Rtype::MX, Rtype::DNAME, Rtype::A] {
        let head = RrsetHead { owner: Owner::At(12), rtype, class: Class::IN, ttl: 60 };
        let refused = w.push_name_rrset(Section::Answer, &head, [&*target], &mut []);
        assert!(matches!(refused, Err(Error::Malformed { .. })), "{rtype}");
    }
    let head = RrsetHead { owner: Owner::At(12), rtype: Rtype::CNAME, class: Class::IN, ttl: 60 };
    assert_eq!(w.push_name_rrset(Section::Answer, &head, [&*target], &mut []), Ok(Some(12)));
    let msg = w.finish().to_vec();
    let (_, records) = read_all(&msg).unwrap();
    assert_eq!(records.len(), 1);
}

#[test]
fn plain_rrsets_are_the_same_bytes_with_or_without_name_positions() {
    let owner = name("Host.example.");
    let rdatas: [&[u8]; 3] = [&[192, 0, 2, 1], &[192, 0, 2, 2], &[192, 0, 2, 3]];
    let write = |owner: Owner<'_>, positions: bool, limit: usize| {
        let mut buf = vec![0u8; 512];
        let mut table = CompressionTable::new();
        let mut w = MessageWriter::new(&mut buf, limit, &mut table).unwrap();
        w.push_question(&name("host.example."), Rtype::A, Class::IN).unwrap();
        let head = RrsetHead { owner, rtype: Rtype::A, class: Class::IN, ttl: 300 };
        let mut names_at = [None; 3];
        let names_at: &mut [Option<std::num::NonZeroU16>] =
            if positions { &mut names_at } else { &mut [] };
        let written = w.push_rrset(Section::Answer, &head, rdatas, names_at);
        (written, w.finish().to_vec())
    };
    for owner in [Owner::At(12), Owner::Name(&owner)] {
        for limit in [512, 60, 30] {
            let (a, bytes) = write(owner, false, limit);
            assert_eq!((a, &bytes), (write(owner, true, limit).0, &write(owner, true, limit).1));
            let (_, records) = read_all(&bytes).unwrap();
            assert_eq!(records.len(), if limit == 512 { 3 } else { 0 }, "{owner:?} {limit}");
        }
    }
}

#[test]
fn signed_rrsets_are_the_rrset_then_its_signatures_all_or_nothing() {
    let owner = name("Host.example.");
    let rdatas: [&[u8]; 2] = [&[192, 0, 2, 1], &[192, 0, 2, 2]];
    let sigs: [&[u8]; 2] = [&[7; 40], &[8; 40]];
    let write = |combined: bool, owner: Owner<'_>, limit: usize| {
        let mut buf = vec![0u8; 512];
        let mut table = CompressionTable::new();
        let mut w = MessageWriter::new(&mut buf, limit, &mut table).unwrap();
        w.push_question(&name("host.example."), Rtype::A, Class::IN).unwrap();
        let head = RrsetHead { owner, rtype: Rtype::A, class: Class::IN, ttl: 300 };
        let before = w.as_bytes().to_vec();
        let written = if combined {
            w.push_signed_rrset(Section::Answer, &head, rdatas, &mut [], sigs)
        } else {
            let mark = w.mark();
            let both = w.push_rrset(Section::Answer, &head, rdatas, &mut []).and_then(|at| {
                let owner = at.map_or(owner, Owner::At);
                let sig_head = RrsetHead { owner, rtype: Rtype::RRSIG, ..head };
                w.push_rrset(Section::Answer, &sig_head, sigs, &mut []).map(|_| at)
            });
            if both.is_err() {
                w.rollback(mark);
            }
            both
        };
        if written.is_err() {
            assert_eq!(w.as_bytes(), &before[..], "nothing written");
        }
        (written, w.finish().to_vec())
    };
    for owner in [Owner::At(12), Owner::Name(&owner)] {
        for limit in [512, 100, 40] {
            let combined = write(true, owner, limit);
            assert_eq!(combined, write(false, owner, limit), "{owner:?} {limit}");
            let (_, records) = read_all(&combined.1).unwrap();
            assert_eq!(records.len(), if limit == 512 { 4 } else { 0 }, "{owner:?} {limit}");
        }
    }
}

#[test]
fn owners_under_a_name_already_written() {
    let mut buf = [0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.push_question(&name("www.Example."), Rtype::A, Class::IN).unwrap();
    // "Example." is at 12 + 4.
    let head = |owner| RrsetHead { owner, rtype: Rtype::TXT, class: Class::IN, ttl: 60 };
    for bad in [&b""[..], b"\x00", b"\x05ab", b"\x40"] {
        let refused =
            w.push_rrset(Section::Answer, &head(Owner::Under(bad, 16)), [&b"\x01x"[..]], &mut []);
        assert!(refused.is_err(), "{bad:?}");
    }
    let past_the_end = Owner::Under(b"\x01a", 400);
    assert!(w.push_rrset(Section::Answer, &head(past_the_end), [&b"\x01x"[..]], &mut []).is_err());
    let owner = Owner::Under(b"\x04hash\x01b", 16);
    let at = w.push_rrset(Section::Answer, &head(owner), [&b"\x01x"[..], b"\x01y"], &mut []);
    assert_eq!(at, Ok(Some(29)), "the first record's owner starts at the end of the question");
    let msg = w.finish().to_vec();
    let (_, records) = read_all(&msg).unwrap();
    assert_eq!(records.len(), 2);
    assert!(records.iter().all(|r| r.1 == "hash.b.Example."), "{records:?}");
}

#[test]
fn prepared_rrsets_are_the_bytes_of_signed_rrsets_under_a_name() {
    let label = b"\x20ak2lb2b0ag5lpnaen0kgcdcm4i7nmmq1";
    let rdatas: [&[u8]; 2] = [&[1, 0, 0, 0, 0, 20, 7], &[1, 1, 0, 0, 0, 20, 8]];
    let sigs: [&[u8]; 2] = [&[5; 60], &[6; 48]];
    let nsec3 = (Rtype::NSEC3, Class::IN, 3600);
    // Each way, with room and with too little: (what was returned, the message).
    let write = |prepared: bool, rdatas: &[&[u8]], sigs: &[&[u8]], limit: usize| {
        let mut buf = vec![0u8; 1024];
        let mut table = CompressionTable::new();
        let mut w = MessageWriter::new(&mut buf, limit, &mut table).unwrap();
        w.push_question(&name("nx.Example."), Rtype::A, Class::IN).unwrap();
        let before = w.as_bytes().to_vec();
        let written = if prepared {
            let p = PreparedRrset::new(label, nsec3, rdatas.iter().copied(), sigs.iter().copied());
            w.push_prepared_rrset(Section::Authority, &p.unwrap(), 15)
        } else {
            let head = RrsetHead {
                owner: Owner::Under(label, 15),
                rtype: nsec3.0,
                class: nsec3.1,
                ttl: nsec3.2,
            };
            w.push_signed_rrset(
                Section::Authority,
                &head,
                rdatas.iter().copied(),
                &mut [],
                sigs.iter().copied(),
            )
        };
        if written.is_err() {
            assert_eq!(w.as_bytes(), &before[..], "nothing written");
        }
        (written, w.finish().to_vec())
    };
    for (r, s) in [(1, 0), (1, 1), (1, 2), (2, 1)] {
        let (rdatas, sigs) = (&rdatas[..r], &sigs[..s]);
        for limit in [1024, 200, 120, 40] {
            let ours = write(true, rdatas, sigs, limit);
            assert_eq!(
                ours,
                write(false, rdatas, sigs, limit),
                "{r} records, {s} signatures, {limit}"
            );
        }
        let (at, msg) = write(true, rdatas, sigs, 1024);
        assert_eq!(at, Ok(Some(28)), "the owner starts after the question");
        let (_, records) = read_all(&msg).unwrap();
        assert_eq!(records.len(), r + s);
        assert!(records.iter().all(|rr| rr.1 == "ak2lb2b0ag5lpnaen0kgcdcm4i7nmmq1.Example."));
    }
}

#[test]
fn prepared_rrsets_refuse_bad_labels_and_targets() {
    let head = (Rtype::NSEC3, Class::IN, 60);
    for bad in [&b""[..], b"\x00", b"\x05ab", b"\x40", b"\x01a\x00"] {
        assert!(PreparedRrset::new(bad, head, [&b"x"[..]], []).is_none(), "{bad:?}");
    }
    assert!(PreparedRrset::new(b"\x01a", head, [], [&b"sig"[..]]).is_none(), "no records");
    let prepared = PreparedRrset::new(b"\x01a", head, [&b"x"[..]], []).unwrap();
    assert_eq!((prepared.count(), prepared.apex_slot(), prepared.owner_slots().count()), (1, 2, 0));
    let mut buf = [0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.push_question(&name("example."), Rtype::A, Class::IN).unwrap();
    for target in [0, 11, 400] {
        assert!(w.push_prepared_rrset(Section::Answer, &prepared, target).is_err(), "{target}");
    }
    assert_eq!(w.push_prepared_rrset(Section::Answer, &prepared, 12), Ok(Some(25)));
}

/// RDATA made of `shape`'s fields, each drawn from a few right and wrong forms (names
/// with bad label lengths, pointers, fields one byte short or long), or raw bytes.
fn rdata_like(shape: &crate::rdata::shape::Shape, mut next: impl FnMut() -> u32) -> Vec<u8> {
    use crate::rdata::shape::Field;
    let mut out = Vec::new();
    if next() % 8 == 0 {
        return (0..next() % 40).map(|_| next() as u8).collect();
    }
    for field in shape.fields {
        match *field {
            Field::Name => match next() % 6 {
                0 => out.extend_from_slice(&[0xC0, 12]), // to the owner: the root
                1 => out.extend_from_slice(&[70, b'x']),
                2 => out.extend_from_slice(&[2, b'n', b's']), // no root
                _ => {
                    for _ in 0..next() % 4 {
                        out.push(1 + (next() % 3) as u8);
                        out.extend((0..*out.last().unwrap()).map(|_| b'a' + (next() % 26) as u8));
                    }
                    out.push(0);
                }
            },
            Field::Bytes(n) => {
                let len = (usize::from(n) + (next() % 3) as usize).saturating_sub(1);
                out.extend((0..len).map(|_| next() as u8));
            }
            Field::CharString => {
                let len = (next() % 4) as u8;
                out.push(len + (next() % 2) as u8);
                out.extend((0..len).map(|_| next() as u8));
            }
            Field::Rest => out.extend((0..next() % 8).map(|_| next() as u8)),
        }
    }
    if next() % 6 == 0 {
        out.push(next() as u8);
    }
    out
}

#[test]
fn rdata_read_as_checked_passes_validation() {
    // Every type whose shape reads all its RDATA: what `record_in` marks as checked is
    // what `rdata::validate` accepts, so readers may skip the second walk.
    let types: Vec<Rtype> =
        (0..=u16::MAX).map(Rtype).filter(|t| t.shape().read_checks_all()).collect();
    assert!(types.len() >= 10 && types.contains(&Rtype::NS) && types.contains(&Rtype::SOA));
    let mut state = 0x2545_f491_u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let (mut checked, mut refused) = (0, 0);
    for &rtype in &types {
        for _ in 0..2000 {
            let rdata = rdata_like(rtype.shape(), &mut next);
            let mut msg = b"\0\0\x84\0\0\0\0\x01\0\0\0\0\0".to_vec();
            msg.extend_from_slice(&rtype.0.to_be_bytes());
            msg.extend_from_slice(&[0, 1, 0, 0, 0, 60]);
            msg.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
            msg.extend_from_slice(&rdata);
            let (mut owner, mut scratch) = (crate::NameBuilder::new(), [0u8; MAX_RDATA_LEN]);
            let Ok(mut reader) = MessageReader::new(&msg) else { continue };
            match reader.record_in(&mut owner, &mut scratch) {
                Ok(Some(r)) if r.rdata_checked => {
                    let valid = crate::rdata::validate(rtype, r.rdata);
                    assert!(valid.is_ok(), "{rtype} {rdata:02x?}: {valid:?}");
                    checked += 1;
                }
                _ => refused += 1,
            }
        }
    }
    assert!(checked > 1000 && refused > 1000, "checked {checked}, refused {refused}");
}
