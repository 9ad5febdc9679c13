//! Address-like records beyond A and AAAA: EUI48 and EUI64 (RFC 7043), the ILNP types
//! NID, L32 and L64 (RFC 6742; LP is with MX in [`super::basic`]), and APL address
//! prefix lists (RFC 3123).

use std::net::{Ipv4Addr, Ipv6Addr};

use super::fields::RdataReader;
use super::format::{rdata_format, FieldKind};
use super::kinds::{Eui, Ipv4, Locator64, U16};
use super::{bad, push_fmt};
use crate::error::Result;
use crate::name::Dname;
use crate::text::{Lexer, Token};

rdata_format! {
    /// EUI48 (RFC 7043 §3).
    Eui48 {
        /// The MAC-48 address.
        address: [u8; 6] as Eui<6>,
    }
}

rdata_format! {
    /// EUI64 (RFC 7043 §4).
    Eui64 {
        /// The EUI-64 address.
        address: [u8; 8] as Eui<8>,
    }
}

rdata_format! {
    /// NID (RFC 6742 §2.1).
    Nid {
        /// Lower is preferred.
        preference: u16 as U16,
        /// The 64-bit node identifier.
        node_id: u64 as Locator64,
    }
}

rdata_format! {
    /// L32 (RFC 6742 §2.2).
    L32 {
        /// Lower is preferred.
        preference: u16 as U16,
        /// The 32-bit locator, written as an IPv4 address.
        locator: Ipv4Addr as Ipv4,
    }
}

rdata_format! {
    /// L64 (RFC 6742 §2.3).
    L64 {
        /// Lower is preferred.
        preference: u16 as U16,
        /// The 64-bit locator.
        locator: u64 as Locator64,
    }
}

/// One APL item (RFC 3123 §4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AplItem {
    /// Address family (1 IPv4, 2 IPv6; IANA address family numbers).
    pub family: u16,
    /// Prefix length in bits.
    pub prefix: u8,
    /// The `!` flag: the prefix is excluded.
    pub negation: bool,
    /// The address bytes with trailing zero bytes removed (AFDPART), at most 127.
    pub address: Vec<u8>,
}

/// One item as read from the wire, borrowed.
struct RawItem<'a> {
    family: u16,
    prefix: u8,
    negation: bool,
    address: &'a [u8],
}

impl RawItem<'_> {
    /// Reads and checks an item: no trailing zero byte (§4), and the length and prefix
    /// limits of families 1 and 2. Other families are accepted as opaque bytes.
    fn read<'a>(rd: &mut RdataReader<'a>) -> Result<RawItem<'a>> {
        let at = rd.pos();
        let family = rd.u16()?;
        let prefix = rd.u8()?;
        let byte = rd.u8()?;
        let address = rd.bytes(usize::from(byte & 0x7F))?;
        if address.last() == Some(&0) {
            return Err(bad(at, "APL address with a trailing zero byte"));
        }
        let (max_len, max_prefix) = match family {
            1 => (4, 32),
            2 => (16, 128),
            _ => (127, 255),
        };
        if address.len() > max_len || prefix > max_prefix {
            return Err(bad(at, "APL prefix or address too long for its family"));
        }
        Ok(RawItem { family, prefix, negation: byte & 0x80 != 0, address })
    }

    /// Prints `[!]family:address/prefix`; other families cannot be printed.
    fn print(&self, at: usize, out: &mut String) -> Result<()> {
        let bang = if self.negation { "!" } else { "" };
        let (family, prefix) = (self.family, self.prefix);
        match family {
            1 => {
                let mut full = [0u8; 4];
                full.iter_mut().zip(self.address).for_each(|(d, s)| *d = *s);
                let addr = Ipv4Addr::from(full);
                push_fmt(out, format_args!("{bang}{family}:{addr}/{prefix}"));
            }
            2 => {
                let mut full = [0u8; 16];
                full.iter_mut().zip(self.address).for_each(|(d, s)| *d = *s);
                let addr = Ipv6Addr::from(full);
                push_fmt(out, format_args!("{bang}{family}:{addr}/{prefix}"));
            }
            _ => return Err(bad(at, "APL family without a presentation format")),
        }
        Ok(())
    }
}

/// Parses one `[!]family:address/prefix` token and appends the item.
fn parse_item(token: &Token<'_>, out: &mut Vec<u8>) -> Result<()> {
    let fail = || {
        token
            .error(format!("expected an APL item like 1:192.0.2.0/24, found '{}'", token.display()))
    };
    let text = std::str::from_utf8(token.text).map_err(|_| fail())?;
    let (negation, text) = match text.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (family, rest) = text.split_once(':').ok_or_else(fail)?;
    let (address, prefix) = rest.rsplit_once('/').ok_or_else(fail)?;
    let prefix: u8 = prefix.parse().map_err(|_| fail())?;
    let mut bytes = [0u8; 16];
    let (len, max_prefix) = match family {
        "1" => {
            let a: Ipv4Addr = address.parse().map_err(|_| fail())?;
            bytes[..4].copy_from_slice(&a.octets());
            (4, 32)
        }
        "2" => {
            let a: Ipv6Addr = address.parse().map_err(|_| fail())?;
            bytes = a.octets();
            (16, 128)
        }
        _ => return Err(token.error("APL family must be 1 (IPv4) or 2 (IPv6)")),
    };
    if prefix > max_prefix {
        return Err(token.error(format!("APL prefix longer than {max_prefix} bits")));
    }
    let used = bytes.get(..len).unwrap_or(&[]);
    let afd_len = used.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let family: u16 = if family == "1" { 1 } else { 2 };
    out.extend_from_slice(&family.to_be_bytes());
    out.push(prefix);
    out.push(u8::from(negation) << 7 | afd_len as u8);
    out.extend_from_slice(used.get(..afd_len).unwrap_or(&[]));
    Ok(())
}

