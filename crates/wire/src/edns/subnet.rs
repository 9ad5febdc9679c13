//! EDNS Client Subnet (RFC 7871), parsed and validated; Tern does not tailor answers.
//!
//! ```text
//! FAMILY (2) | SOURCE PREFIX-LENGTH (1) | SCOPE PREFIX-LENGTH (1) | ADDRESS (ceil(source/8))
//! ```
//!
//! Rules enforced (a violation is answered with FORMERR): FAMILY 1 (IPv4) or 2 (IPv6)
//! with prefix lengths at most 32 or 128 (§7.1.2: a wrongly formatted option, e.g. an
//! unknown FAMILY); exactly as many ADDRESS bytes as SOURCE PREFIX-LENGTH needs, and no
//! address bit set beyond it (§6). [`ClientSubnet::check_query`] adds the rule for
//! queries: SCOPE PREFIX-LENGTH must be 0 (§6).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A decoded client subnet option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSubnet {
    /// The address family (1 = IPv4, 2 = IPv6).
    pub family: u16,
    /// Significant leading bits of the address the client sent.
    pub source_prefix: u8,
    /// Leading bits the answer covers (0 in queries).
    pub scope_prefix: u8,
    /// The address, zero beyond the source prefix.
    pub address: IpAddr,
}

impl ClientSubnet {
    /// Decodes and validates option data (RFC 7871 §6).
    pub fn parse(data: &[u8]) -> Result<ClientSubnet, &'static str> {
        let ([f0, f1, source, scope], address) =
            data.split_first_chunk::<4>().ok_or("client subnet option shorter than 4 bytes")?;
        let family = u16::from_be_bytes([*f0, *f1]);
        let max_prefix = match family {
            1 => 32,
            2 => 128,
            _ => return Err("client subnet family is not 1 (IPv4) or 2 (IPv6)"),
        };
        if *source > max_prefix || *scope > max_prefix {
            return Err("client subnet prefix longer than the address");
        }
        if address.len() != usize::from(source.div_ceil(8)) {
            return Err("client subnet address length does not match its source prefix");
        }
        let mut bytes = [0u8; 16];
        bytes.get_mut(..address.len()).ok_or("address too long")?.copy_from_slice(address);
        if u128::from_be_bytes(bytes) & (u128::MAX.checked_shr(u32::from(*source)).unwrap_or(0))
            != 0
        {
            return Err("client subnet address has bits set beyond its source prefix");
        }
        let address = if family == 1 {
            let [a, b, c, d, ..] = bytes;
            IpAddr::V4(Ipv4Addr::new(a, b, c, d))
        } else {
            IpAddr::V6(Ipv6Addr::from(bytes))
        };
        Ok(ClientSubnet { family, source_prefix: *source, scope_prefix: *scope, address })
    }

    /// The extra rule for options received in queries: SCOPE PREFIX-LENGTH is 0.
    pub fn check_query(&self) -> Result<(), &'static str> {
        if self.scope_prefix != 0 {
            return Err("client subnet scope prefix is not 0 in a query");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_options() {
        let v4 = ClientSubnet::parse(&[0, 1, 24, 0, 192, 0, 2]).unwrap();
        assert_eq!(v4.address, "192.0.2.0".parse::<IpAddr>().unwrap());
        assert_eq!((v4.family, v4.source_prefix, v4.scope_prefix), (1, 24, 0));
        assert!(v4.check_query().is_ok());
        let v6 = ClientSubnet::parse(&[0, 2, 56, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0]).unwrap();
        assert_eq!(v6.address, "2001:db8::".parse::<IpAddr>().unwrap());
        let zero = ClientSubnet::parse(&[0, 1, 0, 0]).unwrap();
        assert_eq!(zero.address, "0.0.0.0".parse::<IpAddr>().unwrap());
        let odd = ClientSubnet::parse(&[0, 1, 23, 0, 192, 0, 2]).unwrap();
        assert_eq!(odd.source_prefix, 23);
        let full = ClientSubnet::parse(&[0, 1, 32, 0, 192, 0, 2, 1]).unwrap();
        assert_eq!(full.address, "192.0.2.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn rfc7871_violations() {
        let bad: &[(&[u8], &str)] = &[
            (&[0, 1, 24], "short"),
            (&[0, 3, 0, 0], "unknown family"),
            (&[0, 0, 0, 0], "family 0"),
            (&[0, 1, 33, 0, 1, 2, 3, 4, 5], "prefix over 32"),
            (&[0, 2, 129, 0], "prefix over 128"),
            (&[0, 1, 8, 33, 10], "scope over 32"),
            (&[0, 1, 24, 0, 192, 0], "too few address bytes"),
            (&[0, 1, 24, 0, 192, 0, 2, 0], "too many address bytes"),
            (&[0, 1, 23, 0, 192, 0, 3], "bit beyond the prefix"),
            (&[0, 1, 0, 0, 0], "address for /0"),
        ];
        for (data, why) in bad {
            assert!(ClientSubnet::parse(data).is_err(), "{why}");
        }
        let scoped = ClientSubnet::parse(&[0, 1, 24, 16, 192, 0, 2]).unwrap();
        assert!(scoped.check_query().is_err());
    }
}
