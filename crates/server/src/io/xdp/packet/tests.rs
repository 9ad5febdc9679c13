//! Literal frames through [`parse`] and answers through [`write_headers`], checked
//! against hand-computed checksums and against the one's-complement identity (a header
//! summed with its checksum gives 0xffff).

use super::*;

const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const DNS: &[u8] = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01";

fn ethernet(tags: &[[u8; 4]], ethertype: u16) -> Vec<u8> {
    let mut frame = SERVER_MAC.to_vec();
    frame.extend_from_slice(&CLIENT_MAC);
    for tag in tags {
        frame.extend_from_slice(tag);
    }
    frame.extend_from_slice(&ethertype.to_be_bytes());
    frame
}

fn udp(src: u16, dst: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = src.to_be_bytes().to_vec();
    out.extend_from_slice(&dst.to_be_bytes());
    out.extend_from_slice(&(8 + payload.len() as u16).to_be_bytes());
    out.extend_from_slice(&[0xde, 0xad]); // not checked on receive
    out.extend_from_slice(payload);
    out
}

fn ipv4_frame(tags: &[[u8; 4]], options: &[u8], fragment: u16, payload: &[u8]) -> Vec<u8> {
    let mut frame = ethernet(tags, 0x0800);
    let udp = udp(40000, 53, payload);
    let header_len = 20 + options.len();
    let total = (header_len + udp.len()) as u16;
    frame.push(0x40 | (header_len / 4) as u8);
    frame.push(0);
    frame.extend_from_slice(&total.to_be_bytes());
    frame.extend_from_slice(&[0xab, 0xcd]);
    frame.extend_from_slice(&fragment.to_be_bytes());
    frame.extend_from_slice(&[64, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 53]);
    frame.extend_from_slice(options);
    frame.extend_from_slice(&udp);
    frame
}

fn ipv6_frame(next_header: u8, payload: &[u8]) -> Vec<u8> {
    let mut frame = ethernet(&[], 0x86dd);
    let udp = udp(40000, 53, payload);
    frame.extend_from_slice(&[0x60, 0, 0, 0]);
    frame.extend_from_slice(&(udp.len() as u16).to_be_bytes());
    frame.extend_from_slice(&[next_header, 64]);
    frame.extend_from_slice(&"2001:db8::1".parse::<Ipv6Addr>().unwrap().octets());
    frame.extend_from_slice(&"2001:db8::53".parse::<Ipv6Addr>().unwrap().octets());
    frame.extend_from_slice(&udp);
    frame
}

/// Answers `frame` with `answer` as its DNS message, as the worker does.
fn answer(frame: &[u8], answer: &[u8]) -> Vec<u8> {
    let query = parse(frame).unwrap();
    let mut out = vec![0; 2048];
    let start = query.header_len();
    out[start..start + answer.len()].copy_from_slice(answer);
    let len = write_headers(&mut out, &frame[..query.link_len], &query, answer.len()).unwrap();
    out.truncate(len);
    out
}

#[test]
fn ipv4_query_is_found() {
    let frame = ipv4_frame(&[], &[], 0x4000, DNS);
    let query = parse(&frame).unwrap();
    assert_eq!(query.link_len, 14);
    assert_eq!(query.client, "192.0.2.1:40000".parse().unwrap());
    assert_eq!(query.local, "192.0.2.53:53".parse().unwrap());
    assert_eq!(&frame[query.payload()], DNS);
    assert_eq!(query.header_len(), 42);
    assert_eq!(query.payload_max(1500), 1472);
}

#[test]
fn ipv4_options_are_skipped() {
    let options = [0x94, 0x04, 0, 0, 1, 1, 1, 0]; // router alert, NOPs, end of list
    let frame = ipv4_frame(&[], &options, 0, DNS);
    let query = parse(&frame).unwrap();
    assert_eq!(&frame[query.payload()], DNS);
    // The answer has no options.
    let out = answer(&frame, b"reply");
    assert_eq!(out[14], 0x45);
    assert_eq!(&out[42..], b"reply");
}

