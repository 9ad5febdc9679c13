//! The RRSIG of one RRset (RFC 4034 §3): its fields, the data it signs (§3.1.8.1: the
//! RRSIG RDATA without the signature, then the RRset in canonical form, §6.2, and
//! canonical order, §6.3, duplicates removed), and the signature.
//!
//! Class IN only: Tern's zones are IN.

use tern_wire::{Class, Dname, Rtype};

use crate::error::{Error, Result};
use crate::key::SigningKey;
use crate::rdatas::Rdatas;

/// One RRset to sign: RDATA in uncompressed wire form, in any order, duplicates allowed.
#[derive(Debug, Clone, Copy)]
pub struct RrsetRef<'a> {
    /// The owner (any case; signed lower-cased).
    pub owner: &'a Dname,
    /// The type.
    pub rtype: Rtype,
    /// The TTL: the RRSIG's original TTL and TTL (RFC 4034 §3, §3.1.4).
    pub ttl: u32,
    /// The records' RDATA.
    pub rdatas: &'a Rdatas<'a>,
}

/// Buffers kept between RRsets, so that signing a zone allocates nothing per RRset but
/// the RRSIG RDATA it keeps.
#[derive(Debug, Default)]
pub struct Scratch {
    data: Vec<u8>,
    canonical: Vec<u8>,
    ranges: Vec<(usize, usize)>,
    /// Owner | type | class | TTL: the start of every record of the RRset signed.
    fixed: Vec<u8>,
}

/// The Labels field for `owner` (RFC 4034 §3.1.3): its labels but the root and a leading
/// `*` of a wildcard.
pub fn rrsig_labels(owner: &Dname) -> u8 {
    let labels = owner.label_count() - usize::from(owner.is_wildcard());
    labels as u8 // at most 127
}

/// Appends the RRSIG RDATA up to the signature (RFC 4034 §3.1): the signer's name
/// lower-cased, as §3.1.8.1 wants it in the signed data, and so in the record too.
pub fn rrsig_header(
    rrset: &RrsetRef<'_>,
    key: &SigningKey,
    signer: &Dname,
    (inception, expiration): (u32, u32),
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(&rrset.rtype.0.to_be_bytes());
    out.push(key.algorithm().number());
    out.push(rrsig_labels(rrset.owner));
    out.extend_from_slice(&rrset.ttl.to_be_bytes());
    out.extend_from_slice(&expiration.to_be_bytes());
    out.extend_from_slice(&inception.to_be_bytes());
    out.extend_from_slice(&key.key_tag().to_be_bytes());
    signer.write_lowercase(out);
}

/// Appends the records of `rrset` as RFC 4034 §3.1.8.1 signs them: each as owner
/// (lower-cased) | type | class | original TTL | RDATA length | canonical RDATA, sorted
/// by canonical RDATA (§6.3), duplicates once.
pub fn append_canonical_rrset(rrset: &RrsetRef<'_>, scratch: &mut Scratch) -> Result<()> {
    let Scratch { data, canonical, ranges, fixed } = scratch;
    fixed.clear();
    rrset.owner.write_lowercase(fixed);
    fixed.extend_from_slice(&rrset.rtype.0.to_be_bytes());
    fixed.extend_from_slice(&Class::IN.0.to_be_bytes());
    fixed.extend_from_slice(&rrset.ttl.to_be_bytes());
    if let (1, Some(rdata)) = (rrset.rdatas.len(), rrset.rdatas.first()) {
        // One record, as most RRsets are: nothing to sort, its canonical form written
        // in place.
        data.extend_from_slice(fixed);
        let at = data.len();
        data.extend_from_slice(&[0, 0]);
        canonical_rdata(rrset, rdata, data)?;
        let len = rdata_len(rrset, data.len() - at - 2)?;
        data.get_mut(at..at + 2).unwrap_or_default().copy_from_slice(&len.to_be_bytes());
        return Ok(());
    }
    canonical.clear();
    ranges.clear();
    for rdata in rrset.rdatas.iter() {
        let start = canonical.len();
        canonical_rdata(rrset, rdata, canonical)?;
        ranges.push((start, canonical.len()));
    }
    let slice = |&(a, b): &(usize, usize)| canonical.get(a..b).unwrap_or(&[]);
    ranges.sort_unstable_by(|x, y| slice(x).cmp(slice(y)));
    ranges.dedup_by(|x, y| slice(x) == slice(y));
    for range in ranges.iter() {
        let rdata = slice(range);
        let len = rdata_len(rrset, rdata.len())?;
        data.extend_from_slice(fixed);
        data.extend_from_slice(&len.to_be_bytes());
        data.extend_from_slice(rdata);
    }
    Ok(())
}

/// Appends the canonical form of `rdata`, a record of `rrset` (RFC 4034 §6.2).
fn canonical_rdata(rrset: &RrsetRef<'_>, rdata: &[u8], out: &mut Vec<u8>) -> Result<()> {
    tern_wire::rdata::canonical_wire(rrset.rtype, rdata, out)
        .map_err(|e| Error::Zone(format!("{} {}: {e}", rrset.owner, rrset.rtype)))
}

