//! Records that keep copies of a zone in step: CSYNC (RFC 7477, child-to-parent
//! synchronisation) and ZONEMD (RFC 8976, a digest over the whole zone).

use super::bitmap::TypeBitmap;
use super::format::rdata_format;
use super::kinds::{Hex, U16, U32, U8};
use crate::types::Rtype;

/// RFC 8976 §2.2.4: the digest is at least 12 octets, and exactly the hash length for
/// the known hash algorithms (1 = SHA-384, 2 = SHA-512, §5.3).
fn zonemd_digest_length(wire: &[u8]) -> Result<(), &'static str> {
    let Some((&algorithm, digest)) = wire.get(5..).and_then(<[u8]>::split_first) else {
        return Ok(()); // too short: the field checks report it
    };
    let expected = match algorithm {
        1 => Some(48),
        2 => Some(64),
        _ => None,
    };
    if expected.is_some_and(|len| digest.len() != len) {
        return Err("ZONEMD digest length does not match the hash algorithm");
    }
    Ok(())
}

rdata_format! {
    /// ZONEMD (RFC 8976 §2).
    Zonemd [zonemd_digest_length] {
        /// SOA serial of the zone digested.
        serial: u32 as U32,
        /// Digest scheme (1 = SIMPLE).
        scheme: u8 as U8,
        /// Hash algorithm (1 = SHA-384, 2 = SHA-512).
        hash_algorithm: u8 as U8,
        /// The digest, at least 12 bytes, printed in hex.
        digest: Vec<u8> as Hex<12>,
    }
}

rdata_format! {
    /// CSYNC (RFC 7477 §2.1).
    Csync {
        /// SOA serial of the child zone.
        serial: u32 as U32,
        /// Flags (bit 0 immediate, bit 1 soaminimum).
        flags: u16 as U16,
        /// Types to synchronise.
        types: Vec<Rtype> as TypeBitmap,
    }
}

#[cfg(test)]
mod tests {
    use crate::rdata::parse_str;
    use crate::rdata::tests::round_trip;
    use crate::types::Rtype;

    const A1_DIGEST: &str = "C68090D90A7AED716BC459F9340E3D7C1370D4D24B7E2FC3A1DDC0B9A87153B9A9713B3C9AE5CC27777F98B8E730044C";

    #[test]
    fn rfc8976_appendix_a1() {
        let text =
            format!("2018031900 1 1 ( {} {} )", &A1_DIGEST[..48].to_lowercase(), &A1_DIGEST[48..]);
        let wire = round_trip(Rtype::ZONEMD, &text, &format!("2018031900 1 1 {A1_DIGEST}"));
        assert_eq!(&wire[..6], [0x78, 0x48, 0xb9, 0x1c, 1, 1]);
        assert_eq!(wire.len(), 6 + 48);
        // Unknown scheme and algorithm (as in A.2) take any digest of 12 bytes or more.
        round_trip(
            Rtype::ZONEMD,
            "2018031900 241 240 00112233445566778899AABB",
            "2018031900 241 240 00112233445566778899AABB",
        );
        assert!(
            parse_str(Rtype::ZONEMD, "2018031900 241 240 00112233445566778899AA", None).is_err()
        );
        assert!(parse_str(Rtype::ZONEMD, "2018031900 1 2 00112233445566778899AABB", None).is_err());
    }

    #[test]
    fn rfc7477_csync_example() {
        // RFC 7477 §2.2.
        let wire = round_trip(Rtype::CSYNC, "66 3 A NS AAAA", "66 3 A NS AAAA");
        assert_eq!(wire, [0, 0, 0, 66, 0, 3, 0, 4, 0x60, 0, 0, 0x08]);
    }
}
