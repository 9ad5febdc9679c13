//! The headers of the frames the XDP path receives and sends: Ethernet (with up to two
//! VLAN tags), IPv4 or IPv6, UDP. Pure functions over byte slices, no I/O.
//!
//! [`parse`] finds a UDP datagram's addresses and DNS payload in a received frame, or
//! refuses the frame; it never panics, whatever the bytes (the `xdp_packet` fuzz target
//! holds it to that). [`write_headers`] writes the headers of the answer in front of a
//! payload already in place: the query's Ethernet header with the MAC addresses
//! swapped (its VLAN tags kept), a fresh IP header with the addresses swapped, and a UDP
//! header with the ports swapped and the checksum computed (mandatory on IPv6,
//! RFC 8200 §8.1; computed on IPv4 too, RFC 768).
//!
//! What the XDP program lets through is already UDP to a served address and port,
//! without IPv4 fragments or IPv6 extension headers; [`parse`] checks all of it again,
//! as it must not trust the frame. Checksums of received frames are not verified: the
//! driver or, on a veth, the sending stack may have left that to the receiver's
//! offload, where a wrong sum is no sign of a bad frame.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::ops::Range;

/// An Ethernet header without tags.
pub const ETHERNET_LEN: usize = 14;
/// One 802.1Q or 802.1ad tag.
const VLAN_TAG_LEN: usize = 4;
/// Tags read in front of the IP header (QinQ at most).
const MAX_VLAN_TAGS: usize = 2;
/// An IPv4 header without options.
const IPV4_LEN: usize = 20;
/// The fixed IPv6 header.
const IPV6_LEN: usize = 40;
/// The UDP header.
const UDP_LEN: usize = 8;
/// The longest header in front of an answer: Ethernet with two tags, IPv6, UDP.
pub const MAX_HEADER_LEN: usize = ETHERNET_LEN + MAX_VLAN_TAGS * VLAN_TAG_LEN + IPV6_LEN + UDP_LEN;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;
const PROTOCOL_UDP: u8 = 17;
/// The hop limit / TTL of answers (the Linux default, `net.ipv4.ip_default_ttl`).
const HOP_LIMIT: u8 = 64;

/// A received UDP datagram, as found by [`parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram {
    /// Bytes of the Ethernet header with its tags.
    pub link_len: usize,
    /// The sender's address and port.
    pub client: SocketAddr,
    /// The address and port it was sent to.
    pub local: SocketAddr,
    /// Where the DNS message starts in the frame.
    pub payload_start: usize,
    /// Its length.
    pub payload_len: usize,
}

impl Datagram {
    /// Where the DNS message is in the frame.
    pub fn payload(&self) -> Range<usize> {
        self.payload_start..self.payload_start + self.payload_len
    }

    /// Bytes of the answer's headers: where its DNS message starts in the frame.
    pub fn header_len(&self) -> usize {
        let ip = if self.client.is_ipv4() { IPV4_LEN } else { IPV6_LEN };
        self.link_len + ip + UDP_LEN
    }

    /// The largest DNS message that fits an IP packet of `mtu` bytes, so that no answer
    /// is ever sent as fragments (RFC 8900).
    pub fn payload_max(&self, mtu: usize) -> usize {
        let ip = if self.client.is_ipv4() { IPV4_LEN } else { IPV6_LEN };
        mtu.saturating_sub(ip + UDP_LEN)
    }
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    let pair = bytes.get(at..at + 2)?;
    Some(u16::from_be_bytes([*pair.first()?, *pair.get(1)?]))
}

fn array_at<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at + N)?.try_into().ok()
}

/// Finds the UDP datagram in `frame`; `None` for anything else (the XDP program sends
/// other traffic to the kernel, so this is a frame that should not have come here).
pub fn parse(frame: &[u8]) -> Option<Datagram> {
    let mut link_len = ETHERNET_LEN;
    let mut ethertype = u16_at(frame, 12)?;
    for _ in 0..MAX_VLAN_TAGS {
        if ethertype != ETHERTYPE_VLAN && ethertype != ETHERTYPE_QINQ {
            break;
        }
        ethertype = u16_at(frame, link_len + 2)?;
        link_len += VLAN_TAG_LEN;
    }
    let ip = frame.get(link_len..)?;
    let (src, dst, udp_start, ip_end) = match ethertype {
        ETHERTYPE_IPV4 => parse_ipv4(ip)?,
        ETHERTYPE_IPV6 => parse_ipv6(ip)?,
        _ => return None,
    };
    // The IP length bounds the datagram: short frames carry Ethernet padding.
    let udp = ip.get(udp_start..ip_end)?;
    let udp_len = usize::from(u16_at(udp, 4)?);
    if udp_len < UDP_LEN || udp_len > udp.len() {
        return None;
    }
    let (src_port, dst_port) = (u16_at(udp, 0)?, u16_at(udp, 2)?);
    if src_port == 0 {
        return None;
    }
    let start = link_len + udp_start + UDP_LEN;
    Some(Datagram {
        link_len,
        client: SocketAddr::new(src, src_port),
        local: SocketAddr::new(dst, dst_port),
        payload_start: start,
        payload_len: udp_len - UDP_LEN,
    })
}

