//! Historic types that BIND still loads, so that zones moved from it load here too: WKS
//! (RFC 1035 §3.4.2), NSAP (RFC 1706 §5), GPOS (RFC 1712 §3) and A6 (RFC 2874 §3.1).
//!
//! Where tools differ, Tern follows dnspython for the types it knows (WKS, NSAP, GPOS)
//! and BIND for A6, which dnspython reads only in the generic form:
//! * WKS protocols are numbers, `TCP` or `UDP`; services are port numbers or names from
//!   the fixed table [`WKS_SERVICES`] (TCP and UDP only). BIND and dnspython read
//!   `/etc/protocols` and `/etc/services`, so what they accept depends on the machine;
//!   Tern's answer must not. Printed as numbers, as both print.
//! * A WKS port bitmap ends in a nonzero byte (refused otherwise, as BIND does).
//! * NSAP text is `0x` (or `0X`, as BIND) and hex digits with `.` anywhere; it may not
//!   be empty (BIND refuses an empty NSAP; dnspython takes `0x`). Printed `0x` + lower
//!   case hex.
//! * GPOS fields are decimal numbers, checked in both directions as dnspython checks
//!   them (BIND takes any string).
//! * A6 bits of the address above the prefix length are ignored in text (the prefix
//!   name's records supply them), as BIND does; on the wire the pad bits of the suffix's
//!   first byte must be zero, as BIND requires when reading.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::bitmap::{flat_bits, read_flat, set_flat_bit, write_flat};
use super::fields::{self, RdataReader};
use super::format::{rdata_format, FieldKind, Format};
use super::kinds::{CharString, Ipv4, NameKind};
use super::{bad, push_fmt};
use crate::error::Result;
use crate::name::{Dname, Name};
use crate::text::{Lexer, Token};
use crate::types::parse_decimal;

/// IANA protocol number of TCP.
const TCP: u8 = 6;
/// IANA protocol number of UDP.
const UDP: u8 = 17;

/// A service name that WKS text accepts in place of a port number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WksService {
    /// The name, matched without regard to case.
    pub name: &'static str,
    /// The port it stands for.
    pub port: u16,
    /// Accepted when the protocol is TCP.
    pub tcp: bool,
    /// Accepted when the protocol is UDP.
    pub udp: bool,
}

const fn tcp(name: &'static str, port: u16) -> WksService {
    WksService { name, port, tcp: true, udp: false }
}

const fn udp(name: &'static str, port: u16) -> WksService {
    WksService { name, port, tcp: false, udp: true }
}

const fn both(name: &'static str, port: u16) -> WksService {
    WksService { name, port, tcp: true, udp: true }
}

/// The service names WKS text accepts: common services of the IANA port registry, named
/// and limited to TCP or UDP as Debian's `/etc/services` (netbase 6.4) has them, the file
/// BIND and dnspython read there. Tern reads no file, so a zone loads alike on every
/// machine; any other service must be given as its port number.
pub const WKS_SERVICES: &[WksService] = &[
    both("echo", 7),
    both("discard", 9),
    both("daytime", 13),
    both("chargen", 19),
    tcp("ftp-data", 20),
    tcp("ftp", 21),
    tcp("ssh", 22),
    tcp("telnet", 23),
    tcp("smtp", 25),
    tcp("mail", 25),
    both("time", 37),
    tcp("whois", 43),
    tcp("nicname", 43),
    both("domain", 53),
    udp("bootps", 67),
    udp("bootpc", 68),
    udp("tftp", 69),
    tcp("gopher", 70),
    tcp("finger", 79),
    tcp("http", 80),
    tcp("www", 80),
    both("kerberos", 88),
    tcp("pop3", 110),
    both("sunrpc", 111),
    tcp("auth", 113),
    tcp("ident", 113),
    tcp("nntp", 119),
    udp("ntp", 123),
    tcp("imap", 143),
    tcp("imap2", 143),
    both("snmp", 161),
    tcp("bgp", 179),
    both("ldap", 389),
    both("https", 443),
    tcp("submission", 587),
    both("ldaps", 636),
    both("domain-s", 853),
    tcp("imaps", 993),
    tcp("pop3s", 995),
];

