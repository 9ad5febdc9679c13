//! The two types whose address field changes shape with a type code: IPSECKEY (RFC 4025)
//! and AMTRELAY (RFC 8777). Type 0 is no address (`.` in text), 1 an IPv4 address, 2 an
//! IPv6 address, 3 an uncompressed domain name.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::fields::{self, RdataReader};
use super::format::{FieldKind, Format};
use super::kinds::{Base64, Ipv4, Ipv6, NameKind, U8};
use super::{bad, push_fmt};
use crate::error::Result;
use crate::name::{Dname, Name};
use crate::text::Lexer;

/// An IPSECKEY gateway or AMTRELAY relay.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Gateway {
    /// Type 0: none.
    None,
    /// Type 1.
    Ipv4(Ipv4Addr),
    /// Type 2.
    Ipv6(Ipv6Addr),
    /// Type 3.
    Name(Name),
}

impl Gateway {
    /// The type code of this gateway.
    pub fn type_code(&self) -> u8 {
        match self {
            Gateway::None => 0,
            Gateway::Ipv4(_) => 1,
            Gateway::Ipv6(_) => 2,
            Gateway::Name(_) => 3,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Gateway::None => {}
            Gateway::Ipv4(a) => Ipv4::encode(a, out),
            Gateway::Ipv6(a) => Ipv6::encode(a, out),
            Gateway::Name(n) => NameKind::encode(n, out),
        }
    }

    fn decode(code: u8, at: usize, rd: &mut RdataReader<'_>) -> Result<Gateway> {
        Ok(match code {
            0 => Gateway::None,
            1 => Gateway::Ipv4(Ipv4::decode(rd)?),
            2 => Gateway::Ipv6(Ipv6::decode(rd)?),
            3 => Gateway::Name(NameKind::decode(rd)?),
            _ => return Err(unknown_type(at)),
        })
    }
}

fn unknown_type(at: usize) -> crate::error::Error {
    bad(at, "gateway type must be 0 (none), 1 (IPv4), 2 (IPv6) or 3 (name)")
}

/// Reads a gateway type (0..=3) and appends it.
fn next_gateway_type(lx: &mut Lexer<'_>, out: &mut Vec<u8>) -> Result<u8> {
    let token = lx.expect("a gateway type (0..3)")?;
    let code: u8 = token.number("a gateway type (0..3)")?;
    if code > 3 {
        return Err(token.error("gateway type must be 0 (none), 1 (IPv4), 2 (IPv6) or 3 (name)"));
    }
    out.push(code);
    Ok(code)
}

/// Reads the gateway token for `code` and appends its wire form.
fn parse_gateway(
    code: u8,
    lx: &mut Lexer<'_>,
    origin: Option<&Dname>,
    out: &mut Vec<u8>,
) -> Result<()> {
    match code {
        0 => {
            let token = lx.expect("'.' for no gateway")?;
            if token.text != b"." {
                return Err(token.error("gateway type 0 needs '.' as the gateway"));
            }
            Ok(())
        }
        1 => fields::next_ipv4(lx, out),
        2 => fields::next_ipv6(lx, out),
        3 => fields::next_name(lx, "a gateway name", origin, out),
        _ => Err(lx.error_here("gateway type must be 0, 1, 2 or 3")), // checked by the caller
    }
}

/// Prints the gateway for `code`.
fn print_gateway(code: u8, at: usize, rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
    match code {
        0 => out.push('.'),
        1 => Ipv4::print(rd, out)?,
        2 => Ipv6::print(rd, out)?,
        3 => NameKind::print(rd, out)?,
        _ => return Err(unknown_type(at)),
    }
    Ok(())
}

/// Checks the gateway for `code` without printing.
fn check_gateway(code: u8, at: usize, rd: &mut RdataReader<'_>) -> Result<()> {
    match code {
        0 => Ok(()),
        1 => Ipv4::check(rd),
        2 => Ipv6::check(rd),
        3 => NameKind::check(rd),
        _ => Err(unknown_type(at)),
    }
}

/// IPSECKEY (RFC 4025 §2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ipseckey {
    /// Lower is preferred.
    pub precedence: u8,
    /// Public key algorithm (0 none, 1 DSA, 2 RSA, 3 ECDSA).
    pub algorithm: u8,
    /// The gateway (its type code goes on the wire before the algorithm).
    pub gateway: Gateway,
    /// The public key, printed in base64; may be empty.
    pub public_key: Vec<u8>,
}

impl Format for Ipseckey {
    fn parse(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        U8::parse(lx, origin, out)?;
        let code = next_gateway_type(lx, out)?;
        U8::parse(lx, origin, out)?;
        parse_gateway(code, lx, origin, out)?;
        Base64::parse(lx, origin, out)
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let precedence = rd.u8()?;
        let at = rd.pos();
        let code = rd.u8()?;
        let algorithm = rd.u8()?;
        push_fmt(out, format_args!("{precedence} {code} {algorithm} "));
        print_gateway(code, at, rd, out)?;
        if !rd.is_empty() {
            out.push(' ');
            Base64::print(rd, out)?;
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.u8()?;
        let at = rd.pos();
        let code = rd.u8()?;
        rd.u8()?;
        check_gateway(code, at, rd)?;
        Base64::check(rd)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Self> {
        let precedence = rd.u8()?;
        let at = rd.pos();
        let code = rd.u8()?;
        let algorithm = rd.u8()?;
        let gateway = Gateway::decode(code, at, rd)?;
        Ok(Ipseckey { precedence, algorithm, gateway, public_key: Base64::decode(rd)? })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[self.precedence, self.gateway.type_code(), self.algorithm]);
        self.gateway.encode(out);
        out.extend_from_slice(&self.public_key);
    }
}

/// AMTRELAY (RFC 8777 §4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Amtrelay {
    /// Lower is preferred.
    pub precedence: u8,
    /// The D bit: discovery is optional.
    pub discovery_optional: bool,
    /// The relay (its type code shares a byte with the D bit).
    pub relay: Gateway,
}

