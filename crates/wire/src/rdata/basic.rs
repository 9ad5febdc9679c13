//! The RFC 1035 family of types and their close relatives: A, AAAA, the single-name types
//! (NS, CNAME, PTR, DNAME, …), SOA, the preference-and-name types (MX, AFSDB, RT, KX,
//! LP), TXT and its look-alikes, HINFO, the two-name types (MINFO, RP, TALINK), and the
//! RFC 1183 / RFC 2163 leftovers X25 and PX.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::format::rdata_format;
use super::kinds::{CharStr, CharString, CharStrs, Duration, Ipv4, Ipv6, NameKind, U16, U32};
use crate::name::Name;

rdata_format! {
    /// A (RFC 1035 §3.4.1).
    A {
        /// The IPv4 address.
        address: Ipv4Addr as Ipv4,
    }
}

rdata_format! {
    /// AAAA (RFC 3596 §2.2).
    Aaaa {
        /// The IPv6 address.
        address: Ipv6Addr as Ipv6,
    }
}

rdata_format! {
    /// One domain name: NS, CNAME, PTR (RFC 1035 §3.3), DNAME (RFC 6672 §2.1), and the
    /// obsolete MB, MD, MF, MG, MR.
    Target {
        /// The name the record points to.
        target: Name as NameKind,
    }
}

rdata_format! {
    /// SOA (RFC 1035 §3.3.13). The four timers accept TTL units in text, as BIND and
    /// Knot DNS do.
    Soa {
        /// The primary name server.
        mname: Name as NameKind,
        /// The responsible person's mailbox.
        rname: Name as NameKind,
        /// Zone version.
        serial: u32 as U32,
        /// Seconds between refresh checks by secondaries.
        refresh: u32 as Duration,
        /// Seconds between retries of a failed refresh.
        retry: u32 as Duration,
        /// Seconds after which secondaries stop answering without a refresh.
        expire: u32 as Duration,
        /// TTL of negative answers (RFC 2308 §4).
        minimum: u32 as Duration,
    }
}

rdata_format! {
    /// A preference and a name: MX (RFC 1035 §3.3.9), AFSDB (RFC 1183 §1, the subtype
    /// in `preference`), RT (RFC 1183 §3.3), KX (RFC 2230 §3.1), LP (RFC 6742 §2.4).
    Exchange {
        /// Lower is preferred (AFSDB: the subtype).
        preference: u16 as U16,
        /// The host.
        exchange: Name as NameKind,
    }
}

rdata_format! {
    /// One or more character strings: TXT (RFC 1035 §3.3.14), SPF (RFC 7208 §3.1),
    /// RESINFO (RFC 9606 §4), AVC, NINFO, WALLET.
    Txt {
        /// The strings, in order.
        strings: Vec<CharString> as CharStrs,
    }
}

rdata_format! {
    /// HINFO (RFC 1035 §3.3.2).
    Hinfo {
        /// CPU type.
        cpu: CharString as CharStr,
        /// Operating system.
        os: CharString as CharStr,
    }
}

rdata_format! {
    /// Two names: MINFO (RFC 1035 §3.3.7), RP (RFC 1183 §2.2), TALINK.
    NamePair {
        /// MINFO RMAILBX, RP mailbox, TALINK previous.
        first: Name as NameKind,
        /// MINFO EMAILBX, RP TXT owner, TALINK next.
        second: Name as NameKind,
    }
}

rdata_format! {
    /// X25 (RFC 1183 §3.1): a PSDN address.
    X25 {
        /// The address digits.
        address: CharString as CharStr,
    }
}

rdata_format! {
    /// PX (RFC 2163 §4): X.400 mail mapping.
    Px {
        /// Lower is preferred.
        preference: u16 as U16,
        /// RFC 822 domain.
        map822: Name as NameKind,
        /// X.400 domain.
        mapx400: Name as NameKind,
    }
}

#[cfg(test)]
mod tests {
    use crate::rdata::tests::{origin, round_trip};
    use crate::rdata::{parse_str, to_text, validate};
    use crate::types::Rtype;

    #[test]
    fn addresses_and_names() {
        assert_eq!(round_trip(Rtype::A, "192.0.2.1", "192.0.2.1"), [192, 0, 2, 1]);
        let mut v6 = [0u8; 16];
        v6[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        v6[15] = 1;
        assert_eq!(round_trip(Rtype::AAAA, "2001:DB8::1", "2001:db8::1"), v6);
        let ns = round_trip(Rtype::NS, "ns1", "ns1.example.com.");
        assert_eq!(ns, b"\x03ns1\x07example\x03com\x00");
        let mx = round_trip(Rtype::MX, "10 @", "10 example.com.");
        assert_eq!(mx, b"\x00\x0a\x07example\x03com\x00");
        round_trip(Rtype::DNAME, "Target.Example.", "Target.Example.");
        round_trip(Rtype::AFSDB, "1 afs.example.", "1 afs.example.");
        round_trip(Rtype::KX, "10 kx.example.", "10 kx.example.");
        round_trip(Rtype::RP, "mbox.example. txt.example.", "mbox.example. txt.example.");
        round_trip(Rtype::PX, "10 a.example. b.example.", "10 a.example. b.example.");
    }

    #[test]
    fn strings() {
        let txt = round_trip(
            Rtype::TXT,
            r#""v=spf1 -all" plain "q\"\\" "\009""#,
            r#""v=spf1 -all" "plain" "q\"\\" "\009""#,
        );
        assert_eq!(txt, b"\x0bv=spf1 -all\x05plain\x03q\"\\\x01\x09");
        let hinfo = round_trip(Rtype::HINFO, "PDP-11 UNIX", r#""PDP-11" "UNIX""#);
        assert_eq!(hinfo, b"\x06PDP-11\x04UNIX");
        round_trip(Rtype::SPF, "\"\"", "\"\"");
        round_trip(Rtype::X25, "311061700956", "\"311061700956\"");
        assert!(validate(Rtype::TXT, b"").is_err(), "TXT needs a string");
        assert!(parse_str(Rtype::TXT, "", None).is_err());
        let long = format!("\"{}\"", "x".repeat(256));
        assert!(parse_str(Rtype::TXT, &long, None).is_err());
        let max = format!("\"{}\"", "x".repeat(255));
        round_trip(Rtype::TXT, &max, &max);
    }

    #[test]
    fn soa_accepts_units_across_lines() {
        let o = origin();
        let text = "ns hostmaster ( 2026112201 ; serial\n 2h 1h 2w 1h )";
        let wire = parse_str(Rtype::SOA, text, Some(&o)).unwrap();
        assert_eq!(
            to_text(Rtype::SOA, &wire),
            "ns.example.com. hostmaster.example.com. 2026112201 7200 3600 1209600 3600"
        );
        // Timers use all 32 bits.
        round_trip(
            Rtype::SOA,
            ". . 4294967295 4294967295 0 0 0",
            ". . 4294967295 4294967295 0 0 0",
        );
    }
}