/// WKS (RFC 1035 §3.4.2): the services a host offers over one IP protocol.
///
/// Text: the address, the protocol (a number, `TCP` or `UDP` in any case) and zero or
/// more services (port numbers, or for TCP and UDP names from [`WKS_SERVICES`]). Printed
/// with numbers only. Wire: the address, the protocol byte and a bitmap of ports (bit
/// `n` for port `n`) without trailing zero bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Wks {
    /// The host's address.
    pub address: Ipv4Addr,
    /// The IP protocol number (6 TCP, 17 UDP).
    pub protocol: u8,
    /// The ports offered, in increasing order when decoded (any order and repeats are
    /// accepted when encoding).
    pub ports: Vec<u16>,
}

/// Largest WKS bitmap: one bit for each port up to 65535.
const WKS_MAX_BITMAP: usize = 8192;

/// Reads a WKS protocol: a number, or `TCP` or `UDP` in any case.
fn parse_protocol(token: &Token<'_>) -> Result<u8> {
    let what = "a protocol number (0..255), TCP or UDP";
    match token.text {
        t if t.eq_ignore_ascii_case(b"tcp") => Ok(TCP),
        t if t.eq_ignore_ascii_case(b"udp") => Ok(UDP),
        _ => token.number(what),
    }
}

/// Reads one WKS service: a port number, or a name from [`WKS_SERVICES`] for TCP and
/// UDP.
fn parse_service(token: &Token<'_>, protocol: u8) -> Result<u16> {
    if token.text.first().is_some_and(u8::is_ascii_digit) {
        return parse_decimal(token.text).and_then(|v| u16::try_from(v).ok()).ok_or_else(|| {
            token.error(format!("expected a port (0..65535), found '{}'", token.display()))
        });
    }
    let (known, name): (fn(&WksService) -> bool, _) = match protocol {
        TCP => (|s| s.tcp, "TCP"),
        UDP => (|s| s.udp, "UDP"),
        _ => {
            return Err(token.error(format!(
                "service names are known for TCP and UDP only: give '{}' as a port number",
                token.display()
            )))
        }
    };
    WKS_SERVICES
        .iter()
        .find(|s| known(s) && token.text.eq_ignore_ascii_case(s.name.as_bytes()))
        .map(|s| s.port)
        .ok_or_else(|| {
            token.error(format!(
                "unknown {name} service '{}': give it as a port number",
                token.display()
            ))
        })
}

impl Format for Wks {
    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        fields::next_ipv4(lx, out)?;
        let protocol = parse_protocol(&lx.expect("a protocol number (0..255), TCP or UDP")?)?;
        out.push(protocol);
        let bitmap_at = out.len();
        while let Some(token) = lx.next_token()? {
            set_flat_bit(out, bitmap_at, parse_service(&token, protocol)?);
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        Ipv4::print(rd, out)?;
        push_fmt(out, format_args!(" {}", rd.u8()?));
        flat_bits(read_flat(rd, WKS_MAX_BITMAP)?, |port| push_fmt(out, format_args!(" {port}")));
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        Ipv4::check(rd)?;
        rd.u8()?;
        read_flat(rd, WKS_MAX_BITMAP).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Self> {
        let address = Ipv4::decode(rd)?;
        let protocol = rd.u8()?;
        let mut ports = Vec::new();
        flat_bits(read_flat(rd, WKS_MAX_BITMAP)?, |port| ports.push(port));
        Ok(Wks { address, protocol, ports })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        Ipv4::encode(&self.address, out);
        out.push(self.protocol);
        write_flat(&self.ports, out);
    }
}

/// An NSAP address (RFC 1706 §5): `0x` and hex digits, with `.` separators anywhere, in
/// text; the bytes to the end of the RDATA, at least one, on the wire.
pub(crate) struct NsapHex;

impl NsapHex {
    /// Decodes the digits after `0x`, skipping dots; returns the number of bytes.
    fn decode_digits(digits: &[u8], out: &mut Vec<u8>) -> Result<usize, &'static str> {
        let start = out.len();
        let mut high: Option<u8> = None;
        for &c in digits.iter().filter(|&&c| c != b'.') {
            let nibble = char::from(c).to_digit(16).ok_or("expected hex digits")? as u8;
            match high.take() {
                Some(h) => out.push(h << 4 | nibble),
                None => high = Some(nibble),
            }
        }
        if high.is_some() {
            return Err("hex digits must come in pairs");
        }
        Ok(out.len() - start)
    }

