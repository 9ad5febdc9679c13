//! The NSEC chain (RFC 4034 §4, RFC 4035 §2.3): one NSEC record at every authoritative
//! name and delegation point, pointing at the next such name in canonical order, the
//! last back at the apex, with the types present at its owner plus RRSIG and NSEC.

use tern_wire::rdata::{Nsec, Rdata};
use tern_wire::{Name, Rtype};

use crate::names::{denial_types, Kind, Owner, Rrset};

/// True for owners in the NSEC chain: all but those below a zone cut.
pub fn in_chain(owner: &Owner<'_>) -> bool {
    owner.kind != Kind::Occluded
}

/// The NSEC bitmap types of `owner`: what is there (for a delegation, only NS and DS),
/// RRSIG (every chain member has a signed NSEC) and NSEC.
pub fn nsec_types(owner: &Owner<'_>) -> Vec<Rtype> {
    let mut types = denial_types(owner);
    types.extend([Rtype::RRSIG, Rtype::NSEC]);
    types
}

/// Adds an NSEC RRset with TTL `ttl` to every owner in the chain. `owners` are in
/// canonical order, the apex first.
pub fn add_chain(owners: &mut [Owner<'_>], ttl: u32) {
    let members: Vec<usize> =
        (0..owners.len()).filter(|&i| owners.get(i).is_some_and(in_chain)).collect();
    for (at, &i) in members.iter().enumerate() {
        let next = members.get(at + 1).or(members.first()).copied().unwrap_or(i);
        let Some(next) = owners.get(next).map(|o| o.name.to_name()) else { continue };
        let Some(owner) = owners.get_mut(i) else { continue };
        let rdata = nsec_rdata(next, owner);
        owner.insert(Rrset::new(Rtype::NSEC, ttl, vec![rdata]));
    }
}

/// The RDATA of `owner`'s NSEC record, `next` the next owner in the chain.
pub fn nsec_rdata(next: Name, owner: &Owner<'_>) -> Vec<u8> {
    Rdata::Nsec(Nsec { next, types: nsec_types(owner) }).to_wire_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::collect;
    use crate::testutil::zone;

    #[test]
    fn chain_order_and_bitmaps() {
        let z = zone(
            "example.",
            "@ SOA ns h 1 2 3 4 5\n@ NS ns\nns A 192.0.2.1\n*.w TXT x\n\
             sub NS ns.sub\nns.sub A 192.0.2.2\nsub DS 1 13 2 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF\n\
             ins NS ns.example.net.\na.b.ent MX 10 ns\n",
        );
        let mut owners = collect(&z, true).unwrap();
        add_chain(&mut owners, 300);
        let nsec: Vec<String> = owners
            .iter()
            .filter_map(|o| {
                let r = o.rrset(Rtype::NSEC)?;
                assert_eq!(r.ttl, 300);
                Some(format!(
                    "{} {}",
                    o.name,
                    tern_wire::rdata::to_text(Rtype::NSEC, r.rdatas.first().unwrap())
                ))
            })
            .collect();
        assert_eq!(
            nsec,
            [
                "example. a.b.ent.example. NS SOA RRSIG NSEC",
                "a.b.ent.example. ins.example. MX RRSIG NSEC",
                "ins.example. ns.example. NS RRSIG NSEC",
                "ns.example. sub.example. A RRSIG NSEC",
                "sub.example. *.w.example. NS DS RRSIG NSEC",
                "*.w.example. example. TXT RRSIG NSEC",
            ]
        );
        assert!(owners
            .iter()
            .find(|o| o.name.to_string() == "ns.sub.example.")
            .unwrap()
            .rrset(Rtype::NSEC)
            .is_none());
    }
}
