//! The RFC 1035 family of types and their close relatives: A, AAAA, the single-name types
//! (NS, CNAME, PTR, DNAME, …), SOA, MX-like (preference + name), TXT/SPF, HINFO and the
//! two-name types (MINFO, RP).

use std::net::{Ipv4Addr, Ipv6Addr};

use super::fields::{self, RdataReader};
use super::{push_fmt, Codec};
use crate::error::Result;
use crate::name::Dname;
use crate::text::Lexer;
use crate::types::Rtype;

/// Codecs of this module's types.
pub(super) fn codec(rtype: Rtype) -> Option<&'static Codec> {
    Some(match rtype {
        Rtype::A => &A,
        Rtype::AAAA => &AAAA,
        Rtype::NS | Rtype::MD | Rtype::MF | Rtype::CNAME | Rtype::MB | Rtype::MG | Rtype::MR => {
            &ONE_NAME
        }
        Rtype::PTR | Rtype::DNAME => &ONE_NAME,
        Rtype::SOA => &SOA,
        Rtype::MX | Rtype::AFSDB | Rtype::RT | Rtype::KX | Rtype::LP => &PREF_NAME,
        Rtype::TXT | Rtype::SPF => &TXT,
        Rtype::HINFO => &HINFO,
        Rtype::MINFO | Rtype::RP => &TWO_NAMES,
        _ => return None,
    })
}

static A: Codec = Codec::new(parse_a, print_a);
static AAAA: Codec = Codec::new(parse_aaaa, print_aaaa);
static ONE_NAME: Codec = Codec::new(parse_one_name, print_one_name);
static SOA: Codec = Codec::new(parse_soa, print_soa);
static PREF_NAME: Codec = Codec::new(parse_pref_name, print_pref_name);
static TXT: Codec = Codec::new(parse_txt, print_txt);
static HINFO: Codec = Codec::new(parse_hinfo, print_hinfo);
static TWO_NAMES: Codec = Codec::new(parse_two_names, print_two_names);

fn parse_a(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    fields::next_ipv4(lx, out)
}

fn print_a(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    let b = rd.bytes(4)?;
    let octets: [u8; 4] = b.try_into().unwrap_or([0; 4]);
    push_fmt(out, format_args!("{}", Ipv4Addr::from(octets)));
    Ok(())
}

fn parse_aaaa(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    fields::next_ipv6(lx, out)
}

fn print_aaaa(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    let b = rd.bytes(16)?;
    let octets: [u8; 16] = b.try_into().unwrap_or([0; 16]);
    push_fmt(out, format_args!("{}", Ipv6Addr::from(octets)));
    Ok(())
}

fn parse_one_name(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    fields::next_name(lx, "a domain name", origin, out)
}

fn print_one_name(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    push_fmt(out, format_args!("{}", rd.name()?));
    Ok(())
}

/// SOA (RFC 1035 §3.3.13): MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM; the four
/// timers accept TTL units as BIND and Knot do.
fn parse_soa(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    fields::next_name(lx, "the primary server name (MNAME)", origin, out)?;
    fields::next_name(lx, "the responsible mailbox (RNAME)", origin, out)?;
    fields::next_u32(lx, "the serial number", out)?;
    fields::next_ttl(lx, "the refresh interval", out)?;
    fields::next_ttl(lx, "the retry interval", out)?;
    fields::next_ttl(lx, "the expire interval", out)?;
    fields::next_ttl(lx, "the minimum (negative caching) TTL", out)?;
    Ok(())
}

fn print_soa(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    let mname = rd.name()?;
    let rname = rd.name()?;
    push_fmt(out, format_args!("{mname} {rname}"));
    for _ in 0..5 {
        push_fmt(out, format_args!(" {}", rd.u32()?));
    }
    Ok(())
}

fn parse_pref_name(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    fields::next_u16(lx, "a preference (0..65535)", out)?;
    fields::next_name(lx, "a domain name", origin, out)
}

fn print_pref_name(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    let pref = rd.u16()?;
    push_fmt(out, format_args!("{pref} {}", rd.name()?));
    Ok(())
}

/// TXT (RFC 1035 §3.3.14): one or more character strings.
fn parse_txt(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    let first = lx.expect("a character string")?;
    fields::parse_char_string(&first, out)?;
    while let Some(token) = lx.next_token()? {
        fields::parse_char_string(&token, out)?;
    }
    Ok(())
}

fn print_txt(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    if rd.is_empty() {
        return Err(super::bad(0, "TXT needs at least one character string"));
    }
    print_char_strings(rd, out)
}

fn print_char_strings(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    let mut first = true;
    while !rd.is_empty() {
        if !first {
            out.push(' ');
        }
        first = false;
        // Writing into a String never fails.
        let _ = fields::write_char_string(rd.char_string()?, out);
    }
    Ok(())
}

/// HINFO (RFC 1035 §3.3.2): CPU and OS character strings.
fn parse_hinfo(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    fields::parse_char_string(&lx.expect("the CPU string")?, out)?;
    fields::parse_char_string(&lx.expect("the OS string")?, out)
}

fn print_hinfo(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    let cpu = rd.char_string()?;
    let os = rd.char_string()?;
    let _ = fields::write_char_string(cpu, out);
    out.push(' ');
    let _ = fields::write_char_string(os, out);
    Ok(())
}

fn parse_two_names(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    fields::next_name(lx, "a domain name", origin, out)?;
    fields::next_name(lx, "a second domain name", origin, out)
}

fn print_two_names(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    let a = rd.name()?;
    let b = rd.name()?;
    push_fmt(out, format_args!("{a} {b}"));
    Ok(())
}