    fn read<'a>(rd: &mut RdataReader<'a>) -> Result<&'a [u8]> {
        let at = rd.pos();
        match rd.rest() {
            [] => Err(bad(at, "empty NSAP address")),
            address => Ok(address),
        }
    }
}

impl FieldKind for NsapHex {
    type Value = Vec<u8>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("an NSAP address (0x and hex digits)")?;
        let fail = |why: &str| {
            token.error(format!(
                "expected an NSAP address (0x and hex digits): {why} in '{}'",
                token.display()
            ))
        };
        let digits = match token.text {
            [b'0', b'x' | b'X', digits @ ..] => digits,
            _ => return Err(fail("no leading 0x")),
        };
        let start = out.len();
        match NsapHex::decode_digits(digits, out) {
            Ok(0) => Err(fail("no digits")),
            Ok(_) => Ok(()),
            Err(why) => {
                out.truncate(start);
                Err(fail(why))
            }
        }
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let address = NsapHex::read(rd)?;
        out.push_str("0x");
        super::encoding::write_hex_lower(address, out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        NsapHex::read(rd).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<u8>> {
        NsapHex::read(rd).map(<[u8]>::to_vec)
    }

    fn encode(value: &Vec<u8>, out: &mut Vec<u8>) {
        out.extend_from_slice(value);
    }
}

rdata_format! {
    /// NSAP (RFC 1706 §5): an OSI network service access point address.
    Nsap {
        /// The address bytes (not empty).
        address: Vec<u8> as NsapHex,
    }
}

/// A GPOS number (RFC 1712 §3): a character string holding a decimal number, optionally
/// signed, with at most one `.` and at least one digit (no exponent), whose value lies
/// within ±`LIMIT` (no limit when `LIMIT` is 0). Quoted or not in text; printed as it
/// is, unquoted, as dnspython prints it (BIND quotes it).
pub(crate) struct GposNumber<const LIMIT: u16>;

impl<const LIMIT: u16> GposNumber<LIMIT> {
    /// Why `text` is not a valid number for this field, if it is not.
    fn fault(text: &[u8]) -> Option<&'static str> {
        let unsigned = match text {
            [b'+' | b'-', rest @ ..] => rest,
            _ => text,
        };
        let digits = unsigned.iter().filter(|c| c.is_ascii_digit()).count();
        let dots = unsigned.iter().filter(|&&c| c == b'.').count();
        if digits == 0 || dots > 1 || digits + dots != unsigned.len() {
            return Some("not a decimal number");
        }
        // Python's float() and Rust's parse both round correctly: the same range checks.
        let Some(value) = std::str::from_utf8(text).ok().and_then(|s| s.parse::<f64>().ok()) else {
            return Some("not a decimal number");
        };
        (LIMIT != 0 && !(-f64::from(LIMIT)..=f64::from(LIMIT)).contains(&value))
            .then_some("out of range")
    }

    fn read<'a>(rd: &mut RdataReader<'a>) -> Result<&'a [u8]> {
        let at = rd.pos();
        let text = rd.char_string()?;
        match Self::fault(text) {
            Some(why) => Err(bad(at, why)),
            None => Ok(text),
        }
    }

    fn what() -> String {
        match LIMIT {
            0 => "a decimal number".to_string(),
            _ => format!("a decimal number from -{LIMIT} to {LIMIT}"),
        }
    }
}