/// An IPv4 header (RFC 791): source, destination, where UDP starts and where the packet
/// ends. Refuses fragments (MF or an offset), other protocols and bad lengths; options
/// are skipped.
fn parse_ipv4(ip: &[u8]) -> Option<(IpAddr, IpAddr, usize, usize)> {
    let first = *ip.first()?;
    let header_len = usize::from(first & 0x0f) * 4;
    let total = usize::from(u16_at(ip, 2)?);
    let fragment = u16_at(ip, 6)? & 0x3fff;
    if first >> 4 != 4 || header_len < IPV4_LEN || fragment != 0 {
        return None;
    }
    if *ip.get(9)? != PROTOCOL_UDP || total < header_len + UDP_LEN || total > ip.len() {
        return None;
    }
    let src = Ipv4Addr::from(array_at::<4>(ip, 12)?);
    let dst = Ipv4Addr::from(array_at::<4>(ip, 16)?);
    Some((src.into(), dst.into(), header_len, total))
}

/// An IPv6 header (RFC 8200 §3) directly followed by UDP; extension headers are the
/// kernel's (the XDP program passes them on, so they are refused here).
fn parse_ipv6(ip: &[u8]) -> Option<(IpAddr, IpAddr, usize, usize)> {
    let payload = usize::from(u16_at(ip, 4)?);
    if *ip.first()? >> 4 != 6 || *ip.get(6)? != PROTOCOL_UDP {
        return None;
    }
    let end = IPV6_LEN + payload;
    if payload < UDP_LEN || end > ip.len() {
        return None;
    }
    let src = Ipv6Addr::from(array_at::<16>(ip, 8)?);
    let dst = Ipv6Addr::from(array_at::<16>(ip, 24)?);
    Some((src.into(), dst.into(), IPV6_LEN, end))
}

/// Writes the answer's headers into `out` in front of its DNS message of `payload_len`
/// bytes, which is already at `query.header_len()`; `link` is the query's Ethernet
/// header (`query.link_len` bytes). Returns the frame's length, or `None` when `out` or
/// `link` is too short or the addresses are of different families.
pub fn write_headers(
    out: &mut [u8],
    link: &[u8],
    query: &Datagram,
    payload_len: usize,
) -> Option<usize> {
    let header_len = query.header_len();
    let frame_len = header_len + payload_len;
    let frame = out.get_mut(..frame_len)?;
    let (head, payload) = frame.split_at_mut(header_len);
    let (eth, rest) = head.split_at_mut(query.link_len);
    write_link(eth, link.get(..query.link_len)?)?;
    let udp_len = u16::try_from(UDP_LEN + payload_len).ok()?;
    let (ip, udp) = rest.split_at_mut(rest.len() - UDP_LEN);
    let pseudo = match (query.local.ip(), query.client.ip()) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => write_ipv4(ip, src, dst, udp_len)?,
        (IpAddr::V6(src), IpAddr::V6(dst)) => write_ipv6(ip, src, dst, udp_len)?,
        _ => return None,
    };
    write_udp(udp, query.local.port(), query.client.port(), udp_len, pseudo, payload);
    Some(frame_len)
}

/// The query's Ethernet header with source and destination swapped.
fn write_link(eth: &mut [u8], link: &[u8]) -> Option<()> {
    eth.copy_from_slice(link);
    eth.get_mut(0..6)?.copy_from_slice(link.get(6..12)?);
    eth.get_mut(6..12)?.copy_from_slice(link.get(0..6)?);
    Some(())
}