/// The APL item list kind: zero or more items to the end of the RDATA.
pub(crate) struct AplItems;

impl FieldKind for AplItems {
    type Value = Vec<AplItem>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        while let Some(token) = lx.next_token()? {
            parse_item(&token, out)?;
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let mut first = true;
        while !rd.is_empty() {
            let at = rd.pos();
            let item = RawItem::read(rd)?;
            if !first {
                out.push(' ');
            }
            first = false;
            item.print(at, out)?;
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        while !rd.is_empty() {
            RawItem::read(rd)?;
        }
        Ok(())
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<AplItem>> {
        let mut items = Vec::new();
        while !rd.is_empty() {
            let raw = RawItem::read(rd)?;
            items.push(AplItem {
                family: raw.family,
                prefix: raw.prefix,
                negation: raw.negation,
                address: raw.address.to_vec(),
            });
        }
        Ok(items)
    }

    fn encode(value: &Vec<AplItem>, out: &mut Vec<u8>) {
        for item in value {
            let len = item.address.len().min(127);
            out.extend_from_slice(&item.family.to_be_bytes());
            out.push(item.prefix);
            out.push(u8::from(item.negation) << 7 | len as u8);
            out.extend_from_slice(item.address.get(..len).unwrap_or(&[]));
        }
    }
}

rdata_format! {
    /// APL (RFC 3123 §4).
    Apl {
        /// The items, possibly none.
        items: Vec<AplItem> as AplItems,
    }
}

#[cfg(test)]
mod tests {
    use crate::rdata::tests::round_trip;
    use crate::rdata::{parse_str, to_text, validate};
    use crate::types::Rtype;

    #[test]
    fn rfc7043_eui() {
        let wire = round_trip(Rtype::EUI48, "00-00-5e-00-53-2A", "00-00-5e-00-53-2a");
        assert_eq!(wire, [0x00, 0x00, 0x5e, 0x00, 0x53, 0x2a]);
        let wire = round_trip(Rtype::EUI64, "00-00-5e-ef-10-00-00-2a", "00-00-5e-ef-10-00-00-2a");
        assert_eq!(wire, [0x00, 0x00, 0x5e, 0xef, 0x10, 0x00, 0x00, 0x2a]);
        assert!(parse_str(Rtype::EUI48, "00:00:5e:00:53:2a", None).is_err());
        assert!(parse_str(Rtype::EUI48, "00-00-5e-00-53-2a-00", None).is_err());
    }

    #[test]
    fn rfc6742_ilnp() {
        let wire = round_trip(Rtype::NID, "10 0014:4fff:ff20:ee64", "10 0014:4fff:ff20:ee64");
        assert_eq!(wire, [0, 10, 0x00, 0x14, 0x4f, 0xff, 0xff, 0x20, 0xee, 0x64]);
        assert_eq!(round_trip(Rtype::L32, "10 10.1.2.0", "10 10.1.2.0"), [0, 10, 10, 1, 2, 0]);
        round_trip(Rtype::L64, "10 2001:0DB8:1140:1000", "10 2001:0db8:1140:1000");
        round_trip(Rtype::LP, "10 l64-subnet1.example.com.", "10 l64-subnet1.example.com.");
        assert!(parse_str(Rtype::L64, "10 2001:db8:1140:1000", None).is_err());
    }

    #[test]
    fn rfc3123_apl_examples() {
        let wire = round_trip(
            Rtype::APL,
            "1:192.168.32.0/21 !1:192.168.38.0/28",
            "1:192.168.32.0/21 !1:192.168.38.0/28",
        );
        assert_eq!(wire, [0, 1, 21, 3, 192, 168, 32, 0, 1, 28, 0x83, 192, 168, 38]);
        round_trip(
            Rtype::APL,
            "1:192.168.42.0/26 1:192.168.42.64/26 1:192.168.42.128/25",
            "1:192.168.42.0/26 1:192.168.42.64/26 1:192.168.42.128/25",
        );
        round_trip(
            Rtype::APL,
            "1:127.0.0.1/32 1:172.16.64.0/22",
            "1:127.0.0.1/32 1:172.16.64.0/22",
        );
        let wire = round_trip(
            Rtype::APL,
            "1:224.0.0.0/4 2:FF00:0:0:0:0:0:0:0/8",
            "1:224.0.0.0/4 2:ff00::/8",
        );
        assert_eq!(wire, [0, 1, 4, 1, 224, 0, 2, 8, 1, 0xff]);
        assert_eq!(round_trip(Rtype::APL, "", ""), b"");
        assert_eq!(round_trip(Rtype::APL, "1:0.0.0.0/0", "1:0.0.0.0/0"), [0, 1, 0, 0]);
        assert!(parse_str(Rtype::APL, "1:192.0.2.0/33", None).is_err());
        assert!(parse_str(Rtype::APL, "3:00/8", None).is_err());
        assert!(validate(Rtype::APL, &[0, 1, 8, 2, 10, 0]).is_err(), "trailing zero");
        assert!(validate(Rtype::APL, &[0, 1, 8, 5, 1, 2, 3, 4, 5]).is_err(), "too long");
        // Unknown families are valid on the wire but print in the generic form.
        assert!(validate(Rtype::APL, &[0, 3, 8, 1, 0xAA]).is_ok());
        assert_eq!(to_text(Rtype::APL, &[0, 3, 8, 1, 0xAA]), r"\# 5 00030801AA");
    }
}