impl<const LIMIT: u16> FieldKind for GposNumber<LIMIT> {
    type Value = CharString;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect(&Self::what())?;
        let start = out.len();
        fields::parse_char_string(&token, out)?;
        match Self::fault(out.get(start + 1..).unwrap_or(&[])) {
            None => Ok(()),
            Some(why) => Err(token.error(format!(
                "expected {}, found '{}' ({why})",
                Self::what(),
                token.display()
            ))),
        }
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        // Only signs, digits and a dot get past `read`: no quoting needed.
        out.push_str(&String::from_utf8_lossy(Self::read(rd)?));
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        Self::read(rd).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<CharString> {
        CharString::new(Self::read(rd)?).map_err(|reason| bad(rd.pos(), reason))
    }

    fn encode(value: &CharString, out: &mut Vec<u8>) {
        value.encode(out);
    }
}

rdata_format! {
    /// GPOS (RFC 1712 §3): a position as three decimal numbers in character strings.
    ///
    /// The RFC names the first field longitude and the second latitude, yet gives the
    /// first the range -90..90 ("positive numbers indicate locations north of the
    /// equator") and the second -180..180, and its example (`-32.6882 116.8652 10.0`) is
    /// latitude first. Tern checks the ranges as the RFC's text gives them, as dnspython
    /// does, and keeps the RFC's field names.
    Gpos {
        /// The first field, from -90 to 90 degrees (north positive, per the RFC's text).
        longitude: CharString as GposNumber<90>,
        /// The second field, from -180 to 180 degrees (east positive, per the RFC's text).
        latitude: CharString as GposNumber<180>,
        /// Metres above mean sea level.
        altitude: CharString as GposNumber<0>,
    }
}

/// A6 (RFC 2874 §3.1): the low bits of an IPv6 address and the name whose A6 records
/// give the high ones.
///
/// Text: the prefix length (0..128), the address suffix as a full IPv6 address unless
/// the prefix length is 128, and the prefix name unless it is 0. Wire: the prefix length
/// byte, `(128 - prefix length) / 8` bytes rounded up of suffix, and the uncompressed
/// name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct A6 {
    /// Number of high address bits the prefix name supplies (0..=128).
    pub prefix_len: u8,
    /// The address with the bits this record supplies; the `prefix_len` high bits are
    /// zero when decoded and ignored when encoding.
    pub suffix: Ipv6Addr,
    /// The name whose A6 records hold the prefix: present exactly when `prefix_len` is
    /// above 0.
    pub prefix_name: Option<Name>,
}

/// Bytes of suffix on the wire for a prefix length.
fn a6_suffix_len(prefix_len: u8) -> usize {
    128usize.saturating_sub(usize::from(prefix_len)).div_ceil(8)
}

/// The bits of the suffix's first byte that belong to the suffix (the others are pad).
fn a6_first_byte_mask(prefix_len: u8) -> u8 {
    0xFF >> (prefix_len % 8)
}

/// Appends the suffix bytes of `address` for `prefix_len`, pad bits cleared.
fn write_a6_suffix(prefix_len: u8, address: &[u8; 16], out: &mut Vec<u8>) {
    let start = out.len();
    let len = a6_suffix_len(prefix_len);
    out.extend_from_slice(address.get(16 - len.min(16)..).unwrap_or(&[]));
    if let Some(first) = out.get_mut(start) {
        *first &= a6_first_byte_mask(prefix_len);
    }
}

/// The fields of wire-form A6, checked.
struct RawA6<'a> {
    prefix_len: u8,
    address: [u8; 16],
    prefix_name: Option<&'a Dname>,
}

