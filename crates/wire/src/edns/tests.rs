//! OPT record building and parsing tests.

use super::*;
use crate::message::{CompressionTable, MessageReader, MessageWriter, Section};
use crate::name::Name;
use crate::types::{Class, Rtype};

#[test]
fn opt_fields_from_the_record() {
    // Extended RCODE 1 (BADVERS with header 0), version 0, DO set, payload 4096.
    let edns = Edns::from_record(Class(4096), 0x0100_8000, b"").unwrap();
    assert_eq!(edns.extended_rcode, 1);
    assert_eq!(edns.version, 0);
    assert!(edns.dnssec_ok());
    assert_eq!(edns.rcode(crate::message::Flags(0)), Rcode::BADVERS);
    let small = Edns::from_record(Class(100), 0, b"").unwrap();
    assert_eq!(small.udp_payload_size(), 512);
    assert_eq!(small.udp_payload, 100);
}

#[test]
fn options_iterate_and_unknown_are_kept() {
    let rdata = b"\x00\x03\x00\x00\xfd\xe9\x00\x02\xab\xcd\x00\x0b\x00\x00";
    let edns = Edns::from_record(Class(1232), 0, rdata).unwrap();
    let options: Vec<_> = edns.options().map(|o| (o.code, o.data, o.offset)).collect();
    assert_eq!(
        options,
        [
            (OptionCode::NSID, &b""[..], 4),
            (OptionCode(65001), &b"\xab\xcd"[..], 8),
            (OptionCode::TCP_KEEPALIVE, &b""[..], 14),
        ]
    );
    assert_eq!(OptionCode(65001).to_string(), "OPT65001");
    assert_eq!(edns.option(OptionCode::TCP_KEEPALIVE).unwrap().tcp_keepalive().unwrap(), None);
    for bad in [&b"\x00\x03"[..], b"\x00\x03\x00\x01", b"\x00\x03\x00\x00\x00"] {
        assert!(matches!(Edns::from_record(Class(1232), 0, bad), Err(Error::BadOpt { .. })));
    }
}

#[test]
fn option_length_rules_report_offsets() {
    let option = |code: OptionCode, data: &'static [u8]| EdnsOption { code, data, offset: 100 };
    let keepalive = option(OptionCode::TCP_KEEPALIVE, b"\x00\x64");
    assert_eq!(keepalive.tcp_keepalive().unwrap(), Some(100));
    let err = option(OptionCode::TCP_KEEPALIVE, b"\x01").tcp_keepalive().unwrap_err();
    assert_eq!(err.offset(), Some(100));
    assert!(option(OptionCode::COOKIE, b"\x01\x02\x03").cookie().is_err());
    assert!(option(OptionCode::CLIENT_SUBNET, b"\x00\x01\x18\x00\xc0\x00")
        .client_subnet()
        .is_err());
    let ede = option(OptionCode::EXTENDED_ERROR, b"\x00\x0fblocked").extended_error().unwrap();
    assert_eq!((ede.code, ede.text), (EdeCode::BLOCKED, &b"blocked"[..]));
}

#[test]
fn build_and_read_back() {
    let mut buf = [0u8; 1232];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 1232, &mut table).unwrap();
    let qname: Name = "example.".parse().unwrap();
    w.push_question(&qname, Rtype::SOA, Class::IN).unwrap();
    {
        let mut opt = w.push_opt(1232, 0, Edns::DO).unwrap();
        opt.nsid(b"ns1").unwrap();
        opt.cookie(&[1; 8], &[2; 16]).unwrap();
        opt.tcp_keepalive(300).unwrap();
        opt.extended_error(EdeCode::NOT_AUTHORITATIVE, "not here").unwrap();
        assert!(opt.cookie(&[1; 8], &[2; 7]).is_err());
        // 12 header + 13 question + 11 OPT + 7 NSID + 28 COOKIE + 6 keepalive + 14 EDE + 4.
        assert_eq!(opt.pad_to_block(468, 0).unwrap(), Some(468 - 95));
    }
    assert!(w.push_opt(1232, 0, 0).is_err());
    let msg = w.finish().to_vec();
    assert_eq!(msg.len(), 468);
    let mut reader = MessageReader::new(&msg).unwrap();
    reader.finish().unwrap();
    let edns = reader.edns().unwrap();
    let codes: Vec<_> = edns.options().map(|o| o.code).collect();
    assert_eq!(
        codes,
        [
            OptionCode::NSID,
            OptionCode::COOKIE,
            OptionCode::TCP_KEEPALIVE,
            OptionCode::EXTENDED_ERROR,
            OptionCode::PADDING
        ]
    );
    let cookie = edns.option(OptionCode::COOKIE).unwrap().cookie().unwrap();
    assert_eq!((cookie.client, cookie.server), ([1; 8], &[2u8; 16][..]));
    let ede = edns.option(OptionCode::EXTENDED_ERROR).unwrap().extended_error().unwrap();
    assert_eq!(ede.text_str(), Some("not here"));
    assert_eq!(reader.header().count(Section::Additional), 1);
}

#[test]
fn padding_rules() {
    // RFC 8467 §4.1: pad to the next multiple of the block, header included.
    assert_eq!(padding_len(100, 128, 1232), Some(24));
    assert_eq!(padding_len(124, 128, 1232), Some(0));
    assert_eq!(padding_len(125, 128, 1232), Some(127));
    // Never past the limit; nothing when the option header does not fit.
    assert_eq!(padding_len(500, 468, 520), Some(16));
    assert_eq!(padding_len(510, 468, 512), None);
    assert_eq!(padding_len(100, 0, 512), Some(0));
}

#[test]
fn opt_needs_room_even_with_reserve() {
    let mut buf = [0u8; 30];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 30, &mut table).unwrap();
    w.reserve(11).unwrap();
    let mut opt = w.push_opt(512, 0, 0).unwrap();
    assert_eq!(opt.option(OptionCode::NSID, &[0; 8]), Err(Error::NoSpace));
    opt.option(OptionCode::NSID, &[0; 3]).unwrap();
    assert_eq!(w.len(), 30);
}