impl Format for Amtrelay {
    fn parse(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        U8::parse(lx, origin, out)?;
        let d_token = lx.expect("the discovery-optional bit (0 or 1)")?;
        let d: u8 = d_token.number("the discovery-optional bit (0 or 1)")?;
        if d > 1 {
            return Err(d_token.error("the discovery-optional bit must be 0 or 1"));
        }
        let code = next_gateway_type(lx, out)?;
        if let Some(byte) = out.last_mut() {
            *byte |= d << 7;
        }
        parse_gateway(code, lx, origin, out)
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let precedence = rd.u8()?;
        let at = rd.pos();
        let byte = rd.u8()?;
        push_fmt(out, format_args!("{precedence} {} {} ", byte >> 7, byte & 0x7F));
        print_gateway(byte & 0x7F, at, rd, out)
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.u8()?;
        let at = rd.pos();
        let byte = rd.u8()?;
        check_gateway(byte & 0x7F, at, rd)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Self> {
        let precedence = rd.u8()?;
        let at = rd.pos();
        let byte = rd.u8()?;
        let relay = Gateway::decode(byte & 0x7F, at, rd)?;
        Ok(Amtrelay { precedence, discovery_optional: byte & 0x80 != 0, relay })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let d = if self.discovery_optional { 0x80 } else { 0 };
        out.extend_from_slice(&[self.precedence, d | self.relay.type_code()]);
        self.relay.encode(out);
    }
}

#[cfg(test)]
mod tests {
    use crate::rdata::tests::round_trip;
    use crate::rdata::{parse_str, validate};
    use crate::types::Rtype;

    #[test]
    fn rfc4025_ipseckey_examples() {
        // §3.1.
        let key = "AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==";
        let wire = round_trip(
            Rtype::IPSECKEY,
            &format!("( 10 1 2 192.0.2.38 {key} )"),
            &format!("10 1 2 192.0.2.38 {key}"),
        );
        assert_eq!(&wire[..7], [10, 1, 2, 192, 0, 2, 38]);
        let wire =
            round_trip(Rtype::IPSECKEY, &format!("10 0 2 . {key}"), &format!("10 0 2 . {key}"));
        assert_eq!(&wire[..4], [10, 0, 2, 0x01]);
        round_trip(
            Rtype::IPSECKEY,
            &format!("10 1 2 192.0.2.3 {key}"),
            &format!("10 1 2 192.0.2.3 {key}"),
        );
        round_trip(
            Rtype::IPSECKEY,
            &format!("10 3 2 mygateway.example.com. {key}"),
            &format!("10 3 2 mygateway.example.com. {key}"),
        );
        let wire = round_trip(
            Rtype::IPSECKEY,
            &format!("10 2 2 2001:0DB8:0:8002::2000:1 {key}"),
            &format!("10 2 2 2001:db8:0:8002::2000:1 {key}"),
        );
        assert_eq!(wire.len(), 3 + 16 + 34);
        // No key at all.
        round_trip(Rtype::IPSECKEY, "10 0 0 .", "10 0 0 .");
        assert!(parse_str(Rtype::IPSECKEY, "10 0 2 gw.example. AQID", None).is_err());
        assert!(parse_str(Rtype::IPSECKEY, "10 4 2 . AQID", None).is_err());
        assert!(validate(Rtype::IPSECKEY, &[10, 4, 2]).is_err());
    }

    #[test]
    fn rfc8777_amtrelay_examples() {
        // §4.4 style records.
        let wire = round_trip(Rtype::AMTRELAY, "10 0 1 203.0.113.15", "10 0 1 203.0.113.15");
        assert_eq!(wire, [10, 1, 203, 0, 113, 15]);
        let wire = round_trip(Rtype::AMTRELAY, "10 1 2 2001:db8::15", "10 1 2 2001:db8::15");
        assert_eq!(&wire[..2], [10, 0x82]);
        round_trip(
            Rtype::AMTRELAY,
            "128 1 3 amtrelays.example.com.",
            "128 1 3 amtrelays.example.com.",
        );
        assert_eq!(round_trip(Rtype::AMTRELAY, "0 0 0 .", "0 0 0 ."), [0, 0]);
        assert!(parse_str(Rtype::AMTRELAY, "0 2 0 .", None).is_err());
        assert!(parse_str(Rtype::AMTRELAY, "0 0 4 .", None).is_err());
        assert!(validate(Rtype::AMTRELAY, &[0, 0x84]).is_err());
    }
}