#[test]
fn ipv4_fragments_are_refused() {
    for fragment in [0x2000, 0x0001, 0x2010, 0x1fff] {
        assert_eq!(parse(&ipv4_frame(&[], &[], fragment, DNS)), None, "{fragment:#x}");
    }
    assert!(parse(&ipv4_frame(&[], &[], 0x4000, DNS)).is_some(), "DF alone is fine");
}

#[test]
fn vlan_tags_are_kept() {
    let tags = [[0x88, 0xa8, 0, 100], [0x81, 0x00, 0x20, 7]];
    for count in 1..=2 {
        let frame = ipv4_frame(&tags[2 - count..], &[], 0, DNS);
        let query = parse(&frame).unwrap();
        assert_eq!(query.link_len, 14 + 4 * count);
        let out = answer(&frame, DNS);
        assert_eq!(&out[12..query.link_len], &frame[12..query.link_len], "tags kept");
        assert_eq!(&out[..6], &CLIENT_MAC);
        assert_eq!(&out[6..12], &SERVER_MAC);
    }
    // Three tags are more than read: the frame is not IP as far as the parser goes.
    let tags = [[0x88, 0xa8, 0, 1], [0x81, 0, 0, 2], [0x81, 0, 0, 3]];
    assert_eq!(parse(&ipv4_frame(&tags, &[], 0, DNS)), None);
}

#[test]
fn ipv4_answer_headers() {
    let frame = ipv4_frame(&[], &[], 0, DNS);
    let out = answer(&frame, DNS);
    let ip = &out[14..34];
    assert_eq!(&ip[12..16], &[192, 0, 2, 53], "from the address asked");
    assert_eq!(&ip[16..20], &[192, 0, 2, 1], "to the client");
    assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, 20 + 8 + DNS.len());
    assert_eq!(&ip[6..8], &[0x40, 0], "DF, no fragment");
    assert_eq!(sum(ip, 0), 0xffff, "header checksum");
    let udp = &out[34..];
    assert_eq!(&udp[..4], &[0, 53, 0x9c, 0x40], "ports swapped");
    assert_eq!(udp_sum_v4(&out), 0xffff, "UDP checksum");
}

#[test]
fn ipv4_header_checksum_literal() {
    // RFC 1071 style check on a known header: 192.0.2.53 → 192.0.2.1, 45 bytes.
    let frame = ipv4_frame(&[], &[], 0, DNS);
    let out = answer(&frame, DNS);
    assert_eq!(
        &out[14..34],
        &[0x45, 0, 0, 45, 0, 0, 0x40, 0, 64, 17, 0xb6, 0x89, 192, 0, 2, 53, 192, 0, 2, 1]
    );
}

fn udp_sum_v4(frame: &[u8]) -> u32 {
    let ip = &frame[14..34];
    let udp = &frame[34..];
    let pseudo = sum(&ip[12..20], 0) + 17 + udp.len() as u32;
    fold(u64::from(sum(udp, pseudo)))
}

#[test]
fn ipv6_query_and_answer() {
    let frame = ipv6_frame(17, DNS);
    let query = parse(&frame).unwrap();
    assert_eq!(query.client, "[2001:db8::1]:40000".parse().unwrap());
    assert_eq!(query.local, "[2001:db8::53]:53".parse().unwrap());
    assert_eq!(query.payload_max(1500), 1452);
    // Odd length: the checksum pads the last byte.
    let reply = b"odd-length reply";
    let out = answer(&frame, &reply[..15]);
    let ip = &out[14..54];
    assert_eq!(ip[0], 0x60);
    assert_eq!(u16::from_be_bytes([ip[4], ip[5]]) as usize, 8 + 15);
    assert_eq!(&ip[8..24], &frame[14 + 24..14 + 40], "from the address asked");
    let udp = &out[54..];
    let pseudo = sum(&ip[8..40], 0) + 17 + udp.len() as u32;
    assert_eq!(fold(u64::from(sum(udp, pseudo))), 0xffff, "UDP checksum");
    assert_ne!(&udp[6..8], &[0, 0], "never zero on IPv6");
}