/// An IPv4 header without options, with DF set: answers are never fragmented (RFC 8900),
/// and the identification of such an atomic datagram is free to be 0 (RFC 6864 §4.1).
/// Returns the pseudo-header's sum for the UDP checksum.
fn write_ipv4(ip: &mut [u8], src: Ipv4Addr, dst: Ipv4Addr, udp_len: u16) -> Option<u32> {
    let total = u16::try_from(IPV4_LEN + usize::from(udp_len)).ok()?;
    let header: &mut [u8; IPV4_LEN] = ip.try_into().ok()?;
    let [t0, t1] = total.to_be_bytes();
    let [s0, s1, s2, s3] = src.octets();
    let [d0, d1, d2, d3] = dst.octets();
    *header = [
        0x45,
        0,
        t0,
        t1,
        0,
        0,
        0x40,
        0,
        HOP_LIMIT,
        PROTOCOL_UDP,
        0,
        0,
        s0,
        s1,
        s2,
        s3,
        d0,
        d1,
        d2,
        d3,
    ];
    let [c0, c1] = finish(sum(header, 0)).to_be_bytes();
    header[10] = c0;
    header[11] = c1;
    let pseudo = sum(&src.octets(), 0) + sum(&dst.octets(), 0);
    Some(pseudo + u32::from(PROTOCOL_UDP) + u32::from(udp_len))
}

/// The fixed IPv6 header (traffic class and flow label 0). Returns the pseudo-header's
/// sum for the UDP checksum (RFC 8200 §8.1).
fn write_ipv6(ip: &mut [u8], src: Ipv6Addr, dst: Ipv6Addr, udp_len: u16) -> Option<u32> {
    let header: &mut [u8; IPV6_LEN] = ip.try_into().ok()?;
    let (fixed, addresses) = header.split_at_mut(8);
    let [l0, l1] = udp_len.to_be_bytes();
    fixed.copy_from_slice(&[0x60, 0, 0, 0, l0, l1, PROTOCOL_UDP, HOP_LIMIT]);
    let (source, destination) = addresses.split_at_mut(16);
    source.copy_from_slice(&src.octets());
    destination.copy_from_slice(&dst.octets());
    let pseudo = sum(&src.octets(), 0) + sum(&dst.octets(), 0);
    Some(pseudo + u32::from(PROTOCOL_UDP) + u32::from(udp_len))
}

/// The UDP header, its checksum over the pseudo-header sum, itself and the payload; a
/// sum of 0 is sent as 0xffff (RFC 768).
fn write_udp(udp: &mut [u8], src: u16, dst: u16, len: u16, pseudo: u32, payload: &[u8]) {
    let [s0, s1] = src.to_be_bytes();
    let [d0, d1] = dst.to_be_bytes();
    let [l0, l1] = len.to_be_bytes();
    let header = [s0, s1, d0, d1, l0, l1, 0, 0];
    let checksum = match finish(sum(payload, sum(&header, pseudo))) {
        0 => 0xffff,
        other => other,
    };
    let [c0, c1] = checksum.to_be_bytes();
    if let Some(slot) = udp.get_mut(..UDP_LEN) {
        slot.copy_from_slice(&[s0, s1, d0, d1, l0, l1, c0, c1]);
    }
}

/// Adds `bytes` as big-endian 16-bit words (an odd last byte padded with zero) to
/// `initial`, the Internet checksum's one's-complement sum before folding (RFC 1071).
/// Eight bytes a step; the carries are folded by [`finish`].
pub fn sum(bytes: &[u8], initial: u32) -> u32 {
    let mut total = u64::from(initial);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut eight = [0; 8];
        eight.copy_from_slice(word);
        let value = u64::from_be_bytes(eight);
        total += (value >> 32) + (value & 0xffff_ffff);
    }
    let mut pairs = words.remainder().chunks_exact(2);
    for pair in &mut pairs {
        let mut two = [0; 2];
        two.copy_from_slice(pair);
        total += u64::from(u16::from_be_bytes(two));
    }
    if let [last] = pairs.remainder() {
        total += u64::from(*last) << 8;
    }
    fold(total)
}

/// Folds a 64-bit sum into 16 bits, end-around carries included.
fn fold(mut total: u64) -> u32 {
    while total > 0xffff {
        total = (total & 0xffff) + (total >> 16);
    }
    total as u32
}

/// The checksum field for a one's-complement `sum`.
pub fn finish(sum: u32) -> u16 {
    !(fold(u64::from(sum)) as u16)
}

#[cfg(test)]
mod tests;