/// The RDLENGTH of an RDATA of `len` bytes of `rrset`.
fn rdata_len(rrset: &RrsetRef<'_>, len: usize) -> Result<u16> {
    u16::try_from(len)
        .map_err(|_| Error::Zone(format!("{} {}: RDATA too long", rrset.owner, rrset.rtype)))
}

/// The data an RRSIG made with `key` signs, for `rrset` (RFC 4034 §3.1.8.1).
pub fn signed_data<'s>(
    rrset: &RrsetRef<'_>,
    key: &SigningKey,
    signer: &Dname,
    times: (u32, u32),
    scratch: &'s mut Scratch,
) -> Result<&'s [u8]> {
    scratch.data.clear();
    rrsig_header(rrset, key, signer, times, &mut scratch.data);
    append_canonical_rrset(rrset, scratch)?;
    Ok(&scratch.data)
}

/// The RRSIG RDATA over `rrset` by `key` of the zone `signer`, valid over `times`
/// (inception, expiration).
pub fn sign_rrset(
    rrset: &RrsetRef<'_>,
    key: &SigningKey,
    signer: &Dname,
    times: (u32, u32),
    scratch: &mut Scratch,
) -> Result<Vec<u8>> {
    let data = signed_data(rrset, key, signer, times, scratch)?;
    // The signed data starts with the RRSIG RDATA up to the signature.
    let header = data.get(..18 + signer.len()).unwrap_or_default();
    let mut out = Vec::with_capacity(header.len() + key.signature_len());
    out.extend_from_slice(header);
    key.sign_into(data, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Algorithm;
    use crate::key::{verify, KeyRole};
    use tern_wire::rdata::{parse_str, Rdata};
    use tern_wire::Name;

    fn name(text: &str) -> Name {
        text.parse().unwrap()
    }

    #[test]
    fn labels_leave_out_a_wildcard_star() {
        assert_eq!(rrsig_labels(&name("a.b.example.")), 3);
        assert_eq!(rrsig_labels(&name("*.b.example.")), 2);
        assert_eq!(rrsig_labels(&name("example.")), 1);
        assert_eq!(rrsig_labels(&name(".")), 0);
    }

    /// Records in canonical order whatever order they come in, names in RDATA
    /// lower-cased for the types RFC 4034 §6.2 lists, duplicates once.
    #[test]
    fn rrset_in_canonical_form_and_order() {
        let owner = name("WWW.Example.");
        let mx = |t: &str| parse_str(Rtype::MX, t, None).unwrap();
        let rdatas = Rdatas::from(vec![
            mx("20 B.example."),
            mx("10 Z.example."),
            mx("10 a.EXAMPLE."),
            mx("20 b.example."),
        ]);
        let rrset = RrsetRef { owner: &owner, rtype: Rtype::MX, ttl: 300, rdatas: &rdatas };
        let mut scratch = Scratch::default();
        append_canonical_rrset(&rrset, &mut scratch).unwrap();
        let mut expect = Vec::new();
        for text in ["10 a.example.", "10 z.example.", "20 b.example."] {
            expect.extend_from_slice(b"\x03www\x07example\x00\x00\x0f\x00\x01\x00\x00\x01\x2c");
            let rdata = mx(text);
            expect.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
            expect.extend_from_slice(&rdata);
        }
        assert_eq!(scratch.data, expect);
    }

    #[test]
    fn signatures_verify_over_the_signed_data() {
        let owner = name("*.wild.example.");
        let signer = name("Example.");
        let list = vec![vec![192, 0, 2, 2], vec![192, 0, 2, 1]];
        let rdatas = Rdatas::from(list.clone());
        let rrset = RrsetRef { owner: &owner, rtype: Rtype::A, ttl: 3600, rdatas: &rdatas };
        let mut scratch = Scratch::default();
        for algorithm in [Algorithm::EcdsaP256Sha256, Algorithm::Ed25519, Algorithm::RsaSha512] {
            let key = SigningKey::generate(algorithm, KeyRole::Zsk).unwrap();
            let rrsig = sign_rrset(&rrset, &key, &signer, (1000, 2000), &mut scratch).unwrap();
            let Rdata::Rrsig(fields) = Rdata::from_wire(Rtype::RRSIG, &rrsig).unwrap() else {
                panic!("not an RRSIG")
            };
            assert_eq!(
                (fields.type_covered, fields.labels, fields.original_ttl),
                (Rtype::A, 2, 3600)
            );
            assert_eq!((fields.inception, fields.expiration), (1000, 2000));
            assert_eq!(fields.key_tag, key.key_tag());
            assert_eq!(fields.signer.as_wire(), b"\x07example\x00", "lower-cased");
            let data = signed_data(&rrset, &key, &signer, (1000, 2000), &mut scratch).unwrap();
            assert!(data.starts_with(&rrsig[..rrsig.len() - fields.signature.len()]));
            verify(key.dnskey(), data, &fields.signature).unwrap();
            let reordered = Rdatas::from(vec![list[1].clone(), list[0].clone(), list[1].clone()]);
            let same = RrsetRef { rdatas: &reordered, ..rrset };
            let data = signed_data(&same, &key, &signer, (1000, 2000), &mut scratch).unwrap();
            verify(key.dnskey(), data, &fields.signature).unwrap();
        }
    }
}
