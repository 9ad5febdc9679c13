//! The RRSIGs of a chunk of a zone's owners (whole-zone signing, [`crate::sign_zone`]),
//! made in two passes: first the data every signature of the chunk signs (RFC 4034
//! §3.1.8.1), one after another in one buffer — the only pass that reads the zone's
//! records — then the signatures, one after another, reading only that buffer. The
//! signing's own tables (ECDSA's precomputed points take about 150 KiB) then stay in the
//! cache from one signature to the next, as they do when the crypto library signs alone,
//! instead of being pushed out by the records read between two signatures.

use tern_wire::Dname;

use crate::error::{Error, Result};
use crate::key::SigningKey;
use crate::names::{Owner, Rdatas};
use crate::rrsig::{signed_data, RrsetRef, Scratch};
use crate::validity::Validity;
use crate::zone::signed_by_ksk_at;

/// One signature to make: where its RRset is in the chunk, the key, and where its signed
/// data ends in [`Batch::data`] (it starts where the one before ended).
#[derive(Debug, Clone, Copy)]
struct Job {
    owner: u32,
    rrset: u32,
    key: u32,
    end: usize,
}

/// Buffers kept from one chunk to the next by a signing thread.
#[derive(Debug, Default)]
pub struct Batch {
    scratch: Scratch,
    data: Vec<u8>,
    jobs: Vec<Job>,
    /// The chunk's owners with an RRset that is signed, by index.
    signed: Vec<u32>,
}

impl Batch {
    /// Signs every RRset of `owners` that is signed ([`crate::names::is_signed`]) with
    /// the keys that sign it, the RRSIGs put in place: how many were made.
    pub fn sign(
        &mut self,
        owners: &mut [Owner<'_>],
        keys: &[SigningKey],
        signer: &Dname,
        validity: &Validity,
    ) -> Result<usize> {
        self.prepare(owners, keys, signer, validity)?;
        let mut start = 0;
        for job in &self.jobs {
            let data = self.data.get(start..job.end).unwrap_or_default();
            start = job.end;
            let key = keys.get(job.key as usize).ok_or(Error::Keys("a key out of range"))?;
            // The signed data starts with the RRSIG RDATA up to the signature.
            let header = data.get(..header_len(signer)).unwrap_or_default();
            let rrset = owners
                .get_mut(job.owner as usize)
                .and_then(|o| o.rrsets.get_mut(job.rrset as usize))
                .ok_or(Error::Zone("an RRset out of range".into()))?;
            rrset.sigs.push_with(|rrsig| {
                rrsig.extend_from_slice(header);
                key.sign_into(data, rrsig)
            })?;
        }
        Ok(self.jobs.len())
    }

    /// Lists the owners with an RRset that is signed in [`Batch::signed`], and starts
    /// loading what the first [`AHEAD`] of them read. Most owners of a delegation-heavy
    /// zone sign nothing: the loads are started that many owners with signatures ahead,
    /// not that many owners.
    fn find_signed(&mut self, owners: &[Owner<'_>]) {
        let signs = |o: &&Owner<'_>| o.rrsets.iter().any(|r| o.kind.signs(r.rtype));
        let signed = owners.iter().enumerate().filter(|(_, o)| signs(o)).map(|(i, _)| i as u32);
        self.signed.clear();
        self.signed.extend(signed); // a chunk: a few dozen
        for &o in self.signed.iter().take(AHEAD) {
            prefetch_signed(owners.get(o as usize));
        }
    }

    /// The first pass: the signed data of every signature `owners` need, and each
    /// signed RRset's buffer of RRSIGs made exactly as long as it will be (a zone has
    /// millions of them).
    fn prepare(
        &mut self,
        owners: &mut [Owner<'_>],
        keys: &[SigningKey],
        signer: &Dname,
        validity: &Validity,
    ) -> Result<()> {
        self.data.clear();
        self.jobs.clear();
        self.find_signed(owners);
        for at in 0..self.signed.len() {
            if let Some(&ahead) = self.signed.get(at + AHEAD) {
                prefetch_signed(owners.get(ahead as usize));
            }
            let o = self.signed.get(at).map_or(usize::MAX, |&o| o as usize);
            let Some(owner) = owners.get_mut(o) else { break };
            let mut times = None; // read from the name only at an owner that is signed
            for (r, rrset) in owner.rrsets.iter_mut().enumerate() {
                if !owner.kind.signs(rrset.rtype) {
                    continue;
                }
                let times = *times.get_or_insert_with(|| {
                    (validity.inception(), validity.expiration_for(&owner.name))
                });
                let by_ksk = signed_by_ksk_at(owner.kind, rrset.rtype);
                let signs = |k: &&SigningKey| match by_ksk {
                    true => k.role().signs_keys(),
                    false => k.role().signs_zone(),
                };
                let room =
                    keys.iter().filter(signs).map(|k| 2 + header_len(signer) + k.signature_len());
                rrset.sigs = Rdatas::with_capacity(room.sum());
                let view = RrsetRef {
                    owner: &owner.name,
                    rtype: rrset.rtype,
                    ttl: rrset.ttl,
                    rdatas: &rrset.rdatas,
                };
                for (k, key) in keys.iter().enumerate().filter(|(_, k)| signs(k)) {
                    let data = signed_data(&view, key, signer, times, &mut self.scratch)?;
                    self.data.extend_from_slice(data);
                    let end = self.data.len();
                    self.jobs.push(Job { owner: o as u32, rrset: r as u32, key: k as u32, end });
                }
            }
        }
        Ok(())
    }
}

/// Owners with signatures [`Batch::prepare`] reads ahead of the one at hand.
const AHEAD: usize = 4;

/// Starts loading the name of `owner`, which has an RRset that is signed, and the
/// records of those: an owner of the zone borrows them from the loaded zone, where they
/// do not lie in the owners' order, so each would otherwise wait on its loads in turn.
fn prefetch_signed(owner: Option<&Owner<'_>>) {
    let Some(owner) = owner else { return };
    tern_zone::prefetch_address(owner.name.as_wire().as_ptr() as usize);
    let signed = owner.rrsets.iter().filter(|r| owner.kind.signs(r.rtype));
    signed.for_each(|r| tern_zone::prefetch_address(r.rdatas.address()));
}

/// The length of an RRSIG's RDATA before the signature (RFC 4034 §3.1): the fixed fields,
/// 18 bytes, and the signer's name.
fn header_len(signer: &Dname) -> usize {
    18 + signer.len()
}