#[test]
fn ipv6_extension_headers_are_refused() {
    for next in [0, 43, 44, 60, 6, 58] {
        assert_eq!(parse(&ipv6_frame(next, DNS)), None, "next header {next}");
    }
}

#[test]
fn padding_and_short_frames() {
    // A small query padded to the Ethernet minimum: the IP length decides.
    let mut frame = ipv4_frame(&[], &[], 0, b"ab");
    frame.resize(60, 0);
    let query = parse(&frame).unwrap();
    assert_eq!(&frame[query.payload()], b"ab");
    // Every prefix of a good frame is refused or read within bounds.
    let full = ipv6_frame(17, DNS);
    for len in 0..full.len() {
        assert_eq!(parse(&full[..len]), None, "cut at {len}");
    }
}

#[test]
fn bad_lengths_are_refused() {
    let mut frame = ipv4_frame(&[], &[], 0, DNS);
    frame[14] = 0x44; // IHL 4
    assert_eq!(parse(&frame), None);
    let mut frame = ipv4_frame(&[], &[], 0, DNS);
    frame[14 + 20 + 5] = 7; // UDP length below its header
    frame[14 + 20 + 4] = 0;
    assert_eq!(parse(&frame), None);
    let mut frame = ipv4_frame(&[], &[], 0, DNS);
    frame[14 + 20 + 4] = 0xff; // UDP length past the IP packet
    assert_eq!(parse(&frame), None);
    let mut frame = ipv4_frame(&[], &[], 0, DNS);
    frame[14 + 20] = 0;
    frame[14 + 20 + 1] = 0; // source port 0
    assert_eq!(parse(&frame), None);
    assert_eq!(parse(&ethernet(&[], 0x0806)), None, "ARP");
}

#[test]
fn write_refuses_short_buffers() {
    let frame = ipv4_frame(&[], &[], 0, DNS);
    let query = parse(&frame).unwrap();
    let mut out = [0; 50];
    assert_eq!(write_headers(&mut out, &frame, &query, 9), None);
    assert_eq!(write_headers(&mut out, &frame[..10], &query, 8), None);
    assert_eq!(write_headers(&mut out, &frame, &query, 8), Some(50));
}

/// A deterministic walk over mutated frames: parsing never panics, and whatever is
/// accepted can be answered with headers that check out.
#[test]
fn mutated_frames_never_panic() {
    let seeds = [ipv4_frame(&[[0x81, 0, 0, 1]], &[1, 1, 1, 0], 0, DNS), ipv6_frame(17, DNS)];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let seed = &seeds[(next() % 2) as usize];
        let mut frame = seed.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % frame.len();
            frame[at] = next() as u8;
        }
        frame.truncate((next() as usize) % (frame.len() + 1));
        if let Some(query) = parse(&frame) {
            assert!(query.payload().end <= frame.len());
            let mut out = vec![0; query.header_len() + query.payload_len];
            let len = write_headers(&mut out, &frame, &query, query.payload_len);
            assert_eq!(len, Some(out.len()));
        }
    }
}

#[test]
fn checksum_sum_matches_word_by_word() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(1001).collect();
    for len in [0, 1, 2, 7, 8, 9, 15, 16, 17, 1001] {
        let slow = bytes[..len].chunks(2).fold(0u64, |acc, pair| {
            acc + u64::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]))
        });
        assert_eq!(sum(&bytes[..len], 0), fold(slow), "{len} bytes");
    }
    assert_eq!(finish(0xffff), 0);
}
