//! DNSKEY RDATA (RFC 4034 §2.1), key tags (RFC 4034 Appendix B) and DS digests
//! (RFC 4034 §5.1.4, SHA-256 RFC 4509 §2.1, SHA-384 RFC 6605 §2).

use aws_lc_rs::digest;
use tern_wire::Dname;

use crate::error::{Error, Result};

/// The DNSKEY flags of a zone signing key: the Zone Key bit (RFC 4034 §2.1.1).
pub const FLAGS_ZSK: u16 = 256;
/// The DNSKEY flags of a key signing (or combined) key: Zone Key and Secure Entry Point.
pub const FLAGS_KSK: u16 = 257;
/// The protocol field of every DNSKEY (RFC 4034 §2.1.2).
pub const PROTOCOL: u8 = 3;

/// DNSKEY RDATA: flags, protocol 3, algorithm, public key (in its algorithm's form).
pub fn dnskey_rdata(flags: u16, algorithm: u8, public_key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + public_key.len());
    out.extend_from_slice(&flags.to_be_bytes());
    out.push(PROTOCOL);
    out.push(algorithm);
    out.extend_from_slice(public_key);
    out
}

/// The key tag of DNSKEY RDATA (RFC 4034 Appendix B: the ones-complement-like sum of its
/// 16-bit words; algorithm 1, which this crate never makes, is computed the same way).
pub fn key_tag(rdata: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, &byte) in rdata.iter().enumerate() {
        sum += if i % 2 == 0 { u32::from(byte) << 8 } else { u32::from(byte) };
    }
    sum += (sum >> 16) & 0xFFFF;
    (sum & 0xFFFF) as u16
}

/// A DS digest type (IANA "Delegation Signer (DS) Resource Record Digest Algorithms").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DigestType {
    /// SHA-256 (2, RFC 4509): the one every validator knows.
    #[default]
    Sha256,
    /// SHA-384 (4, RFC 6605).
    Sha384,
}

impl DigestType {
    /// The digest type number in DS records.
    pub fn number(self) -> u8 {
        match self {
            DigestType::Sha256 => 2,
            DigestType::Sha384 => 4,
        }
    }

    fn algorithm(self) -> &'static digest::Algorithm {
        match self {
            DigestType::Sha256 => &digest::SHA256,
            DigestType::Sha384 => &digest::SHA384,
        }
    }
}

/// DS RDATA for the key with DNSKEY RDATA `dnskey` at `owner` (RFC 4034 §5.1.4: the
/// digest of the owner in canonical form followed by the DNSKEY RDATA).
pub fn ds_rdata(owner: &Dname, dnskey: &[u8], digest_type: DigestType) -> Result<Vec<u8>> {
    let Some(&algorithm) = dnskey.get(3) else {
        return Err(Error::Crypto("DNSKEY RDATA shorter than its fixed fields"));
    };
    let mut input = Vec::with_capacity(owner.len() + dnskey.len());
    owner.write_lowercase(&mut input);
    input.extend_from_slice(dnskey);
    let hash = digest::digest(digest_type.algorithm(), &input);
    let mut out = Vec::with_capacity(4 + hash.as_ref().len());
    out.extend_from_slice(&key_tag(dnskey).to_be_bytes());
    out.push(algorithm);
    out.push(digest_type.number());
    out.extend_from_slice(hash.as_ref());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::{Name, Rtype};

    /// The DNSKEY of RFC 4034 §5.4 (key id 60485), as RFC 4509 §2.3 uses it too.
    const RFC_KEY: &str = "256 3 5 AQOeiiR0GOMYkDshWoSKz9XzfwJr1AYtsmx3TGkJaNXVbfi/2pHm822aJ5iI9BMzNXxeYCmZDRD99WYwYqUSdjMmmAphXdvxegXd/M5+X7OrzKBaMbCVdFLUUh6DhweJBjEVv5f2wwjM9XzcnOf+EPbtG9DMBmADjFDc2w/rljwvFw==";

    fn rfc_key() -> Vec<u8> {
        tern_wire::rdata::parse_str(Rtype::DNSKEY, RFC_KEY, None).unwrap()
    }

    #[test]
    fn key_tag_of_the_rfc_4034_example() {
        assert_eq!(key_tag(&rfc_key()), 60485);
    }

    #[test]
    fn ds_digests_of_the_rfc_examples() {
        let owner: Name = "dskey.example.com.".parse().unwrap();
        let ds = ds_rdata(&owner, &rfc_key(), DigestType::Sha256).unwrap();
        // RFC 4509 §2.3.
        assert_eq!(
            tern_wire::rdata::to_text(Rtype::DS, &ds),
            "60485 5 2 D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A"
        );
        // The owner's case does not matter (canonical form).
        let upper: Name = "DSKEY.Example.COM.".parse().unwrap();
        assert_eq!(ds_rdata(&upper, &rfc_key(), DigestType::Sha256).unwrap(), ds);
        let ds = ds_rdata(&owner, &rfc_key(), DigestType::Sha384).unwrap();
        // As BIND's dnssec-dsfromkey -a SHA-384 gives it.
        assert_eq!(
            tern_wire::rdata::to_text(Rtype::DS, &ds),
            "60485 5 4 AB64DBEBE13C0B6BAE558B78CCAB93B836F8ADA4CBED2D4484A8715A819DE7B9E846315E70EA5D884B377394BDAF16A3"
        );
        assert!(ds_rdata(&owner, &[1, 0, 3], DigestType::Sha256).is_err());
    }

    #[test]
    fn dnskey_layout() {
        assert_eq!(dnskey_rdata(FLAGS_KSK, 13, &[9, 9]), [1, 1, 3, 13, 9, 9]);
        assert_eq!(dnskey_rdata(FLAGS_ZSK, 15, &[]), [1, 0, 3, 15]);
    }
}