impl<'a> RawA6<'a> {
    fn read(rd: &mut RdataReader<'a>) -> Result<RawA6<'a>> {
        let at = rd.pos();
        let prefix_len = rd.u8()?;
        if prefix_len > 128 {
            return Err(bad(at, "A6 prefix length above 128"));
        }
        let len = a6_suffix_len(prefix_len);
        let suffix = rd.bytes(len)?;
        if suffix.first().is_some_and(|&b| b & !a6_first_byte_mask(prefix_len) != 0) {
            return Err(bad(at + 1, "A6 address suffix with nonzero pad bits"));
        }
        let mut address = [0u8; 16];
        if let Some(low) = address.get_mut(16 - len..) {
            low.copy_from_slice(suffix);
        }
        let prefix_name = if prefix_len > 0 { Some(rd.name()?) } else { None };
        Ok(RawA6 { prefix_len, address, prefix_name })
    }
}

impl Format for A6 {
    fn parse(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let what = "a prefix length (0..128)";
        let token = lx.expect(what)?;
        let prefix_len: u8 = token.number(what)?;
        if prefix_len > 128 {
            return Err(token.error(format!("expected {what}, found '{}'", token.display())));
        }
        out.push(prefix_len);
        if prefix_len < 128 {
            let token = lx.expect("an IPv6 address")?;
            let address = fields::parse_ipv6(token.text).ok_or_else(|| {
                token.error(format!("expected an IPv6 address, found '{}'", token.display()))
            })?;
            write_a6_suffix(prefix_len, &address, out);
        }
        if prefix_len > 0 {
            fields::next_name(lx, "the prefix name", origin, out)?;
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let a6 = RawA6::read(rd)?;
        push_fmt(out, format_args!("{}", a6.prefix_len));
        if a6.prefix_len < 128 {
            push_fmt(out, format_args!(" {}", Ipv6Addr::from(a6.address)));
        }
        if let Some(name) = a6.prefix_name {
            push_fmt(out, format_args!(" {name}"));
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        RawA6::read(rd).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Self> {
        let a6 = RawA6::read(rd)?;
        Ok(A6 {
            prefix_len: a6.prefix_len,
            suffix: Ipv6Addr::from(a6.address),
            prefix_name: a6.prefix_name.map(Name::from_dname),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.prefix_len);
        write_a6_suffix(self.prefix_len, &self.suffix.octets(), out);
        if let Some(name) = &self.prefix_name {
            NameKind::encode(name, out);
        }
    }
}

/// Appends A6 RDATA in DNSSEC canonical form: the prefix name lower-cased (A6 is in
/// RFC 4034 §6.2's list). The name's offset depends on the prefix length, which a
/// [`super::Shape`] cannot say, so [`super::canonical_wire`] calls this for A6.
pub(crate) fn a6_canonical(rdata: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut rd = RdataReader::new(rdata);
    let a6 = RawA6::read(&mut rd)?;
    rd.finish()?;
    out.push(a6.prefix_len);
    write_a6_suffix(a6.prefix_len, &a6.address, out);
    if let Some(name) = a6.prefix_name {
        name.write_lowercase(out);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::rdata::tests::round_trip;
    use crate::rdata::{canonical_wire, parse_str, validate, Rdata, Wks};
    use crate::types::Rtype;

    fn parse_err(rtype: Rtype, text: &str) -> String {
        match parse_str(rtype, text, None) {
            Ok(wire) => panic!("{rtype} {text} parsed to {wire:02x?}"),
            Err(e) => e.to_string(),
        }
    }

    fn wire_err(rtype: Rtype, wire: &[u8]) -> String {
        validate(rtype, wire).expect_err("invalid wire").to_string()
    }

    #[test]
    fn wks_ports_and_names() {
        let wire = round_trip(Rtype::WKS, "192.0.2.1 TCP 25 80", "192.0.2.1 6 25 80");
        assert_eq!(wire[..5], [192, 0, 2, 1, 6]);
        assert_eq!(wire[5..], [0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0x80]);
        round_trip(Rtype::WKS, "192.0.2.1 tcp SMTP www Domain 25", "192.0.2.1 6 25 53 80");
        round_trip(Rtype::WKS, "192.0.2.1 Udp domain ntp tftp", "192.0.2.1 17 53 69 123");
        round_trip(Rtype::WKS, "192.0.2.1 6", "192.0.2.1 6");
        round_trip(Rtype::WKS, "192.0.2.1 255 0 1 7", "192.0.2.1 255 0 1 7");
        let wire = round_trip(Rtype::WKS, "192.0.2.1 17 65535", "192.0.2.1 17 65535");
        assert_eq!((wire.len(), wire.last()), (5 + 8192, Some(&1)));
        let typed = Rdata::Wks(Wks {
            address: [192, 0, 2, 1].into(),
            protocol: 6,
            ports: vec![80, 25, 25],
        });
        assert_eq!(typed.to_string(), "192.0.2.1 6 25 80");
    }

    #[test]
    fn wks_refusals() {
        assert!(parse_err(Rtype::WKS, "192.0.2.1 tcp 65536").contains("expected a port"));
        assert!(parse_err(Rtype::WKS, "192.0.2.1 tcp tftp").contains("unknown TCP service"));
        assert!(parse_err(Rtype::WKS, "192.0.2.1 udp bogus").contains("unknown UDP service"));
        assert!(parse_err(Rtype::WKS, "192.0.2.1 1 smtp").contains("TCP and UDP only"));
        assert!(parse_err(Rtype::WKS, "192.0.2.1 icmp").contains("protocol number"));
        assert!(parse_err(Rtype::WKS, "192.0.2.1 256").contains("protocol number"));
        assert!(parse_err(Rtype::WKS, "192.0.2.1").contains("protocol number"));
        assert!(parse_err(Rtype::WKS, "192.0.2 6").contains("IPv4"));
        assert!(wire_err(Rtype::WKS, &[192, 0, 2, 1, 6, 0x40, 0]).contains("trailing zero"));
        let mut long = vec![192, 0, 2, 1, 6];
        long.resize(5 + 8193, 1);
        assert!(wire_err(Rtype::WKS, &long).contains("longer"));
        assert!(validate(Rtype::WKS, &[192, 0, 2, 1]).is_err());
    }

    #[test]
    fn nsap_hex() {
        // RFC 1706 §6's example.
        let wire = round_trip(
            Rtype::NSAP,
            "0x47.0005.80.005a00.0000.0001.e133.ffffff000161.00",
            "0x47000580005a0000000001e133ffffff00016100",
        );
        assert_eq!(wire.len(), 20);
        round_trip(Rtype::NSAP, "0X4..7.", "0x47");
        round_trip(Rtype::NSAP, "\"0x.AB\"", "0xab");
        for (text, why) in [
            ("0x", "no digits"),
            ("0x.", "no digits"),
            ("0x4", "pairs"),
            ("4700", "no leading 0x"),
            ("0xzz", "hex digits"),
        ] {
            let err = parse_err(Rtype::NSAP, text);
            assert!(err.contains("NSAP") && err.contains(why), "{text}: {err}");
        }
        assert!(parse_err(Rtype::NSAP, "0x47 00").contains("unexpected"));
        assert!(wire_err(Rtype::NSAP, b"").contains("empty"));
    }

    #[test]
    fn gpos_numbers() {
        // RFC 1712 §4's example.
        let wire = round_trip(Rtype::GPOS, "-32.6882 116.8652 10.0", "-32.6882 116.8652 10.0");
        assert_eq!(wire, b"\x08-32.6882\x08116.8652\x0410.0");
        round_trip(Rtype::GPOS, r#""-32.6882" "116.8652" "10.0""#, "-32.6882 116.8652 10.0");
        round_trip(Rtype::GPOS, "+1. .5 -0", "+1. .5 -0");
        round_trip(Rtype::GPOS, "90 -180 -99999999.5", "90 -180 -99999999.5");
        round_trip(Rtype::GPOS, "-90.000 180.0 0", "-90.000 180.0 0");
        for text in ["91 0 0", "0 181 0", "-90.01 0 0", "0 -180.5 0"] {
            assert!(parse_err(Rtype::GPOS, text).contains("out of range"), "{text}");
        }
        for text in ["0 0 1e5", "0 0 -", "+ 0 0", ". 0 0", "1.2.3 0 0", "0x1 0 0", "\"\" 0 0"] {
            assert!(parse_err(Rtype::GPOS, text).contains("not a decimal number"), "{text}");
        }
        assert!(parse_err(Rtype::GPOS, "0 0").contains("expected a decimal number"));
        assert!(parse_err(Rtype::GPOS, "0 0 0 0").contains("unexpected"));
        assert!(wire_err(Rtype::GPOS, b"\x00\x00\x00").contains("not a decimal"));
        assert!(wire_err(Rtype::GPOS, b"\x0291\x010\x010").contains("out of range"));
        assert!(validate(Rtype::GPOS, b"\x010\x010").is_err());
    }

    #[test]
    fn a6_prefixes_and_suffixes() {
        let wire = round_trip(Rtype::A6, "0 2001:DB8::1", "0 2001:db8::1");
        assert_eq!(wire.len(), 17);
        // RFC 2874 §3.1.4's style: a suffix and a relative prefix name.
        let wire = round_trip(Rtype::A6, "64 ::1:2:3:4 prefix", "64 ::1:2:3:4 prefix.example.com.");
        assert_eq!(wire[..9], [64, 0, 1, 0, 2, 0, 3, 0, 4]);
        // Bits above the suffix, pad bits included, are ignored in text.
        let wire = round_trip(Rtype::A6, "65 2001:db8::ffff:2:3:4 p.", "65 ::7fff:2:3:4 p.");
        assert_eq!(wire[..2], [65, 0x7f]);
        round_trip(Rtype::A6, "127 ::3 p.", "127 ::1 p.");
        round_trip(Rtype::A6, "120 ::1ff p.", "120 ::ff p.");
        assert_eq!(round_trip(Rtype::A6, "128 p.", "128 p."), b"\x80\x01p\x00");
        assert!(parse_err(Rtype::A6, "129 ::1 p.").contains("prefix length"));
        assert!(parse_err(Rtype::A6, "0 ::1 p.").contains("unexpected 'p.'"));
        assert!(parse_err(Rtype::A6, "64 ::1").contains("prefix name"));
        assert!(parse_err(Rtype::A6, "128").contains("prefix name"));
        assert!(parse_err(Rtype::A6, "0 192.0.2.1").contains("IPv6"));
    }

    #[test]
    fn a6_wire_rules_and_canonical_form() {
        let mut pad = vec![65, 0x80, 0, 0, 0, 0, 0, 0, 0, 0];
        assert!(wire_err(Rtype::A6, &pad).contains("pad bits"));
        pad[1] = 0x7f;
        assert!(validate(Rtype::A6, &pad).is_ok());
        assert!(wire_err(Rtype::A6, b"\x81\x00").contains("above 128"));
        assert!(validate(Rtype::A6, b"\x80").is_err(), "name missing");
        assert!(validate(Rtype::A6, &[0; 18]).is_err(), "no name after prefix 0");
        let wire = parse_str(Rtype::A6, "12 ::1 P.Example.", None).unwrap();
        let mut canonical = Vec::new();
        canonical_wire(Rtype::A6, &wire, &mut canonical).unwrap();
        assert_eq!(canonical[..16], wire[..16]);
        assert_eq!(canonical[16..], *b"\x01p\x07example\x00");
        assert!(canonical_wire(Rtype::A6, b"\x81", &mut canonical).is_err());
        // The typed value ignores the prefix's bits, pad bits included.
        let typed = Rdata::A6(crate::rdata::A6 {
            prefix_len: 65,
            suffix: "ffff::ffff:2:3:4".parse().unwrap(),
            prefix_name: Some("p.".parse().unwrap()),
        });
        assert_eq!(typed.to_string(), "65 ::7fff:2:3:4 p.");
    }
}
