//! Workloads shared by the criterion benchmarks and the instruction-count driver.

#![allow(dead_code)]

use tern_wire::edns::OptionCode;
use tern_wire::message::{CompressionTable, MessageReader, MessageWriter, Section};
use tern_wire::{Class, Name, Rtype};

/// `www.example.com. A` with RD and EDNS (1232, DO, a client cookie): what resolvers send.
pub const QUERY: &[u8] = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01\
\x03www\x07example\x03com\x00\x00\x01\x00\x01\
\x00\x00\x29\x04\xd0\x00\x00\x80\x00\x00\x0c\x00\x0a\x00\x08\x01\x02\x03\x04\x05\x06\x07\x08";

/// Parses the query the way a server does: question, records, EDNS and its cookie.
pub fn parse_query(msg: &[u8], scratch: &mut [u8]) -> (Rtype, u16, [u8; 8]) {
    let mut reader = MessageReader::new(msg).unwrap();
    let q = reader.question().unwrap().unwrap();
    while reader.record(scratch).unwrap().is_some() {}
    let edns = reader.edns().unwrap();
    let cookie = edns.option(OptionCode::COOKIE).unwrap().cookie().unwrap();
    (q.qtype, edns.udp_payload_size(), cookie.client)
}

/// A referral from `com.` for `www.example.com.`: 6 NS, a DS, 6 A and 6 AAAA glue, OPT.
pub struct Referral {
    qname: Name,
    zone: Name,
    ns: Vec<(Name, Vec<u8>)>,
}

pub fn referral() -> Referral {
    let ns = (1..=6)
        .map(|i| {
            let host: Name = format!("ns{i}.example.com.").parse().unwrap();
            let rdata = host.as_wire().to_vec();
            (host, rdata)
        })
        .collect();
    Referral {
        qname: "www.example.com.".parse().unwrap(),
        zone: "example.com.".parse().unwrap(),
        ns,
    }
}

pub fn write_referral(w: &mut MessageWriter<'_>, r: &Referral) {
    w.set_id(0x1234);
    w.push_question(&r.qname, Rtype::A, Class::IN).unwrap();
    w.reserve(11).unwrap();
    for (_, rdata) in &r.ns {
        w.push_record(Section::Authority, &r.zone, Rtype::NS, Class::IN, 172800, rdata).unwrap();
    }
    let ds =
        [0x30, 0x39, 8, 2, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01];
    let mut ds_rdata = ds.to_vec();
    ds_rdata.extend_from_slice(&[0x5A; 20]);
    w.push_record(Section::Authority, &r.zone, Rtype::DS, Class::IN, 86400, &ds_rdata).unwrap();
    for (i, (host, _)) in r.ns.iter().enumerate() {
        let a = [192, 0, 2, i as u8];
        w.push_record(Section::Additional, host, Rtype::A, Class::IN, 172800, &a).unwrap();
    }
    for (i, (host, _)) in r.ns.iter().enumerate() {
        let mut aaaa = [0u8; 16];
        aaaa[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        aaaa[15] = i as u8;
        w.push_record(Section::Additional, host, Rtype::AAAA, Class::IN, 172800, &aaaa).unwrap();
    }
    w.reserve(0).unwrap();
    w.push_opt(1232, 0, 0x8000).unwrap();
}

/// Names of a ~4 KiB message: 40 owners in three zones, each with NS/MX-style targets.
pub fn names_4k() -> Vec<Name> {
    let mut names = Vec::new();
    let zones = ["example.com.", "example.net.", "sub.example.org."];
    for i in 0..60 {
        let zone = zones[i % zones.len()];
        names.push(format!("host{i}.{zone}").parse().unwrap());
        names.push(format!("mail{}.{zone}", i % 7).parse().unwrap());
        names.push(format!("ns{}.dns-provider.example.", i % 4).parse().unwrap());
    }
    names
}

/// The RDATA between names in the compression workload: 10 fixed bytes per name.
pub const FILLER: [u8; 10] = [0; 10];

/// Writes the names of `names_4k` with the linear compressor; returns the length.
pub fn compress_linear(buf: &mut [u8], table: &mut CompressionTable, names: &[Name]) -> usize {
    let mut w = MessageWriter::new(buf, 65535, table).unwrap();
    for n in names {
        w.write_name(n, true).unwrap();
        w.write_bytes(&FILLER).unwrap();
    }
    w.len()
}
